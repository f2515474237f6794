/* SPDX-License-Identifier: MIT */
/*
 * The InfiniBand Architecture's vocabulary, as smd reasons in it: the
 * spec's constants, the subnet management attributes as host-order structs,
 * directed-route paths, and the MTU, rate and VL encodings (IBA Vol 1 rel
 * 1.3, chapters 4, 13.4, 14 and 15). No byte order here: mad/ encodes and
 * decodes these, topo/ and db/ include only this.
 */
#ifndef SMD_IBA_IBA_H
#define SMD_IBA_IBA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAD_SIZE		256
#define SMP_DATA_SIZE		64
#define SMP_MAX_HOPS		63	/* IBA 14.2.2: hop count is 6 bits */

/* Management classes (IBA 13.4.4) */
#define MAD_CLASS_SMI		0x01
#define MAD_CLASS_SA		0x03
#define MAD_CLASS_PERF		0x04	/* performance management (IBA 16.1), GMPs to QP1 */
#define MAD_CLASS_SMI_DR	0x81

/* Methods (IBA 13.4.5) */
#define MAD_METHOD_GET		0x01
#define MAD_METHOD_SET		0x02
#define MAD_METHOD_GET_RESP	0x81
#define MAD_METHOD_TRAP		0x05
#define MAD_METHOD_TRAP_REPRESS	0x07
#define MAD_METHOD_RESP_BIT	0x80

/* MAD status bits (IBA 13.4.7, table 112) */
#define MAD_STATUS_BUSY			0x0001
#define MAD_STATUS_REDIRECT		0x0002
#define MAD_STATUS_BAD_VERSION		(1 << 2)
#define MAD_STATUS_METHOD_UNSUPP	(2 << 2)
#define MAD_STATUS_METHOD_ATTR_UNSUPP	(3 << 2)
#define MAD_STATUS_INVALID_FIELD	(7 << 2)
#define MAD_STATUS_CODE_MASK		0x001c

/* SMP attributes (IBA 14.2.5, table 145) */
#define SMP_ATTR_NODE_DESC	0x0010
#define SMP_ATTR_NODE_INFO	0x0011
#define SMP_ATTR_SWITCH_INFO	0x0012
#define SMP_ATTR_GUID_INFO	0x0014
#define SMP_ATTR_PORT_INFO	0x0015
#define SMP_ATTR_PKEY_TABLE	0x0016
#define SMP_ATTR_SL2VL_TABLE	0x0017
#define SMP_ATTR_VL_ARB_TABLE	0x0018
#define SMP_ATTR_LFT		0x0019
#define SMP_ATTR_MFT		0x001b
#define SMP_ATTR_SM_INFO	0x0020
#define SMP_ATTR_NOTICE		0x0002
/*
 * Mellanox's vendor SMP attribute ExtendedPortInfo (the IBA leaves
 * 0xFF00-0xFFFF to vendors): the one place a port says it runs FDR10
 */
#define SMP_ATTR_MLNX_EXT_PORT_INFO	0xff90

/* NodeInfo.NodeType (IBA 14.2.5.3) */
#define NODE_TYPE_CA		1
#define NODE_TYPE_SWITCH	2
#define NODE_TYPE_ROUTER	3

/* PortInfo.PortState and PortPhysicalState (IBA 14.2.5.6, table 155) */
#define PORT_STATE_NOP		0
#define PORT_STATE_DOWN		1
#define PORT_STATE_INIT		2
#define PORT_STATE_ARMED	3
#define PORT_STATE_ACTIVE	4
#define PHYS_STATE_LINKUP	5

/* Unicast LIDs (IBA 4.1.3) */
#define LID_UCAST_MIN		0x0001
#define LID_UCAST_MAX		0xbfff
#define LID_PERMISSIVE		0xffff
#define LFT_BLOCK_SIZE		64
#define LFT_PORT_NONE		0xff	/* IBA 14.2.5.10: not a valid port */
#define LFT_MAX_BLOCKS		((LID_UCAST_MAX + 1) / LFT_BLOCK_SIZE)
/* Multicast LIDs (IBA 4.1.3): 0xffff is the permissive LID, not a group */
#define LID_MCAST_MIN		0xc000
#define LID_MCAST_MAX		0xfffe
#define MLID_COUNT		(LID_MCAST_MAX - LID_MCAST_MIN + 1)

/* A directed route: exit ports path[1..hops] from the SM's port */
struct dr_path {
	uint8_t hops;
	uint8_t port[SMP_MAX_HOPS + 1];
};

struct node_info {
	uint8_t base_version;
	uint8_t class_version;
	uint8_t node_type;
	uint8_t num_ports;
	uint64_t sys_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	uint16_t partition_cap;
	uint16_t device_id;
	uint32_t revision;
	uint8_t local_port;
	uint32_t vendor_id;
};

