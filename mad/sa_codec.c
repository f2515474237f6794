// SPDX-License-Identifier: MIT
/*
 * SA codecs. Record layouts follow IBA 15.2.5; each record type has a table
 * of (bit offset, width) in component-mask order, reserved fields included,
 * because the mask numbers every field of the record, reserved or not.
 */
#include <errno.h>
#include <string.h>

#include "mad/sa_codec.h"

#define GET(buf, off, w)	wire_bits_get((buf), (off), (w))
#define SET(buf, off, w, v)	wire_bits_set((buf), (off), (w), (uint64_t)(v))

/* MAD header (IBA 13.4.3) + RMPP header (13.6.2.1) + SA header (15.2.1.1) */
int sa_mad_decode(const uint8_t *buf, size_t len, struct sa_mad *m)
{
	/*
	 * A GSI MAD is 256 bytes on the wire, but some senders hand over only
	 * the bytes they filled (OpenSM under the simulator): accept a MAD cut
	 * after the SA header and read the missing data as zeros.
	 */
	if (!buf || len < SA_HDR_SIZE || len > MAD_SIZE)
		return -EBADMSG;
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = buf[0];
	m->hdr.mgmt_class = buf[1];
	m->hdr.class_version = buf[2];
	m->hdr.method = buf[3];
	if (m->hdr.base_version != 1 || m->hdr.mgmt_class != MAD_CLASS_SA)
		return -EBADMSG;
	m->hdr.status = GET(buf, 32, 16);
	m->hdr.tid = GET(buf, 64, 64);
	m->hdr.attr_id = GET(buf, 128, 16);
	m->hdr.attr_mod = GET(buf, 160, 32);
	m->rmpp.version = buf[24];
	m->rmpp.type = buf[25];
	m->rmpp.resp_time = GET(buf, 208, 5);
	m->rmpp.flags = GET(buf, 213, 3);
	m->rmpp.status = buf[27];
	m->rmpp.data1 = GET(buf, 224, 32);
	m->rmpp.data2 = GET(buf, 256, 32);
	m->sm_key = GET(buf, 288, 64);
	m->attr_offset = GET(buf, 352, 16);
	m->comp_mask = GET(buf, 384, 64);
	memcpy(m->data, buf + SA_HDR_SIZE, len - SA_HDR_SIZE);
	return 0;
}

void sa_mad_init(struct sa_mad *m, uint8_t method, uint16_t attr, uint64_t mask, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_SA;
	m->hdr.class_version = SA_CLASS_VERSION;
	m->hdr.method = method;
	m->hdr.attr_id = attr;
	m->hdr.tid = tid;
	m->comp_mask = mask;
}

int sa_mad_encode(const struct sa_mad *m, uint8_t buf[MAD_SIZE])
{
	if (m->hdr.mgmt_class != MAD_CLASS_SA)
		return -EINVAL;
	memset(buf, 0, MAD_SIZE);
	buf[0] = m->hdr.base_version;
	buf[1] = m->hdr.mgmt_class;
	buf[2] = m->hdr.class_version;
	buf[3] = m->hdr.method;
	SET(buf, 32, 16, m->hdr.status);
	SET(buf, 64, 64, m->hdr.tid);
	SET(buf, 128, 16, m->hdr.attr_id);
	SET(buf, 160, 32, m->hdr.attr_mod);
	buf[24] = m->rmpp.version;
	buf[25] = m->rmpp.type;
	SET(buf, 208, 5, m->rmpp.resp_time);
	SET(buf, 213, 3, m->rmpp.flags);
	buf[27] = m->rmpp.status;
	SET(buf, 224, 32, m->rmpp.data1);
	SET(buf, 256, 32, m->rmpp.data2);
	SET(buf, 288, 64, m->sm_key);
	SET(buf, 352, 16, m->attr_offset);
	SET(buf, 384, 64, m->comp_mask);
	memcpy(buf + SA_HDR_SIZE, m->data, SA_DATA_SIZE);
	return 0;
}

struct field {
	uint16_t off;
	uint16_t width;
};

/* NodeRecord: IBA 15.2.5.2 (LID, reserved, NodeInfo, NodeDescription) */
static const struct field node_record[] = {
	{ 0, 16 }, { 16, 16 }, { 32, 8 }, { 40, 8 }, { 48, 8 }, { 56, 8 }, { 64, 64 },
	{ 128, 64 }, { 192, 64 }, { 256, 16 }, { 272, 16 }, { 288, 32 }, { 320, 8 },
	{ 328, 24 }, { 352, 512 },
};

