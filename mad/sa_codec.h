/* SPDX-License-Identifier: MIT */
/*
 * Subnet Administration wire formats (IBA 15.2): the SA MAD header, the
 * RMPP header (IBA 13.6.2), and the records smd serves. Records are built
 * and matched as bytes here, so that only mad/ knows their layout; every
 * record type has a field table in component-mask order (IBA 15.2.5).
 */
#ifndef SMD_MAD_SA_CODEC_H
#define SMD_MAD_SA_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"

#define SA_CLASS_VERSION	2
#define SA_HDR_SIZE		56	/* MAD 24 + RMPP 12 + SA 20 */
#define SA_DATA_SIZE		200	/* record bytes per MAD or RMPP segment */

/* Record sizes, bytes (IBA 15.2.5, each record's table) */
#define NODE_RECORD_SIZE	108
#define PORT_INFO_RECORD_SIZE	68
#define SL2VL_RECORD_SIZE	16
#define SWITCH_INFO_RECORD_SIZE	24
#define LFT_RECORD_SIZE		72
#define MFT_RECORD_SIZE		72
#define VLARB_RECORD_SIZE	72
#define SM_INFO_RECORD_SIZE	25
#define PKEY_RECORD_SIZE	72
#define LINK_RECORD_SIZE	8
#define PATH_RECORD_SIZE	64
#define GUID_INFO_RECORD_SIZE	72
#define CLASS_PORT_INFO_SIZE	72	/* IBA 13.4.8.1 */
#define RMPP_SEG_PAYLOAD	220	/* per-segment payload counted by PayloadLength */

/* SA methods (IBA 15.2.2, table 186) */
#define SA_METHOD_GET		0x01
#define SA_METHOD_SET		0x02
#define SA_METHOD_GET_RESP	0x81
#define SA_METHOD_REPORT	0x06
#define SA_METHOD_REPORT_RESP	0x86
#define SA_METHOD_GET_TABLE	0x12
#define SA_METHOD_GET_TABLE_RESP 0x92
#define SA_METHOD_GET_TRACE_TABLE 0x13	/* IBA 15.2.2: not served (METHOD_UNSUPP) */
#define SA_METHOD_GET_MULTI	0x14
#define SA_METHOD_GET_MULTI_RESP 0x94
#define SA_METHOD_DELETE	0x15
#define SA_METHOD_DELETE_RESP	0x95

/* SA attributes (IBA 15.2.5, table 187) */
#define SA_ATTR_CLASS_PORT_INFO	0x0001
#define SA_ATTR_NOTICE		0x0002
#define SA_ATTR_INFORM_INFO	0x0003
#define SA_ATTR_NODE_RECORD	0x0011
#define SA_ATTR_PORT_INFO_RECORD 0x0012
#define SA_ATTR_SL2VL_RECORD	0x0013
#define SA_ATTR_SWITCH_INFO_RECORD 0x0014
#define SA_ATTR_LFT_RECORD	0x0015
#define SA_ATTR_MFT_RECORD	0x0017
#define SA_ATTR_SM_INFO_RECORD	0x0018
#define SA_ATTR_LINK_RECORD	0x0020
#define SA_ATTR_GUID_INFO_RECORD 0x0030
#define SA_ATTR_SERVICE_RECORD	0x0031
#define SA_ATTR_PKEY_RECORD	0x0033
#define SA_ATTR_PATH_RECORD	0x0035
#define SA_ATTR_VLARB_RECORD	0x0036
#define SA_ATTR_MCMEMBER_RECORD	0x0038
#define SA_ATTR_MULTIPATH_RECORD 0x003a
#define SA_ATTR_INFORM_INFO_RECORD 0x00f3

/* SA class-specific status (IBA 15.2.1.1, table 184), in MAD status bits 8-15 */
#define SA_STATUS_NO_RESOURCES	0x0100
#define SA_STATUS_REQ_INVALID	0x0200
#define SA_STATUS_NO_RECORDS	0x0300
#define SA_STATUS_TOO_MANY	0x0400
#define SA_STATUS_INVALID_GID	0x0500
#define SA_STATUS_INSUFFICIENT	0x0600
#define SA_STATUS_DENIED	0x0700

