/* SPDX-License-Identifier: MIT */
/*
 * Every byte smd puts on or takes off the wire: MAD and SMP headers and the
 * subnet management attributes, as host-order structs with encoders and
 * decoders. Nothing outside mad/ knows the byte order. Field offsets follow
 * IBA Vol 1 rel 1.3, chapter 14 (SMPs) and chapter 13.4 (MAD header).
 */
#ifndef SMD_MAD_WIRE_H
#define SMD_MAD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAD_SIZE		256
#define SMP_DATA_SIZE		64
#define SMP_MAX_HOPS		63	/* IBA 14.2.2: hop count is 6 bits */

/* Management classes (IBA 13.4.4) */
#define MAD_CLASS_SMI		0x01
#define MAD_CLASS_SA		0x03
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

/* The common MAD header (IBA 13.4.3, figure 144), host order */
struct mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;	/* for DR SMPs: the 15 status bits only */
	bool direction;		/* DR SMPs: D bit (1 = returning) */
	uint8_t hop_ptr;	/* DR SMPs */
	uint8_t hop_cnt;	/* DR SMPs */
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* A subnet management packet, LID routed or directed route (IBA 14.2.1) */
struct smp {
	struct mad_hdr hdr;
	uint64_t mkey;
	uint16_t dr_slid;
	uint16_t dr_dlid;
	uint8_t data[SMP_DATA_SIZE];
	uint8_t initial_path[SMP_MAX_HOPS + 1];
	uint8_t return_path[SMP_MAX_HOPS + 1];
};

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
};

/* PortInfo.CapabilityMask bits (IBA 14.2.5.6, table 156) */
#define PORT_CAP_IS_SM		(1u << 1)
#define PORT_CAP_CLIENT_REREG	(1u << 25)	/* IsClientReregistrationSupported */

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

/* A GID (IBA 4.1.1): 64-bit subnet prefix then interface ID (the port GUID), big-endian */
void gid_encode(uint64_t prefix, uint64_t guid, uint8_t gid[16]);
void gid_decode(const uint8_t gid[16], uint64_t *prefix, uint64_t *guid);

/* Raw bit-field access in IBA's numbering: bit 0 is the MSB of byte 0. */
uint64_t wire_bits_get(const uint8_t *buf, unsigned int bitoff, unsigned int width);
void wire_bits_set(uint8_t *buf, unsigned int bitoff, unsigned int width, uint64_t val);

/*
 * smp_decode() accepts exactly one whole MAD of an SMP class (LID routed or
 * directed route) and version 1; -EBADMSG for anything else. smp_encode()
 * writes MAD_SIZE bytes.
 */
int smp_encode(const struct smp *smp, uint8_t buf[MAD_SIZE]);
int smp_decode(const uint8_t *buf, size_t len, struct smp *smp);
/* Peek at the class and TID of any MAD without trusting the rest */
int mad_peek(const uint8_t *buf, size_t len, uint8_t *mgmt_class, uint8_t *method,
	     uint64_t *tid);

/* Build requests: a directed-route SMP (DrSLID = DrDLID = permissive) */
int smp_init_dr(struct smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
		const struct dr_path *path);
int smp_init_lid(struct smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod);
/* -EPROTO for a DR response that is not a valid answer to req */
int smp_check_response(const struct smp *req, const struct smp *resp);

int dr_path_extend(const struct dr_path *from, uint8_t port, struct dr_path *to);
int dr_path_format(const struct dr_path *p, char *buf, size_t len);

int node_info_decode(const uint8_t data[SMP_DATA_SIZE], struct node_info *ni);
void node_info_encode(const struct node_info *ni, uint8_t data[SMP_DATA_SIZE]);
int node_desc_decode(const uint8_t data[SMP_DATA_SIZE], struct node_desc *nd);
void node_desc_encode(const struct node_desc *nd, uint8_t data[SMP_DATA_SIZE]);
int switch_info_decode(const uint8_t data[SMP_DATA_SIZE], struct switch_info *si);
void switch_info_encode(const struct switch_info *si, uint8_t data[SMP_DATA_SIZE]);
int port_info_decode(const uint8_t data[SMP_DATA_SIZE], struct port_info *pi);
void port_info_encode(const struct port_info *pi, uint8_t data[SMP_DATA_SIZE]);
/* SLtoVLMappingTable: IBA 14.2.5.8, 16 4-bit VLs, SL0 first */
void sl2vl_table_decode(const uint8_t data[SMP_DATA_SIZE], uint8_t vl[16]);
void sl2vl_table_encode(const uint8_t vl[16], uint8_t data[SMP_DATA_SIZE]);
/*
 * SLtoVLMappingTable attribute modifier (IBA 14.2.5.8): on a switch the
 * output port in bits 0-7 and the input port in bits 8-15 (0 for a CA port).
 * A switch that sets OptimizedSLtoVLMappingProgramming in SwitchInfo (IBA
 * 14.2.5.4) also takes bit 16, "every output port", and bit 17, "every
 * input port": one Set then programs a whole row, column or switch.
 */