/* PortInfoRecord: IBA 15.2.5.3 (EndportLID, PortNum, Options, PortInfo at bit 32) */
#define PI(o, w) { 32 + (o), (w) }
static const struct field port_info_record[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 },
	PI(0, 64), PI(64, 64), PI(128, 16), PI(144, 16), PI(160, 32), PI(192, 16), PI(208, 16),
	PI(224, 8), PI(232, 8), PI(240, 8), PI(248, 8), PI(256, 4), PI(260, 4), PI(264, 4),
	PI(268, 4), PI(272, 2), PI(274, 3), PI(277, 3), PI(280, 4), PI(284, 4), PI(288, 4),
	PI(292, 4), PI(296, 4), PI(300, 4), PI(304, 8), PI(312, 8), PI(320, 8), PI(328, 4),
	PI(332, 4), PI(336, 3), PI(339, 5), PI(344, 4), PI(348, 1), PI(349, 1), PI(350, 1),
	PI(351, 1), PI(352, 16), PI(368, 16), PI(384, 16), PI(400, 8), PI(408, 1), PI(409, 2),
	PI(411, 5), PI(416, 3), PI(419, 5), PI(424, 4), PI(428, 4), PI(432, 16), PI(448, 8),
	PI(456, 24), PI(480, 16), PI(496, 4), PI(500, 4), PI(504, 3), PI(507, 5),
};

/* SwitchInfoRecord: IBA 15.2.5.4 (LID, reserved, SwitchInfo at bit 32) */
static const struct field switch_info_record[] = {
	{ 0, 16 }, { 16, 16 },
	PI(0, 16), PI(16, 16), PI(32, 16), PI(48, 16), PI(64, 8), PI(72, 8), PI(80, 8),
	PI(88, 5), PI(93, 1), PI(94, 2), PI(96, 16), PI(112, 16), PI(128, 1), PI(129, 1),
	PI(130, 1), PI(131, 1), PI(132, 1), PI(133, 11), PI(144, 16),
};

/* LinkRecord: IBA 15.2.5.13 */
static const struct field link_record[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 16 }, { 48, 16 },
};

/* LinearForwardingTableRecord: IBA 15.2.5.6 */
static const struct field lft_record[] = {
	{ 0, 16 }, { 16, 16 }, { 32, 32 }, { 64, 512 },
};

/* SMInfoRecord: IBA 15.2.5.11 */
static const struct field sm_info_record[] = {
	{ 0, 16 }, { 16, 16 }, { 32, 64 }, { 96, 64 }, { 160, 32 }, { 192, 4 }, { 196, 4 },
};

/* SLtoVLMappingTableRecord: IBA 15.2.5.4 */
static const struct field sl2vl_record[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 32 }, { 64, 64 },
};

/* VLArbitrationTableRecord: IBA 15.2.5.9 */
static const struct field vlarb_record[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 32 }, { 64, 512 },
};

/* P_KeyTableRecord: IBA 15.2.5.11 */
static const struct field pkey_record[] = {
	{ 0, 16 }, { 16, 16 }, { 32, 8 }, { 40, 24 }, { 64, 512 },
};

/* GUIDInfoRecord: IBA 15.2.5.18 (LID, BlockNum, two reserved, then each GUID its own bit) */
static const struct field guid_info_record[] = {
	{ 0, 16 }, { 16, 8 }, { 24, 8 }, { 32, 32 }, { 64, 64 }, { 128, 64 }, { 192, 64 },
	{ 256, 64 }, { 320, 64 }, { 384, 64 }, { 448, 64 }, { 512, 64 },
};

/*
 * ServiceRecord: IBA 15.2.5.14 (ServiceID, ServiceGID, ServiceP_Key,
 * reserved, ServiceLease, ServiceKey, ServiceName, then every element of
 * ServiceData8/16/32/64 its own component)
 */
#define SD(o, w) { (o), (w) }
static const struct field service_record_fields[] = {
	{ 0, 64 }, { 64, 128 }, { 192, 16 }, { 208, 16 }, { 224, 32 }, { 256, 128 }, { 384, 512 },
	SD(896, 8), SD(904, 8), SD(912, 8), SD(920, 8), SD(928, 8), SD(936, 8), SD(944, 8),
	SD(952, 8), SD(960, 8), SD(968, 8), SD(976, 8), SD(984, 8), SD(992, 8), SD(1000, 8),
	SD(1008, 8), SD(1016, 8),
	SD(1024, 16), SD(1040, 16), SD(1056, 16), SD(1072, 16), SD(1088, 16), SD(1104, 16),
	SD(1120, 16), SD(1136, 16),
	SD(1152, 32), SD(1184, 32), SD(1216, 32), SD(1248, 32),
	SD(1280, 64), SD(1344, 64),
};

/*
 * InformInfo: IBA 13.4.8.3 (GID, LIDRangeBegin, LIDRangeEnd, reserved,
 * IsGeneric, Subscribe, Type, TrapNumber/DeviceID, QPN, reserved,
 * RespTimeValue, reserved, ProducerType/VendorID)
 */