struct node_desc {
	char desc[SMP_DATA_SIZE + 1];	/* NUL terminated, non-printables replaced */
};

struct switch_info {
	uint16_t lft_cap;
	uint16_t rft_cap;
	uint16_t mft_cap;
	uint16_t lft_top;
	uint8_t default_port;
	uint8_t default_mcast_primary_port;
	uint8_t default_mcast_not_primary_port;
	uint8_t life_time_value;
	uint8_t port_state_change;
	uint8_t optimized_sl2vl;
	uint16_t lids_per_port;
	uint16_t partition_enf_cap;
	uint8_t inbound_enf_cap;
	uint8_t outbound_enf_cap;
	uint8_t filter_raw_inbound_cap;
	uint8_t filter_raw_outbound_cap;
	uint8_t enhanced_port0;
	uint16_t mft_top;
};

struct port_info {
	uint64_t mkey;
	uint64_t gid_prefix;
	uint16_t lid;
	uint16_t master_sm_lid;
	uint32_t cap_mask;
	uint16_t diag_code;
	uint16_t mkey_lease_period;
	uint8_t local_port;
	uint8_t link_width_enabled;
	uint8_t link_width_supported;
	uint8_t link_width_active;
	uint8_t link_speed_supported;
	uint8_t port_state;
	uint8_t phys_state;
	uint8_t link_down_default_state;
	uint8_t mkey_protect_bits;
	uint8_t lmc;
	uint8_t link_speed_active;
	uint8_t link_speed_enabled;
	uint8_t neighbor_mtu;
	uint8_t master_sm_sl;
	uint8_t vl_cap;
	uint8_t init_type;
	uint8_t vl_high_limit;
	uint8_t vl_arb_high_cap;
	uint8_t vl_arb_low_cap;
	uint8_t init_type_reply;
	uint8_t mtu_cap;
	uint8_t vl_stall_count;
	uint8_t hoq_life;
	uint8_t op_vls;
	uint8_t pkey_enf_inbound;
	uint8_t pkey_enf_outbound;
	uint8_t filter_raw_inbound;
	uint8_t filter_raw_outbound;
	uint16_t mkey_violations;
	uint16_t pkey_violations;
	uint16_t qkey_violations;
	uint8_t guid_cap;
	uint8_t client_reregister;
	uint8_t mcast_pkey_trap_suppr;
	uint8_t subnet_timeout;
	uint8_t resp_time_value;
	uint8_t local_phy_errors;
	uint8_t overrun_errors;
	uint16_t max_credit_hint;
	uint32_t link_round_trip_latency;
	uint16_t cap_mask2;
	uint8_t link_speed_ext_active;
	uint8_t link_speed_ext_supported;
	uint8_t link_speed_ext_enabled;
	/* IBA 1.7: XDR; valid when CapabilityMask2.IsExtendedSpeeds2Supported */
	uint8_t link_speed_ext_active2;
	uint8_t link_speed_ext_supported2;
	uint8_t link_speed_ext_enabled2;
};

/* PortInfo.CapabilityMask bits (IBA 14.2.5.6, table 156) */
#define PORT_CAP_IS_SM		(1u << 1)
#define PORT_CAP_EXT_SPEEDS	(1u << 14)	/* IsExtendedSpeedsSupported */
#define PORT_CAP_CAP_MASK2	(1u << 15)	/* IsCapabilityMask2Supported */
#define PORT_CAP_CLIENT_REREG	(1u << 25)	/* IsClientReregistrationSupported */
/* PortInfo.CapabilityMask2 (IBA 1.7; libibmad iba_types.h names the same bits) */
#define PORT_CAP2_EXT_SPEEDS2	(1u << 11)	/* IsExtendedSpeeds2Supported */
#define PORT_CAP2_XDR		(1u << 12)	/* IsLinkSpeedXDRSupported */

/* SMInfo: IBA 14.2.5.13 */
#define SM_STATE_NOT_ACTIVE	0
#define SM_STATE_DISCOVERING	1
#define SM_STATE_STANDBY	2
#define SM_STATE_MASTER		3

struct sm_info {
	uint64_t guid;
	uint64_t sm_key;
	uint32_t act_count;
	uint8_t priority;
	uint8_t sm_state;
};

struct lft_block {
	uint8_t port[LFT_BLOCK_SIZE];
};

/* MulticastForwardingTable blocks (IBA 14.2.5.12): 32 MLIDs by 16 ports */
#define MFT_BLOCK_SIZE		32
#define MFT_POSITION_PORTS	16
#define MFT_MAX_BLOCKS		(MLID_COUNT / MFT_BLOCK_SIZE + 1)
#define MFT_MAX_POSITIONS	16
struct mft_block {
	uint16_t mask[MFT_BLOCK_SIZE];
};