/* RMPP (IBA 13.6.2.1) */
#define RMPP_TYPE_DATA		1
#define RMPP_TYPE_ACK		2
#define RMPP_TYPE_STOP		3
#define RMPP_TYPE_ABORT		4
#define RMPP_FLAG_ACTIVE	0x01
#define RMPP_FLAG_FIRST		0x02
#define RMPP_FLAG_LAST		0x04
#define RMPP_VERSION		1
#define RMPP_RESP_TIME_NONE	0x1f	/* RRespTime: no time value given */
/*
 * RMPPStatus (IBA 13.6.2.1; the Linux kernel's include/rdma/ib_mad.h has the
 * same numbers): 0 in DATA and ACK, RESX in a STOP, 118-127 in an ABORT
 */
#define RMPP_STATUS_OK		0
#define RMPP_STATUS_RESX	1	/* STOP: resources exhausted */
#define RMPP_STATUS_T2L		118	/* ABORT: total time too long */
#define RMPP_STATUS_BAD_LEN	119	/* inconsistent Last and PayloadLength */
#define RMPP_STATUS_BAD_SEG	120	/* inconsistent First and SegmentNumber */
#define RMPP_STATUS_BADT	121	/* illegal RMPPType */
#define RMPP_STATUS_W2S		122	/* NewWindowLast too small */
#define RMPP_STATUS_S2B		123	/* SegmentNumber too big */
#define RMPP_STATUS_BAD_STATUS	124	/* illegal status */
#define RMPP_STATUS_UNV		125	/* unsupported RMPPVersion */
#define RMPP_STATUS_TMR		126	/* too many retries */
#define RMPP_STATUS_UNSPEC	127	/* unspecified */
#define RMPP_STATUS_ABORT_MIN	RMPP_STATUS_T2L
#define RMPP_STATUS_ABORT_MAX	RMPP_STATUS_UNSPEC

struct rmpp_hdr {
	uint8_t version;
	uint8_t type;
	uint8_t resp_time;	/* 5 bits */
	uint8_t flags;		/* 3 bits */
	uint8_t status;
	uint32_t data1;		/* DATA: SegmentNumber; ACK: SegmentNumber */
	uint32_t data2;		/* DATA: PayloadLength; ACK: NewWindowLast */
};

struct sa_mad {
	struct mad_hdr hdr;
	struct rmpp_hdr rmpp;
	uint64_t sm_key;
	uint16_t attr_offset;	/* record size in 8-byte words */
	uint64_t comp_mask;
	uint8_t data[SA_DATA_SIZE];
};

/* 0, or -EBADMSG: not a MAD of class 0x03 of 56..256 bytes (missing data reads as 0) */
int sa_mad_decode(const uint8_t *buf, size_t len, struct sa_mad *m);
int sa_mad_encode(const struct sa_mad *m, uint8_t buf[MAD_SIZE]);
/* A request (or a Report) of the SA class: zeroed, then its header fields */
void sa_mad_init(struct sa_mad *m, uint8_t method, uint16_t attr, uint64_t mask, uint64_t tid);

/* PathRecord (IBA 15.2.5.16, table 209) */
struct path_record {
	uint64_t service_id;
	uint8_t dgid[16];
	uint8_t sgid[16];
	uint16_t dlid;
	uint16_t slid;
	uint8_t raw_traffic;
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t reversible;
	uint8_t numb_path;
	uint16_t pkey;
	uint16_t qos_class;
	uint8_t sl;
	uint8_t mtu_selector;
	uint8_t mtu;
	uint8_t rate_selector;
	uint8_t rate;
	uint8_t plt_selector;
	uint8_t packet_life_time;
	uint8_t preference;
};