#define II(o, w) { (o), (w) }
#define INFORM_FIELDS(b) \
	II((b) + 0, 128), II((b) + 128, 16), II((b) + 144, 16), II((b) + 160, 16), \
	II((b) + 176, 8), II((b) + 184, 8), II((b) + 192, 16), II((b) + 208, 16), \
	II((b) + 224, 24), II((b) + 248, 3), II((b) + 251, 5), II((b) + 256, 8), \
	II((b) + 264, 24)
static const struct field inform_info_fields[] = { INFORM_FIELDS(0) };

/* InformInfoRecord: IBA 15.2.5.12 (SubscriberGID, Enum, reserved, InformInfo) */
static const struct field inform_info_record_fields[] = {
	{ 0, 128 }, { 128, 16 }, { 144, 48 }, INFORM_FIELDS(192),
};

/*
 * The path parameters PathRecord (from bit 352) and MultiPathRecord (from
 * bit 0) share, in the same order and widths: RawTraffic, reserved,
 * FlowLabel, HopLimit, TClass, Reversible, NumbPath, P_Key, QoSClass, SL,
 * MTU (selector, value), Rate (selector, value), PacketLifeTime (selector,
 * value). PATH_PARAMS(X, b) lists them for the struct codecs below.
 */
#define PATH_PARAMS_MASK(b) \
	{ (b) + 0, 1 }, { (b) + 1, 3 }, { (b) + 4, 20 }, { (b) + 24, 8 }, { (b) + 32, 8 }, \
	{ (b) + 40, 1 }, { (b) + 41, 7 }, { (b) + 48, 16 }, { (b) + 64, 12 }, { (b) + 76, 4 }, \
	{ (b) + 80, 2 }, { (b) + 82, 6 }, { (b) + 88, 2 }, { (b) + 90, 6 }, { (b) + 96, 2 }, \
	{ (b) + 98, 6 }

/* MultiPathRecord: IBA 15.2.5.20, the fixed part before the GIDs */
static const struct field multipath_record_fields[] = {
	PATH_PARAMS_MASK(0),
	{ 104, 8 }, { 112, 2 }, { 114, 6 }, { 120, 8 }, { 128, 8 }, { 136, 56 },
};

/* PathRecord: IBA 15.2.5.16, table 209 (ServiceID takes two mask bits) */
static const struct field path_record_fields[] = {
	{ 0, 32 }, { 32, 32 }, { 64, 128 }, { 192, 128 }, { 320, 16 }, { 336, 16 },
	PATH_PARAMS_MASK(352),
	{ 456, 8 }, { 464, 48 },
};

/*
 * MulticastForwardingTableRecord: IBA 15.2.5.8 (LID, Position, reserved,
 * BlockNum, reserved, 32 port masks)
 */
static const struct field mft_record[] = {
	{ 0, 16 }, { 16, 4 }, { 20, 3 }, { 23, 9 }, { 32, 32 }, { 64, 512 },
};

/*
 * MCMemberRecord: IBA 15.2.5.17, table 213: MGID, PortGID, Q_Key, MLID,
 * MTU (selector, value), TClass, P_Key, Rate (selector, value),
 * PacketLifeTime (selector, value), SL, FlowLabel, HopLimit, Scope,
 * JoinState, ProxyJoin, reserved
 */
static const struct field mcmember_record[] = {
	{ 0, 128 }, { 128, 128 }, { 256, 32 }, { 288, 16 }, { 304, 2 }, { 306, 6 },
	{ 312, 8 }, { 320, 16 }, { 336, 2 }, { 338, 6 }, { 344, 2 }, { 346, 6 },
	{ 352, 4 }, { 356, 20 }, { 376, 8 }, { 384, 4 }, { 388, 4 }, { 392, 1 },
	{ 393, 23 },
};

#define TABLE(t) t, sizeof(t) / sizeof(t[0])

/*
 * Indexed by attribute ID (all below 256): the SA looks a table up for
 * every record it matches, so a lookup must not be a search
 */