/* VLArbitrationTable blocks (IBA 14.2.5.9) */
#define VL_ARB_BLOCK_SIZE	32
#define VL_ARB_LOW_0_31		1
#define VL_ARB_LOW_32_63	2
#define VL_ARB_HIGH_0_31	3
#define VL_ARB_HIGH_32_63	4
struct vl_arb_entry {
	uint8_t vl;
	uint8_t weight;		/* units of 64 bytes; 0: the entry is skipped */
};

/* Directed routes (IBA 14.2.2): exit ports from the SM's port */
int dr_path_extend(const struct dr_path *from, uint8_t port, struct dr_path *to);
int dr_path_format(const struct dr_path *p, char *buf, size_t len);

/* MTU and VL encodings (IBA 14.2.5.6) to numbers */
unsigned int mtu_to_bytes(uint8_t mtu);
unsigned int vl_cap_to_count(uint8_t vl_cap);

/*
 * GIDs (IBA 4.1.1) are 16-byte strings by definition, the one layout this
 * module knows: a 64-bit subnet prefix then the interface ID (the port
 * GUID), most significant byte first. A multicast GID: 0xff, flags and
 * scope, a 16-bit signature (0x401b IPv4 over IB, 0x601b IPv6, 0xa01b an
 * SA's own), the P_Key, 16 zero bits, then 64 bits of group ID.
 */
void gid_encode(uint64_t prefix, uint64_t guid, uint8_t gid[16]);
void gid_decode(const uint8_t gid[16], uint64_t *prefix, uint64_t *guid);
void iba_mgid_make(uint8_t flags, uint8_t scope, uint16_t signature, uint16_t pkey,
		   uint64_t group, uint8_t mgid[16]);
/* -EINVAL when mgid is not a multicast GID (no 0xff first) */
int iba_mgid_parse(const uint8_t mgid[16], uint8_t *flags, uint8_t *scope, uint16_t *signature);

/*
 * Link speeds, slowest first: what a port's lanes run at, from
 * LinkSpeedActive (SDR, DDR, QDR), LinkSpeedExtActive (FDR, EDR, HDR, NDR),
 * LinkSpeedExtActive2 (XDR, IBA 1.7) and, where a Mellanox port says so in
 * its vendor ExtendedPortInfo, FDR10 (QDR's lane rate with 64b/66b coding).
 */
enum iba_speed {
	IBA_SPEED_NONE, IBA_SPEED_SDR, IBA_SPEED_DDR, IBA_SPEED_QDR, IBA_SPEED_FDR10,
	IBA_SPEED_FDR, IBA_SPEED_EDR, IBA_SPEED_HDR, IBA_SPEED_NDR, IBA_SPEED_XDR,
};
/*
 * The speed port pi runs at. caps: the PortInfo whose CapabilityMask and
 * CapabilityMask2 say which speed fields are valid (the port itself; a
 * switch's port 0 for its external ports, whose CapabilityMask is
 * reserved); fdr10: its ExtendedPortInfo says FDR10 is active.
 */
enum iba_speed iba_speed_active(const struct port_info *pi, const struct port_info *caps,
				bool fdr10);
/* "SDR" ... "XDR", as ibnetdiscover names them; "" for NONE (none, or unknown to smd) */
/*
 * Mellanox ExtendedPortInfo (SMP_ATTR_MLNX_EXT_PORT_INFO; its layout as
 * rdma-core's libibmad gives it): StateChangeEnable, LinkSpeedSupported,
 * LinkSpeedEnabled, LinkSpeedActive, each bit 0 FDR10
 */
struct mlnx_ext_port_info {
	uint8_t state_change_enable;
	uint8_t link_speed_supported;
	uint8_t link_speed_enabled;
	uint8_t link_speed_active;
};
#define MLNX_EXT_SPEED_FDR10	0x01
/*
 * Whether a node of this vendor and device ID answers ExtendedPortInfo:
 * the Mellanox devices of FDR10's time and after (SwitchX, ConnectX-3 on),
 * and their Bull OEM versions, as OpenSM and ibnetdiscover list them
 */
bool iba_has_mlnx_ext_port_info(uint32_t vendor_id, uint16_t device_id);
const char *iba_speed_name(enum iba_speed s);
/* Lanes of a LinkWidthActive value (1x 1, 2x 2, 4x 4, 8x 8, 12x 12; 0: not a width) */
unsigned int iba_width_lanes(uint8_t width_active);

/*
 * Rates (IBA 15.2.5.16, PathRecord Rate, with the codes IBA 1.4-1.7 added):
 * the codes in Gb/s * 10 for comparisons (0 if invalid), and the fastest
 * code not above what a link of this width and speed carries. IBA_RATE_MAX
 * is the fastest code there is (for a path to itself).
 */