/* PathRecord component mask bits (IBA 15.2.5.16) */
#define PR_CM_SERVICE_ID	(UINT64_C(3) << 0)	/* two bits: upper and lower half */
#define PR_CM_DGID		(UINT64_C(1) << 2)
#define PR_CM_SGID		(UINT64_C(1) << 3)
#define PR_CM_DLID		(UINT64_C(1) << 4)
#define PR_CM_SLID		(UINT64_C(1) << 5)
#define PR_CM_RAW_TRAFFIC	(UINT64_C(1) << 6)
#define PR_CM_FLOW_LABEL	(UINT64_C(1) << 8)
#define PR_CM_HOP_LIMIT		(UINT64_C(1) << 9)
#define PR_CM_TCLASS		(UINT64_C(1) << 10)
#define PR_CM_REVERSIBLE	(UINT64_C(1) << 11)
#define PR_CM_NUMB_PATH		(UINT64_C(1) << 12)
#define PR_CM_PKEY		(UINT64_C(1) << 13)
#define PR_CM_QOS_CLASS		(UINT64_C(1) << 14)
#define PR_CM_SL		(UINT64_C(1) << 15)
#define PR_CM_MTU_SELECTOR	(UINT64_C(1) << 16)
#define PR_CM_MTU		(UINT64_C(1) << 17)
#define PR_CM_RATE_SELECTOR	(UINT64_C(1) << 18)
#define PR_CM_RATE		(UINT64_C(1) << 19)
#define PR_CM_PLT_SELECTOR	(UINT64_C(1) << 20)
#define PR_CM_PLT		(UINT64_C(1) << 21)
#define PR_CM_PREFERENCE	(UINT64_C(1) << 22)
#define PR_CM_ALL		((UINT64_C(1) << 24) - 1)

#define SA_SELECTOR_GT		0
#define SA_SELECTOR_LT		1
#define SA_SELECTOR_EQ		2
#define SA_SELECTOR_BEST	3

void path_record_encode(const struct path_record *pr, uint8_t out[PATH_RECORD_SIZE]);
void path_record_decode(const uint8_t in[PATH_RECORD_SIZE], struct path_record *pr);

/* MCMemberRecord (IBA 15.2.5.17, table 213) */
struct mc_member_record {
	uint8_t mgid[16];
	uint8_t port_gid[16];
	uint32_t qkey;
	uint16_t mlid;
	uint8_t mtu_selector;
	uint8_t mtu;
	uint8_t tclass;
	uint16_t pkey;
	uint8_t rate_selector;
	uint8_t rate;
	uint8_t plt_selector;
	uint8_t packet_life_time;
	uint8_t sl;
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t scope;
	uint8_t join_state;
	uint8_t proxy_join;
};

/* MCMemberRecord component mask bits, in field order */
#define MCR_CM_MGID		(UINT64_C(1) << 0)
#define MCR_CM_PORT_GID		(UINT64_C(1) << 1)
#define MCR_CM_QKEY		(UINT64_C(1) << 2)
#define MCR_CM_MLID		(UINT64_C(1) << 3)
#define MCR_CM_MTU_SELECTOR	(UINT64_C(1) << 4)
#define MCR_CM_MTU		(UINT64_C(1) << 5)
#define MCR_CM_TCLASS		(UINT64_C(1) << 6)
#define MCR_CM_PKEY		(UINT64_C(1) << 7)
#define MCR_CM_RATE_SELECTOR	(UINT64_C(1) << 8)
#define MCR_CM_RATE		(UINT64_C(1) << 9)
#define MCR_CM_PLT_SELECTOR	(UINT64_C(1) << 10)
#define MCR_CM_PLT		(UINT64_C(1) << 11)
#define MCR_CM_SL		(UINT64_C(1) << 12)
#define MCR_CM_FLOW_LABEL	(UINT64_C(1) << 13)
#define MCR_CM_HOP_LIMIT	(UINT64_C(1) << 14)
#define MCR_CM_SCOPE		(UINT64_C(1) << 15)
#define MCR_CM_JOIN_STATE	(UINT64_C(1) << 16)
#define MCR_CM_PROXY_JOIN	(UINT64_C(1) << 17)

#define MCR_SIZE		52

void mc_member_record_encode(const struct mc_member_record *r, uint8_t out[MCR_SIZE]);
void mc_member_record_decode(const uint8_t in[MCR_SIZE], struct mc_member_record *r);