#define RECORD_ATTRS 256
static const struct {
	uint16_t size;
	const struct field *f;
	unsigned int n;
} records[RECORD_ATTRS] = {
	[SA_ATTR_NODE_RECORD] = { 108, TABLE(node_record) },
	[SA_ATTR_PORT_INFO_RECORD] = { 68, TABLE(port_info_record) },
	[SA_ATTR_SWITCH_INFO_RECORD] = { 24, TABLE(switch_info_record) },
	[SA_ATTR_LINK_RECORD] = { 8, TABLE(link_record) },
	[SA_ATTR_LFT_RECORD] = { 72, TABLE(lft_record) },
	[SA_ATTR_SM_INFO_RECORD] = { 25, TABLE(sm_info_record) },
	[SA_ATTR_SL2VL_RECORD] = { 16, TABLE(sl2vl_record) },
	[SA_ATTR_VLARB_RECORD] = { 72, TABLE(vlarb_record) },
	[SA_ATTR_PKEY_RECORD] = { 72, TABLE(pkey_record) },
	[SA_ATTR_GUID_INFO_RECORD] = { 72, TABLE(guid_info_record) },
	[SA_ATTR_PATH_RECORD] = { 64, TABLE(path_record_fields) },
	[SA_ATTR_MFT_RECORD] = { 72, TABLE(mft_record) },
	[SA_ATTR_MCMEMBER_RECORD] = { MCR_SIZE, TABLE(mcmember_record) },
	[SA_ATTR_SERVICE_RECORD] = { SR_SIZE, TABLE(service_record_fields) },
	[SA_ATTR_INFORM_INFO] = { INFORM_SIZE, TABLE(inform_info_fields) },
	[SA_ATTR_INFORM_INFO_RECORD] = { IIR_SIZE, TABLE(inform_info_record_fields) },
	[SA_ATTR_MULTIPATH_RECORD] = { MPR_FIXED_SIZE, TABLE(multipath_record_fields) },
};

/*
 * Field names, in the order of the tables above (the IBA's component
 * names, lower case), for smctl's JSON; a table whose names do not match
 * its fields in number gets none (test_sa checks every table has them).
 */
static const char *const node_record_names[] = {
	"lid", "reserved", "base_version", "class_version", "node_type", "num_ports",
	"system_image_guid", "node_guid", "port_guid", "partition_cap", "device_id", "revision",
	"local_port_num", "vendor_id", "node_description",
};

static const char *const port_info_record_names[] = {
	"endport_lid", "port_num", "options", "m_key", "gid_prefix", "lid", "master_sm_lid",
	"capability_mask", "diag_code", "m_key_lease_period", "local_port_num",
	"link_width_enabled", "link_width_supported", "link_width_active",
	"link_speed_supported", "port_state", "port_phys_state", "link_down_default_state",
	"m_key_protect_bits", "reserved", "lmc", "link_speed_active", "link_speed_enabled",
	"neighbor_mtu", "master_sm_sl", "vl_cap", "init_type", "vl_high_limit",
	"vl_arbitration_high_cap", "vl_arbitration_low_cap", "init_type_reply", "mtu_cap",
	"vl_stall_count", "hoq_life", "operational_vls", "partition_enforcement_inbound",
	"partition_enforcement_outbound", "filter_raw_inbound", "filter_raw_outbound",
	"m_key_violations", "p_key_violations", "q_key_violations", "guid_cap",
	"client_reregister", "multicast_pkey_trap_suppression", "subnet_timeout", "reserved2",
	"resp_time_value", "local_phy_errors", "overrun_errors", "max_credit_hint", "reserved3",
	"link_round_trip_latency", "capability_mask2", "link_speed_ext_active",
	"link_speed_ext_supported", "reserved4", "link_speed_ext_enabled",
};

static const char *const switch_info_record_names[] = {
	"lid", "reserved", "linear_fdb_cap", "random_fdb_cap", "multicast_fdb_cap",
	"linear_fdb_top", "default_port", "default_multicast_primary_port",
	"default_multicast_not_primary_port", "life_time_value", "port_state_change",
	"optimized_sl2vl_mapping_programming", "lids_per_port", "partition_enforcement_cap",
	"inbound_enforcement_cap", "outbound_enforcement_cap", "filter_raw_inbound_cap",
	"filter_raw_outbound_cap", "enhanced_port0", "reserved2", "multicast_fdb_top",
};

static const char *const link_record_names[] = {
	"from_lid", "from_port", "to_port", "to_lid", "reserved",
};

static const char *const lft_record_names[] = { "lid", "block", "reserved", "lft" };

static const char *const sm_info_record_names[] = {
	"lid", "reserved", "guid", "sm_key", "act_count", "priority", "sm_state",
};

static const char *const sl2vl_record_names[] = {
	"lid", "input_port", "output_port", "reserved", "sl2vl",
};

static const char *const vlarb_record_names[] = {
	"lid", "output_port", "block", "reserved", "vl_arbitration_table",
};

static const char *const pkey_record_names[] = {
	"lid", "block", "port", "reserved", "pkey_table",
};

static const char *const guid_info_record_names[] = {
	"lid", "block", "reserved", "reserved2", "guid0", "guid1", "guid2", "guid3", "guid4",
	"guid5", "guid6", "guid7",
};