#define IBA_RATE_MAX	25	/* 1600 Gb/s */
unsigned int iba_rate_to_dgbps(uint8_t rate);
uint8_t iba_rate_from_link(uint8_t width_active, enum iba_speed speed);

/*
 * Performance management (IBA 16.1): every node's PMA answers LID-routed
 * GMPs of class MAD_CLASS_PERF on QP1, class version 1. A switch's PMA
 * answers for each of its ports (PortSelect), a CA port's for itself.
 */
#define PMA_CLASS_VERSION		1
#define PMA_ATTR_CLASS_PORT_INFO	0x0001
#define PMA_ATTR_PORT_COUNTERS		0x0012	/* IBA 16.1.3.5 */
#define PMA_ATTR_PORT_COUNTERS_EXT	0x001d	/* IBA 16.1.4.11 */
/* A PMA's ClassPortInfo.CapabilityMask (PerfMgt; libibmad's IB_PM_* name the same bits) */
#define PMA_CAP_ALL_PORT_SELECT		(1u << 8)
#define PMA_CAP_EXT_WIDTH		(1u << 9)	/* PortCountersExtended */
#define PMA_CAP_EXT_WIDTH_NOIETF	(1u << 10)	/* ... without its unicast/multicast counters */
#define PMA_CAP_XMIT_WAIT		(1u << 12)	/* PortCounters.PortXmitWait */

/* ClassPortInfo (IBA 13.4.8.1): the part a performance manager reads */
struct pma_class_port_info {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t cap_mask;
	uint32_t cap_mask2;		/* 27 bits */
	uint8_t resp_time_value;	/* 5 bits: 4.096 us * 2^value */
};

/*
 * PortCounters (IBA 16.1.3.5). The counters saturate: they stop at all
 * ones and never wrap. PortXmitData and PortRcvData count 4-byte words.
 */
struct pma_port_counters {
	uint8_t port_select;
	uint16_t counter_select;	/* a Set: the counters it writes (PMA_CS_*) */
	uint16_t symbol_errors;
	uint8_t link_error_recovery;
	uint8_t link_downed;
	uint16_t rcv_errors;
	uint16_t rcv_remote_phys_errors;
	uint16_t rcv_switch_relay_errors;
	uint16_t xmit_discards;
	uint8_t xmit_constraint_errors;
	uint8_t rcv_constraint_errors;
	uint8_t counter_select2;	/* bit 0: PortXmitWait */
	uint8_t local_link_integrity_errors;	/* 4 bits */
	uint8_t excessive_buffer_overrun_errors;	/* 4 bits */
	uint16_t vl15_dropped;
	uint32_t xmit_data;
	uint32_t rcv_data;
	uint32_t xmit_pkts;
	uint32_t rcv_pkts;
	uint32_t xmit_wait;
};

/* PortCounters.CounterSelect (IBA 16.1.3.5): the counters a Set writes */
#define PMA_CS_SYMBOL_ERRORS		(1u << 0)
#define PMA_CS_LINK_ERROR_RECOVERY	(1u << 1)
#define PMA_CS_LINK_DOWNED		(1u << 2)
#define PMA_CS_RCV_ERRORS		(1u << 3)
#define PMA_CS_RCV_REMOTE_PHYS_ERRORS	(1u << 4)
#define PMA_CS_RCV_SWITCH_RELAY_ERRORS	(1u << 5)
#define PMA_CS_XMIT_DISCARDS		(1u << 6)
#define PMA_CS_XMIT_CONSTRAINT_ERRORS	(1u << 7)
#define PMA_CS_RCV_CONSTRAINT_ERRORS	(1u << 8)
#define PMA_CS_LOCAL_LINK_INTEGRITY	(1u << 9)
#define PMA_CS_EXCESSIVE_BUFFER_OVERRUN	(1u << 10)
#define PMA_CS_VL15_DROPPED		(1u << 11)
#define PMA_CS_XMIT_DATA		(1u << 12)
#define PMA_CS_RCV_DATA			(1u << 13)
#define PMA_CS_XMIT_PKTS		(1u << 14)
#define PMA_CS_RCV_PKTS			(1u << 15)
#define PMA_CS2_XMIT_WAIT		(1u << 0)

/* PortCountersExtended (IBA 16.1.4.11): 64-bit data and packet counters */
struct pma_port_counters_ext {
	uint8_t port_select;
	uint16_t counter_select;
	uint64_t xmit_data;
	uint64_t rcv_data;
	uint64_t xmit_pkts;
	uint64_t rcv_pkts;
	uint64_t unicast_xmit_pkts;
	uint64_t unicast_rcv_pkts;
	uint64_t multicast_xmit_pkts;
	uint64_t multicast_rcv_pkts;
};

#endif