/* MulticastForwardingTableRecord (IBA 15.2.5.8): 72 bytes */
void sa_mft_record_encode(uint16_t lid, uint8_t position, uint16_t block,
			  const uint16_t mask[32], uint8_t *out);
void sa_mft_record_decode(const uint8_t *rec, uint16_t *lid, uint8_t *position, uint16_t *block,
			  uint16_t mask[32]);

/* Record sizes in bytes (before padding to 8) for the attributes above; 0 if unknown */
size_t sa_record_size(uint16_t attr_id);
/* Fields of a record type in component-mask order; bits beyond are invalid */
unsigned int sa_record_nfields(uint16_t attr_id);
/* Does cand match req on every field the mask selects? (attr_id must be known) */
bool sa_record_match(uint16_t attr_id, const uint8_t *cand, const uint8_t *req, uint64_t mask);
/* A field of a request record, for the server's indexes: 0 if out of range */
uint64_t sa_record_field(uint16_t attr_id, const uint8_t *rec, unsigned int field);
/*
 * Where a field lies in its record (bits from the record's start) and its
 * name (NULL when the table has none); -EINVAL: no such field
 */
int sa_record_field_info(uint16_t attr_id, unsigned int field, const char **name,
			 unsigned int *bit_off, unsigned int *width);
/* Set a field (of 64 bits or less) of a record: -EINVAL when there is no such field */
int sa_record_set_field(uint16_t attr_id, uint8_t *rec, unsigned int field, uint64_t v);

/* Record encoders: out must hold sa_record_size() bytes */
void sa_node_record_encode(uint16_t lid, const struct node_info *ni, const struct node_desc *nd,
			   uint8_t *out);
void sa_port_info_record_encode(uint16_t lid, uint8_t port, const struct port_info *pi,
				uint8_t *out);
void sa_switch_info_record_encode(uint16_t lid, const struct switch_info *si, uint8_t *out);
void sa_link_record_encode(uint16_t from_lid, uint8_t from_port, uint8_t to_port, uint16_t to_lid,
			   uint8_t *out);
void sa_lft_record_encode(uint16_t lid, uint16_t block, const struct lft_block *b, uint8_t *out);
void sa_sm_info_record_encode(uint16_t lid, const struct sm_info *si, uint8_t *out);
void sa_sl2vl_record_encode(uint16_t lid, uint8_t in_port, uint8_t out_port, const uint8_t vl[16],
			    uint8_t *out);
void sa_vlarb_record_encode(uint16_t lid, uint8_t out_port, uint8_t block,
			    const uint8_t table[64], uint8_t *out);
void sa_pkey_record_encode(uint16_t lid, uint16_t block, uint8_t port, const uint16_t pkeys[32],
			   uint8_t *out);
void sa_guid_info_record_encode(uint16_t lid, uint8_t block, const uint64_t guids[8],
				uint8_t *out);

/* ClassPortInfo (IBA 13.4.8.1, table 126): the fields an SA fills */
/*
 * SA ClassPortInfo capability bits (IBA 15.2.1.2, as rdma-core's
 * umad_sa.h and the kernel's ib_sa.h number them). CapabilityMask2 bit 12
 * is SendOnlyFullMember joins (the Linux rdma_cm refuses send-only
 * full-member joins without it).
 */
#define SA_CAP_UD_MCAST			(1u << 9)
#define SA_CAP_MULTIPATH		(1u << 10)
#define SA_CAP_PORTINFO_CAPMASK_MATCH	(1u << 13)
#define SA_CAP2_ADDITIONAL_GUIDS	(1u << 5)
#define SA_CAP2_EXTENDED_SPEEDS		(1u << 7)
#define SA_CAP2_PORTINFO_CAPMASK2_MATCH	(1u << 10)
#define SA_CAP2_SENDONLY_FULL_MEMBER	(1u << 12)

struct class_port_info {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t cap_mask;
	uint32_t cap_mask2;
	uint8_t resp_time_value;
};
void class_port_info_encode(const struct class_port_info *c, uint8_t out[CLASS_PORT_INFO_SIZE]);