static const char *const service_record_names[] = {
	"service_id", "service_gid", "service_pkey", "reserved", "service_lease", "service_key",
	"service_name", "service_data8_0", "service_data8_1", "service_data8_2",
	"service_data8_3", "service_data8_4", "service_data8_5", "service_data8_6",
	"service_data8_7", "service_data8_8", "service_data8_9", "service_data8_10",
	"service_data8_11", "service_data8_12", "service_data8_13", "service_data8_14",
	"service_data8_15", "service_data16_0", "service_data16_1", "service_data16_2",
	"service_data16_3", "service_data16_4", "service_data16_5", "service_data16_6",
	"service_data16_7", "service_data32_0", "service_data32_1", "service_data32_2",
	"service_data32_3", "service_data64_0", "service_data64_1",
};

static const char *const inform_info_names[] = {
	"gid", "lid_range_begin", "lid_range_end", "reserved", "is_generic", "subscribe",
	"type", "trap_number", "qpn", "reserved2", "resp_time_value", "reserved3",
	"producer_type",
};

static const char *const inform_info_record_names[] = {
	"subscriber_gid", "enum", "reserved", "gid", "lid_range_begin", "lid_range_end",
	"reserved2", "is_generic", "subscribe", "type", "trap_number", "qpn", "reserved3",
	"resp_time_value", "reserved4", "producer_type",
};

static const char *const multipath_record_names[] = {
	"raw_traffic", "reserved", "flow_label", "hop_limit", "tclass", "reversible",
	"num_path", "pkey", "qos_class", "sl", "mtu_selector", "mtu", "rate_selector", "rate",
	"packet_life_time_selector", "packet_life_time", "service_id_msb",
	"independence_selector", "reserved2", "sgid_count", "dgid_count", "service_id_lsb",
};

static const char *const path_record_names[] = {
	"service_id_hi", "service_id_lo", "dgid", "sgid", "dlid", "slid", "raw_traffic",
	"reserved", "flow_label", "hop_limit", "tclass", "reversible", "num_path", "pkey",
	"qos_class", "sl", "mtu_selector", "mtu", "rate_selector", "rate",
	"packet_life_time_selector", "packet_life_time", "preference", "reserved2",
};

static const char *const mft_record_names[] = {
	"lid", "position", "reserved", "block", "reserved2", "port_masks",
};

static const char *const mcmember_record_names[] = {
	"mgid", "port_gid", "qkey", "mlid", "mtu_selector", "mtu", "tclass", "pkey",
	"rate_selector", "rate", "packet_life_time_selector", "packet_life_time", "sl",
	"flow_label", "hop_limit", "scope", "join_state", "proxy_join", "reserved",
};

#define NAMES(t) t, sizeof(t) / sizeof(t[0])

static const struct {
	const char *const *names;
	unsigned int n;
} record_names[RECORD_ATTRS] = {
	[SA_ATTR_NODE_RECORD] = { NAMES(node_record_names) },
	[SA_ATTR_PORT_INFO_RECORD] = { NAMES(port_info_record_names) },
	[SA_ATTR_SWITCH_INFO_RECORD] = { NAMES(switch_info_record_names) },
	[SA_ATTR_LINK_RECORD] = { NAMES(link_record_names) },
	[SA_ATTR_LFT_RECORD] = { NAMES(lft_record_names) },
	[SA_ATTR_SM_INFO_RECORD] = { NAMES(sm_info_record_names) },
	[SA_ATTR_SL2VL_RECORD] = { NAMES(sl2vl_record_names) },
	[SA_ATTR_VLARB_RECORD] = { NAMES(vlarb_record_names) },
	[SA_ATTR_PKEY_RECORD] = { NAMES(pkey_record_names) },
	[SA_ATTR_GUID_INFO_RECORD] = { NAMES(guid_info_record_names) },
	[SA_ATTR_PATH_RECORD] = { NAMES(path_record_names) },
	[SA_ATTR_MFT_RECORD] = { NAMES(mft_record_names) },
	[SA_ATTR_MCMEMBER_RECORD] = { NAMES(mcmember_record_names) },
	[SA_ATTR_SERVICE_RECORD] = { NAMES(service_record_names) },
	[SA_ATTR_INFORM_INFO] = { NAMES(inform_info_names) },
	[SA_ATTR_INFORM_INFO_RECORD] = { NAMES(inform_info_record_names) },
	[SA_ATTR_MULTIPATH_RECORD] = { NAMES(multipath_record_names) },
};

static int record_index(uint16_t attr_id)
{
	return attr_id < RECORD_ATTRS && records[attr_id].n ? attr_id : -1;
}

size_t sa_record_size(uint16_t attr_id)
{
	int i = record_index(attr_id);

	return i < 0 ? 0 : records[i].size;
}

unsigned int sa_record_nfields(uint16_t attr_id)
{
	int i = record_index(attr_id);

	return i < 0 ? 0 : records[i].n;
}