#define SL2VL_AMOD_ALL_OUT	(UINT32_C(1) << 16)
#define SL2VL_AMOD_ALL_IN	(UINT32_C(1) << 17)
uint32_t sl2vl_amod(unsigned int in, unsigned int out, bool all_in, bool all_out);
/* Whether a switch takes SL2VL_AMOD_ALL_IN/OUT (the low bit of the 2-bit field) */
bool switch_info_opt_sl2vl(const struct switch_info *si);
/*
 * VLArbitrationTable: IBA 14.2.5.9. One attribute is a block of 32 entries;
 * the modifier names the block (VL_ARB_*) in bits 16-31 and, on a switch,
 * the output port in bits 0-15. Entries past the port's VLArbLowCap/HighCap
 * are ignored.
 */
#define VL_ARB_BLOCK_SIZE	32
#define VL_ARB_LOW_0_31		1
#define VL_ARB_LOW_32_63	2
#define VL_ARB_HIGH_0_31	3
#define VL_ARB_HIGH_32_63	4
struct vl_arb_entry {
	uint8_t vl;
	uint8_t weight;		/* units of 64 bytes; 0: the entry is skipped */
};
void vl_arb_block_decode(const uint8_t data[SMP_DATA_SIZE],
			 struct vl_arb_entry e[VL_ARB_BLOCK_SIZE]);
void vl_arb_block_encode(const struct vl_arb_entry e[VL_ARB_BLOCK_SIZE],
			 uint8_t data[SMP_DATA_SIZE]);
/* P_KeyTable block: IBA 14.2.5.7, 32 16-bit entries */
void pkey_block_decode(const uint8_t data[SMP_DATA_SIZE], uint16_t pkeys[32]);
void pkey_block_encode(const uint16_t pkeys[32], uint8_t data[SMP_DATA_SIZE]);
int sm_info_decode(const uint8_t data[SMP_DATA_SIZE], struct sm_info *si);
void sm_info_encode(const struct sm_info *si, uint8_t data[SMP_DATA_SIZE]);
/*
 * Turn a decoded request into its GetResp in place (IBA 13.4.5, and
 * 14.2.2.2 for the directed-route return trip): method, D bit, status.
 */
void smp_make_response(struct smp *smp, uint16_t status);
void lft_block_decode(const uint8_t data[SMP_DATA_SIZE], struct lft_block *b);
void lft_block_encode(const struct lft_block *b, uint8_t data[SMP_DATA_SIZE]);
/*
 * MulticastForwardingTable: IBA 14.2.5.12. One attribute holds 32 MLIDs
 * (a block) times 16 ports (a position): bit i of entry k is port
 * 16 * position + i for MLID 0xc000 + 32 * block + k. The modifier carries
 * the position in bits 28-31 and the block in bits 0-8.
 */
#define MFT_BLOCK_SIZE		32
#define MFT_POSITION_PORTS	16
#define MFT_MAX_BLOCKS		(MLID_COUNT / MFT_BLOCK_SIZE + 1)
#define MFT_MAX_POSITIONS	16
struct mft_block {
	uint16_t mask[MFT_BLOCK_SIZE];
};
static inline uint32_t mft_amod(uint32_t block, uint32_t position)
{
	return (position & 0xf) << 28 | (block & 0x1ff);
}
void mft_block_decode(const uint8_t data[SMP_DATA_SIZE], struct mft_block *b);
void mft_block_encode(const struct mft_block *b, uint8_t data[SMP_DATA_SIZE]);

/* MTU and VL encodings (IBA 14.2.5.6) to numbers */
unsigned int mtu_to_bytes(uint8_t mtu);
unsigned int vl_cap_to_count(uint8_t vl_cap);

#endif