/* ServiceRecord (IBA 15.2.5.14, table 204): 176 bytes */
#define SR_SIZE			176
struct service_record {
	uint64_t id;
	uint8_t gid[16];
	uint16_t pkey;
	uint32_t lease;		/* seconds; SR_LEASE_INFINITE: none */
	uint8_t key[16];
	uint8_t name[64];	/* UTF-8, NUL-padded */
	uint8_t data8[16];
	uint16_t data16[8];
	uint32_t data32[4];
	uint64_t data64[2];
};
#define SR_LEASE_INFINITE	0xffffffffu
/* ServiceRecord field numbers (sa_record_field, sa_record_set_field) */
#define SR_FIELD_PKEY		2
#define SR_FIELD_LEASE		4
/* ServiceRecord component mask: one bit per field, each ServiceData element its own */
#define SR_CM_ID		(UINT64_C(1) << 0)
#define SR_CM_GID		(UINT64_C(1) << 1)
#define SR_CM_PKEY		(UINT64_C(1) << 2)
#define SR_CM_LEASE		(UINT64_C(1) << 4)
#define SR_CM_KEY		(UINT64_C(1) << 5)
#define SR_CM_NAME		(UINT64_C(1) << 6)
#define SR_CM_DATA8(i)		(UINT64_C(1) << (7 + (i)))
#define SR_CM_DATA16(i)		(UINT64_C(1) << (23 + (i)))
#define SR_CM_DATA32(i)		(UINT64_C(1) << (31 + (i)))
#define SR_CM_DATA64(i)		(UINT64_C(1) << (35 + (i)))

void service_record_encode(const struct service_record *r, uint8_t out[SR_SIZE]);
void service_record_decode(const uint8_t in[SR_SIZE], struct service_record *r);

/*
 * Notice (IBA 13.4.8.2, table 123): 80 bytes. Traps 64-67 carry a GID at
 * DataDetails byte 6 (IBA 14.2.5.1 / 15.2.5.1); producer types (IBA table
 * 123): 1 CA, 2 switch, 3 router, 4 class manager; Type 3 is subnet
 * management, 4 informational.
 */
#define NOTICE_SIZE		80
#define NOTICE_DETAILS_SIZE	54
#define NOTICE_TYPE_URGENT	1
#define NOTICE_TYPE_SM		3
#define NOTICE_TYPE_INFO	4
#define NOTICE_PRODUCER_CLASS_MGR 4
struct notice {
	uint8_t generic;
	uint8_t type;		/* 7 bits */
	uint32_t producer;	/* ProducerType or VendorID, 24 bits */
	uint16_t trap_num;	/* TrapNumber or DeviceID */
	uint16_t issuer_lid;
	uint8_t toggle;
	uint16_t count;		/* 15 bits */
	uint8_t details[NOTICE_DETAILS_SIZE];
	uint8_t issuer_gid[16];
};
void sa_notice_encode(const struct notice *n, uint8_t out[NOTICE_SIZE]);
/*
 * The DataDetails of traps 129-131 (IBA 14.2.5.1: local link integrity,
 * excessive buffer overrun, flow control update watchdog): 16 reserved
 * bits, LIDADDR (the port's LID; a switch's port 0's), PORTNO
 */
void notice_details_port(uint8_t details[NOTICE_DETAILS_SIZE], uint16_t lid, uint8_t port);
void sa_notice_decode(const uint8_t in[NOTICE_SIZE], struct notice *n);

/* InformInfo (IBA 13.4.8.3, table 125): 36 bytes */
#define INFORM_SIZE		36
struct inform_info {
	uint8_t gid[16];
	uint16_t lid_begin;	/* 0xffff: every LID */
	uint16_t lid_end;
	uint8_t generic;
	uint8_t subscribe;
	uint16_t type;		/* 0xffff: any */
	uint16_t trap_num;	/* TrapNumber or DeviceID; 0xffff: any */
	uint32_t qpn;		/* 24 bits */
	uint8_t resp_time;	/* 5 bits */
	uint32_t producer;	/* ProducerType or VendorID, 24 bits; 0xffffff: any */
};
void inform_info_encode(const struct inform_info *ii, uint8_t out[INFORM_SIZE]);
void inform_info_decode(const uint8_t in[INFORM_SIZE], struct inform_info *ii);