int sa_record_field_info(uint16_t attr_id, unsigned int field, const char **name,
			 unsigned int *bit_off, unsigned int *width)
{
	int i = record_index(attr_id);

	if (i < 0 || field >= records[i].n)
		return -EINVAL;
	*bit_off = records[i].f[field].off;
	*width = records[i].f[field].width;
	*name = record_names[i].n == records[i].n ? record_names[i].names[field] : NULL;
	return 0;
}

static bool field_equal(const uint8_t *a, const uint8_t *b, const struct field *f)
{
	if (f->off % 8 == 0 && f->width % 8 == 0)
		return !memcmp(a + f->off / 8, b + f->off / 8, f->width / 8);
	return GET(a, f->off, f->width) == GET(b, f->off, f->width);
}

bool sa_record_match(uint16_t attr_id, const uint8_t *cand, const uint8_t *req, uint64_t mask)
{
	int i = record_index(attr_id);

	if (i < 0)
		return false;
	for (unsigned int k = 0; k < records[i].n && mask; k++, mask >>= 1)
		if ((mask & 1) && !field_equal(cand, req, &records[i].f[k]))
			return false;
	return true;
}

uint64_t sa_record_field(uint16_t attr_id, const uint8_t *rec, unsigned int field)
{
	int i = record_index(attr_id);

	if (i < 0 || field >= records[i].n || records[i].f[field].width > 64)
		return 0;
	return GET(rec, records[i].f[field].off, records[i].f[field].width);
}

int sa_record_set_field(uint16_t attr_id, uint8_t *rec, unsigned int field, uint64_t v)
{
	int i = record_index(attr_id);

	if (i < 0 || field >= records[i].n || records[i].f[field].width > 64)
		return -EINVAL;
	SET(rec, records[i].f[field].off, records[i].f[field].width, v);
	return 0;
}

/*
 * The struct codecs: each record's fields listed once, as X(member, bit
 * offset, width) for numbers, B(member, byte offset, length) for byte
 * strings and A(member, bit offset, width, count) for arrays of numbers;
 * the same list generates decode and encode (as mad/wire.c does for SMPs).
 */
#define DEC_X(m, off, w)	r->m = GET(in, (off), (w));
#define DEC_B(m, off, len)	memcpy(r->m, in + (off), (len));
#define DEC_A(m, off, w, n) \
	for (unsigned int i_ = 0; i_ < (n); i_++) \
		r->m[i_] = GET(in, (off) + (w) * i_, (w));
#define ENC_X(m, off, w)	SET(o, (off), (w), r->m);
#define ENC_B(m, off, len)	memcpy(o + (off), r->m, (len));
#define ENC_A(m, off, w, n) \
	for (unsigned int i_ = 0; i_ < (n); i_++) \
		SET(o, (off) + (w) * i_, (w), r->m[i_]);

#define PATH_PARAMS(X, b) \
	X(raw_traffic, (b) + 0, 1) X(flow_label, (b) + 4, 20) X(hop_limit, (b) + 24, 8) \
	X(tclass, (b) + 32, 8) X(reversible, (b) + 40, 1) X(numb_path, (b) + 41, 7) \
	X(pkey, (b) + 48, 16) X(qos_class, (b) + 64, 12) X(sl, (b) + 76, 4) \
	X(mtu_selector, (b) + 80, 2) X(mtu, (b) + 82, 6) X(rate_selector, (b) + 88, 2) \
	X(rate, (b) + 90, 6) X(plt_selector, (b) + 96, 2) X(packet_life_time, (b) + 98, 6)

/* PathRecord: IBA 15.2.5.16, table 209 */
#define PATH_RECORD(X, B) \
	X(service_id, 0, 64) B(dgid, 8, 16) B(sgid, 24, 16) X(dlid, 320, 16) \
	X(slid, 336, 16) PATH_PARAMS(X, 352) X(preference, 456, 8)

/* MultiPathRecord: IBA 15.2.5.20 (ServiceID split in two, coded by hand) */
#define MULTIPATH_RECORD(X) \
	PATH_PARAMS(X, 0) X(independence, 112, 2) X(sgid_count, 120, 8) X(dgid_count, 128, 8)

/* MCMemberRecord: IBA 15.2.5.17, table 213 */
#define MC_MEMBER_RECORD(X, B) \
	B(mgid, 0, 16) B(port_gid, 16, 16) X(qkey, 256, 32) X(mlid, 288, 16) \
	X(mtu_selector, 304, 2) X(mtu, 306, 6) X(tclass, 312, 8) X(pkey, 320, 16) \
	X(rate_selector, 336, 2) X(rate, 338, 6) X(plt_selector, 344, 2) \
	X(packet_life_time, 346, 6) X(sl, 352, 4) X(flow_label, 356, 20) X(hop_limit, 376, 8) \
	X(scope, 384, 4) X(join_state, 388, 4) X(proxy_join, 392, 1)

/* ServiceRecord: IBA 15.2.5.14, table 204 */
#define SERVICE_RECORD(X, B, A) \
	X(id, 0, 64) B(gid, 8, 16) X(pkey, 192, 16) X(lease, 224, 32) B(key, 32, 16) \
	B(name, 48, 64) B(data8, 112, 16) A(data16, 1024, 16, 8) A(data32, 1152, 32, 4) \
	A(data64, 1280, 64, 2)

/* Notice: IBA 13.4.8.2, table 123 (the generic form's fields) */
#define NOTICE(X, B) \
	X(generic, 0, 1) X(type, 1, 7) X(producer, 8, 24) X(trap_num, 32, 16) \
	X(issuer_lid, 48, 16) X(toggle, 64, 1) X(count, 65, 15) \
	B(details, 10, NOTICE_DETAILS_SIZE) B(issuer_gid, 64, 16)

/* InformInfo: IBA 13.4.8.3, table 125 */
#define INFORM_INFO(X, B) \
	B(gid, 0, 16) X(lid_begin, 128, 16) X(lid_end, 144, 16) X(generic, 176, 8) \
	X(subscribe, 184, 8) X(type, 192, 16) X(trap_num, 208, 16) X(qpn, 224, 24) \
	X(resp_time, 251, 5) X(producer, 264, 24)

void path_record_encode(const struct path_record *r, uint8_t o[64])
{
	memset(o, 0, 64);
	PATH_RECORD(ENC_X, ENC_B)
}

void path_record_decode(const uint8_t in[64], struct path_record *r)
{
	memset(r, 0, sizeof(*r));
	PATH_RECORD(DEC_X, DEC_B)
}

void mc_member_record_encode(const struct mc_member_record *r, uint8_t o[MCR_SIZE])
{
	memset(o, 0, MCR_SIZE);
	MC_MEMBER_RECORD(ENC_X, ENC_B)
}

void mc_member_record_decode(const uint8_t in[MCR_SIZE], struct mc_member_record *r)
{
	memset(r, 0, sizeof(*r));
	MC_MEMBER_RECORD(DEC_X, DEC_B)
}

void sa_mft_record_encode(uint16_t lid, uint8_t position, uint16_t block,
			  const uint16_t mask[32], uint8_t *out)
{
	memset(out, 0, 72);
	SET(out, 0, 16, lid);
	SET(out, 16, 4, position);
	SET(out, 23, 9, block);
	for (unsigned int i = 0; i < 32; i++)
		SET(out, 64 + 16 * i, 16, mask[i]);
}

void sa_mft_record_decode(const uint8_t *rec, uint16_t *lid, uint8_t *position, uint16_t *block,
			  uint16_t mask[32])
{
	*lid = (uint16_t)GET(rec, 0, 16);
	*position = (uint8_t)GET(rec, 16, 4);
	*block = (uint16_t)GET(rec, 23, 9);
	for (unsigned int i = 0; i < 32; i++)
		mask[i] = (uint16_t)GET(rec, 64 + 16 * i, 16);
}

void sa_node_record_encode(uint16_t lid, const struct node_info *ni, const struct node_desc *nd,
			   uint8_t *out)
{
	uint8_t d[SMP_DATA_SIZE];

	memset(out, 0, 108);
	SET(out, 0, 16, lid);
	node_info_encode(ni, d);
	memcpy(out + 4, d, 40);
	node_desc_encode(nd, out + 44);
}

void sa_port_info_record_encode(uint16_t lid, uint8_t port, const struct port_info *pi,
				uint8_t *out)
{
	memset(out, 0, 68);
	SET(out, 0, 16, lid);
	out[2] = port;
	port_info_encode(pi, out + 4);
	/* IBA 15.2.5.3: the SA does not disclose M_Keys */
	memset(out + 4, 0, 8);
}

void sa_switch_info_record_encode(uint16_t lid, const struct switch_info *si, uint8_t *out)
{
	uint8_t d[SMP_DATA_SIZE];

	memset(out, 0, 24);
	SET(out, 0, 16, lid);
	switch_info_encode(si, d);
	memcpy(out + 4, d, 20);
}

void sa_link_record_encode(uint16_t from_lid, uint8_t from_port, uint8_t to_port, uint16_t to_lid,
			   uint8_t *out)
{
	memset(out, 0, 8);
	SET(out, 0, 16, from_lid);
	out[2] = from_port;
	out[3] = to_port;
	SET(out, 32, 16, to_lid);
}

void sa_lft_record_encode(uint16_t lid, uint16_t block, const struct lft_block *b, uint8_t *out)
{
	memset(out, 0, 72);
	SET(out, 0, 16, lid);
	SET(out, 16, 16, block);
	lft_block_encode(b, out + 8);
}