/* InformInfoRecord (IBA 15.2.5.12): SubscriberGID, Enum, InformInfo; 64 bytes padded */
#define IIR_SIZE		60
void inform_info_record_encode(const uint8_t subscriber_gid[16], uint16_t enumeration,
			       const struct inform_info *ii, uint8_t out[IIR_SIZE]);

/*
 * MultiPathRecord (IBA 15.2.5.20): a fixed part of 24 bytes, then
 * SGIDCount source GIDs and DGIDCount destination GIDs, 16 bytes each.
 * Longer than one MAD with more than 11 GIDs: the request comes by RMPP.
 */
#define MPR_FIXED_SIZE		24
#define MPR_MAX_GIDS		(2 * 255)
struct multipath_record {
	uint8_t raw_traffic;
	uint32_t flow_label;
	uint8_t hop_limit;
	uint8_t tclass;
	uint8_t reversible;
	uint8_t numb_path;
	uint16_t pkey;
	uint16_t qos_class;
	uint8_t sl;
	uint8_t mtu_selector;
	uint8_t mtu;
	uint8_t rate_selector;
	uint8_t rate;
	uint8_t plt_selector;
	uint8_t packet_life_time;
	uint8_t independence;	/* IndependenceSelector, 2 bits */
	uint8_t sgid_count;
	uint8_t dgid_count;
	uint64_t service_id;	/* ServiceID8MSB and ServiceID56LSB together */
};
/* MultiPathRecord component mask bits (field order, IBA 15.2.5.20) */
#define MPR_CM_RAW_TRAFFIC	(UINT64_C(1) << 0)
#define MPR_CM_FLOW_LABEL	(UINT64_C(1) << 2)
#define MPR_CM_HOP_LIMIT	(UINT64_C(1) << 3)
#define MPR_CM_TCLASS		(UINT64_C(1) << 4)
#define MPR_CM_REVERSIBLE	(UINT64_C(1) << 5)
#define MPR_CM_NUMB_PATH	(UINT64_C(1) << 6)
#define MPR_CM_PKEY		(UINT64_C(1) << 7)
#define MPR_CM_QOS_CLASS	(UINT64_C(1) << 8)
#define MPR_CM_SL		(UINT64_C(1) << 9)
#define MPR_CM_MTU_SELECTOR	(UINT64_C(1) << 10)
#define MPR_CM_MTU		(UINT64_C(1) << 11)
#define MPR_CM_RATE_SELECTOR	(UINT64_C(1) << 12)
#define MPR_CM_RATE		(UINT64_C(1) << 13)
#define MPR_CM_PLT_SELECTOR	(UINT64_C(1) << 14)
#define MPR_CM_PLT		(UINT64_C(1) << 15)
#define MPR_CM_SERVICE_ID_MSB	(UINT64_C(1) << 16)
#define MPR_CM_INDEPENDENCE	(UINT64_C(1) << 17)
#define MPR_CM_SGID_COUNT	(UINT64_C(1) << 19)
#define MPR_CM_DGID_COUNT	(UINT64_C(1) << 20)
#define MPR_CM_SERVICE_ID_LSB	(UINT64_C(1) << 21)
#define MPR_CM_SERVICE_ID	(MPR_CM_SERVICE_ID_MSB | MPR_CM_SERVICE_ID_LSB)

void multipath_record_encode(const struct multipath_record *r, uint8_t out[MPR_FIXED_SIZE]);
void multipath_record_decode(const uint8_t in[MPR_FIXED_SIZE], struct multipath_record *r);

/* PortInfoRecord fields CapabilityMask and CapabilityMask2 (component mask bit numbers) */
#define PIR_FIELD_CAP_MASK	7
#define PIR_FIELD_CAP_MASK2	53
/* GUIDInfoRecord: GUID n of the block is component mask bit 4 + n (IBA 15.2.5.18) */
#define GIR_CM_GUID(n)		(UINT64_C(1) << (4 + (n)))

#endif