void sa_sm_info_record_encode(uint16_t lid, const struct sm_info *si, uint8_t *out)
{
	uint8_t d[SMP_DATA_SIZE];

	memset(out, 0, 25);
	SET(out, 0, 16, lid);
	sm_info_encode(si, d);
	/* IBA 15.2.5.11: SM_Key is returned as 0 to unauthenticated requesters */
	memset(d + 8, 0, 8);
	memcpy(out + 4, d, 21);
}

void sa_sl2vl_record_encode(uint16_t lid, uint8_t in_port, uint8_t out_port, const uint8_t vl[16],
			    uint8_t *out)
{
	memset(out, 0, 16);
	SET(out, 0, 16, lid);
	out[2] = in_port;
	out[3] = out_port;
	/* IBA 14.2.5.8: two SLs per byte, SL0 in the high nibble */
	for (unsigned int sl = 0; sl < 16; sl++)
		SET(out, 64 + 4 * sl, 4, vl[sl] & 0xf);
}

void sa_vlarb_record_encode(uint16_t lid, uint8_t out_port, uint8_t block,
			    const uint8_t table[64], uint8_t *out)
{
	memset(out, 0, 72);
	SET(out, 0, 16, lid);
	out[2] = out_port;
	out[3] = block;
	memcpy(out + 8, table, 64);
}

void sa_pkey_record_encode(uint16_t lid, uint16_t block, uint8_t port, const uint16_t pkeys[32],
			   uint8_t *out)
{
	memset(out, 0, 72);
	SET(out, 0, 16, lid);
	SET(out, 16, 16, block);
	out[4] = port;
	for (unsigned int i = 0; i < 32; i++)
		SET(out, 64 + 16 * i, 16, pkeys[i]);
}

void sa_guid_info_record_encode(uint16_t lid, uint8_t block, const uint64_t guids[8],
				uint8_t *out)
{
	memset(out, 0, 72);
	SET(out, 0, 16, lid);
	out[2] = block;
	for (unsigned int i = 0; i < 8; i++)
		SET(out, 64 + 64 * i, 64, guids[i]);
}

void class_port_info_encode(const struct class_port_info *c, uint8_t out[72])
{
	memset(out, 0, 72);
	out[0] = c->base_version;
	out[1] = c->class_version;
	SET(out, 16, 16, c->cap_mask);
	SET(out, 32, 27, c->cap_mask2);
	SET(out, 59, 5, c->resp_time_value);
}

void service_record_encode(const struct service_record *r, uint8_t o[SR_SIZE])
{
	memset(o, 0, SR_SIZE);
	SERVICE_RECORD(ENC_X, ENC_B, ENC_A)
}

void service_record_decode(const uint8_t in[SR_SIZE], struct service_record *r)
{
	memset(r, 0, sizeof(*r));
	SERVICE_RECORD(DEC_X, DEC_B, DEC_A)
}

void sa_notice_encode(const struct notice *r, uint8_t o[NOTICE_SIZE])
{
	memset(o, 0, NOTICE_SIZE);
	NOTICE(ENC_X, ENC_B)
}

void sa_notice_decode(const uint8_t in[NOTICE_SIZE], struct notice *r)
{
	memset(r, 0, sizeof(*r));
	NOTICE(DEC_X, DEC_B)
}

static void inform_put(const struct inform_info *r, uint8_t *o)
{
	INFORM_INFO(ENC_X, ENC_B)
}

void inform_info_encode(const struct inform_info *ii, uint8_t o[INFORM_SIZE])
{
	memset(o, 0, INFORM_SIZE);
	inform_put(ii, o);
}

void inform_info_decode(const uint8_t in[INFORM_SIZE], struct inform_info *r)
{
	memset(r, 0, sizeof(*r));
	INFORM_INFO(DEC_X, DEC_B)
}

void inform_info_record_encode(const uint8_t subscriber_gid[16], uint16_t enumeration,
			       const struct inform_info *ii, uint8_t o[IIR_SIZE])
{
	memset(o, 0, IIR_SIZE);
	memcpy(o, subscriber_gid, 16);
	SET(o, 128, 16, enumeration);
	inform_put(ii, o + 24);
}

void multipath_record_encode(const struct multipath_record *r, uint8_t o[MPR_FIXED_SIZE])
{
	memset(o, 0, MPR_FIXED_SIZE);
	MULTIPATH_RECORD(ENC_X)
	SET(o, 104, 8, r->service_id >> 56);
	SET(o, 136, 56, r->service_id & ((UINT64_C(1) << 56) - 1));
}

void multipath_record_decode(const uint8_t in[MPR_FIXED_SIZE], struct multipath_record *r)
{
	memset(r, 0, sizeof(*r));
	MULTIPATH_RECORD(DEC_X)
	r->service_id = GET(in, 104, 8) << 56 | GET(in, 136, 56);
}
