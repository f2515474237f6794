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
	mad_hdr_get(buf, &m->hdr);
	if (m->hdr.base_version != 1 || m->hdr.mgmt_class != MAD_CLASS_SA) {
		memset(m, 0, sizeof(*m));
		return -EBADMSG;
	}
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
	mad_hdr_put(&m->hdr, buf);
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

/*
 * Each record's components listed once, in component-mask order (IBA
 * 15.2.4: the mask numbers every field, reserved or not), as C(name, bit
 * offset, width); RECORD() makes of the list the field table the mask and
 * the matching use and the names smctl's JSON prints (the IBA's component
 * names in lower case), which so cannot disagree.
 */
#define FIELD_(name, off, w)	{ (off), (w) },
#define NAME_(name, off, w)	#name,
#define RECORD(id, LIST) \
	static const struct field id##_fields[] = { LIST(FIELD_) }; \
	static const char *const id##_names[] = { LIST(NAME_) };

/* NodeRecord: IBA 15.2.5.2 (LID, reserved, NodeInfo, NodeDescription) */
#define NODE_RECORD(C) \
	C(lid, 0, 16) C(reserved, 16, 16) C(base_version, 32, 8) C(class_version, 40, 8) \
	C(node_type, 48, 8) C(num_ports, 56, 8) C(system_image_guid, 64, 64) \
	C(node_guid, 128, 64) C(port_guid, 192, 64) C(partition_cap, 256, 16) \
	C(device_id, 272, 16) C(revision, 288, 32) C(local_port_num, 320, 8) \
	C(vendor_id, 328, 24) C(node_description, 352, 512)
RECORD(node_record, NODE_RECORD)

/* PortInfoRecord: IBA 15.2.5.3 (EndportLID, PortNum, Options, PortInfo at bit 32) */
#define PI(o)	(32 + (o))
#define PORT_INFO_RECORD(C) \
	C(endport_lid, 0, 16) C(port_num, 16, 8) C(options, 24, 8) C(m_key, PI(0), 64) \
	C(gid_prefix, PI(64), 64) C(lid, PI(128), 16) C(master_sm_lid, PI(144), 16) \
	C(capability_mask, PI(160), 32) C(diag_code, PI(192), 16) \
	C(m_key_lease_period, PI(208), 16) C(local_port_num, PI(224), 8) \
	C(link_width_enabled, PI(232), 8) C(link_width_supported, PI(240), 8) \
	C(link_width_active, PI(248), 8) C(link_speed_supported, PI(256), 4) \
	C(port_state, PI(260), 4) C(port_phys_state, PI(264), 4) \
	C(link_down_default_state, PI(268), 4) C(m_key_protect_bits, PI(272), 2) \
	C(reserved, PI(274), 3) C(lmc, PI(277), 3) C(link_speed_active, PI(280), 4) \
	C(link_speed_enabled, PI(284), 4) C(neighbor_mtu, PI(288), 4) \
	C(master_sm_sl, PI(292), 4) C(vl_cap, PI(296), 4) C(init_type, PI(300), 4) \
	C(vl_high_limit, PI(304), 8) C(vl_arbitration_high_cap, PI(312), 8) \
	C(vl_arbitration_low_cap, PI(320), 8) C(init_type_reply, PI(328), 4) \
	C(mtu_cap, PI(332), 4) C(vl_stall_count, PI(336), 3) C(hoq_life, PI(339), 5) \
	C(operational_vls, PI(344), 4) C(partition_enforcement_inbound, PI(348), 1) \
	C(partition_enforcement_outbound, PI(349), 1) C(filter_raw_inbound, PI(350), 1) \
	C(filter_raw_outbound, PI(351), 1) C(m_key_violations, PI(352), 16) \
	C(p_key_violations, PI(368), 16) C(q_key_violations, PI(384), 16) \
	C(guid_cap, PI(400), 8) C(client_reregister, PI(408), 1) \
	C(multicast_pkey_trap_suppression, PI(409), 2) C(subnet_timeout, PI(411), 5) \
	C(reserved2, PI(416), 3) C(resp_time_value, PI(419), 5) \
	C(local_phy_errors, PI(424), 4) C(overrun_errors, PI(428), 4) \
	C(max_credit_hint, PI(432), 16) C(reserved3, PI(448), 8) \
	C(link_round_trip_latency, PI(456), 24) C(capability_mask2, PI(480), 16) \
	C(link_speed_ext_active, PI(496), 4) C(link_speed_ext_supported, PI(500), 4) \
	C(reserved4, PI(504), 3) C(link_speed_ext_enabled, PI(507), 5)
RECORD(port_info_record, PORT_INFO_RECORD)

/* SwitchInfoRecord: IBA 15.2.5.5 (LID, reserved, SwitchInfo at bit 32) */
#define SWITCH_INFO_RECORD(C) \
	C(lid, 0, 16) C(reserved, 16, 16) C(linear_fdb_cap, PI(0), 16) \
	C(random_fdb_cap, PI(16), 16) C(multicast_fdb_cap, PI(32), 16) \
	C(linear_fdb_top, PI(48), 16) C(default_port, PI(64), 8) \
	C(default_multicast_primary_port, PI(72), 8) \
	C(default_multicast_not_primary_port, PI(80), 8) C(life_time_value, PI(88), 5) \
	C(port_state_change, PI(93), 1) C(optimized_sl2vl_mapping_programming, PI(94), 2) \
	C(lids_per_port, PI(96), 16) C(partition_enforcement_cap, PI(112), 16) \
	C(inbound_enforcement_cap, PI(128), 1) C(outbound_enforcement_cap, PI(129), 1) \
	C(filter_raw_inbound_cap, PI(130), 1) C(filter_raw_outbound_cap, PI(131), 1) \
	C(enhanced_port0, PI(132), 1) C(reserved2, PI(133), 11) \
	C(multicast_fdb_top, PI(144), 16)
RECORD(switch_info_record, SWITCH_INFO_RECORD)

/* LinkRecord: IBA 15.2.5.13 */
#define LINK_RECORD(C) \
	C(from_lid, 0, 16) C(from_port, 16, 8) C(to_port, 24, 8) C(to_lid, 32, 16) \
	C(reserved, 48, 16)
RECORD(link_record, LINK_RECORD)

/* LinearForwardingTableRecord: IBA 15.2.5.6 */
#define LFT_RECORD(C) C(lid, 0, 16) C(block, 16, 16) C(reserved, 32, 32) C(lft, 64, 512)
RECORD(lft_record, LFT_RECORD)

/* SMInfoRecord: IBA 15.2.5.10 (LID, reserved, SMInfo at bit 32) */
#define SM_INFO_RECORD(C) \
	C(lid, 0, 16) C(reserved, 16, 16) C(guid, 32, 64) C(sm_key, 96, 64) \
	C(act_count, 160, 32) C(priority, 192, 4) C(sm_state, 196, 4)
RECORD(sm_info_record, SM_INFO_RECORD)

/* SLtoVLMappingTableRecord: IBA 15.2.5.4 */
#define SL2VL_RECORD(C) \
	C(lid, 0, 16) C(input_port, 16, 8) C(output_port, 24, 8) C(reserved, 32, 32) \
	C(sl2vl, 64, 64)
RECORD(sl2vl_record, SL2VL_RECORD)

/* VLArbitrationTableRecord: IBA 15.2.5.9 */
#define VLARB_RECORD(C) \
	C(lid, 0, 16) C(output_port, 16, 8) C(block, 24, 8) C(reserved, 32, 32) \
	C(vl_arbitration_table, 64, 512)
RECORD(vlarb_record, VLARB_RECORD)

/* P_KeyTableRecord: IBA 15.2.5.11 */
#define PKEY_RECORD(C) \
	C(lid, 0, 16) C(block, 16, 16) C(port, 32, 8) C(reserved, 40, 24) C(pkey_table, 64, 512)
RECORD(pkey_record, PKEY_RECORD)

/* GUIDInfoRecord: IBA 15.2.5.18 (LID, BlockNum, two reserved, then each GUID its own bit) */
#define GUID_INFO_RECORD(C) \
	C(lid, 0, 16) C(block, 16, 8) C(reserved, 24, 8) C(reserved2, 32, 32) \
	C(guid0, 64, 64) C(guid1, 128, 64) C(guid2, 192, 64) C(guid3, 256, 64) \
	C(guid4, 320, 64) C(guid5, 384, 64) C(guid6, 448, 64) C(guid7, 512, 64)
RECORD(guid_info_record, GUID_INFO_RECORD)

/*
 * ServiceRecord: IBA 15.2.5.14, table 204 (ServiceID, ServiceGID,
 * ServiceP_Key, reserved, ServiceLease, ServiceKey, ServiceName, then every
 * element of ServiceData8/16/32/64 its own component)
 */
#define SD8(C, i)	C(service_data8_##i, 896 + 8 * (i), 8)
#define SD16(C, i)	C(service_data16_##i, 1024 + 16 * (i), 16)
#define SERVICE_RECORD_FIELDS(C) \
	C(service_id, 0, 64) C(service_gid, 64, 128) C(service_pkey, 192, 16) \
	C(reserved, 208, 16) C(service_lease, 224, 32) C(service_key, 256, 128) \
	C(service_name, 384, 512) \
	SD8(C, 0) SD8(C, 1) SD8(C, 2) SD8(C, 3) SD8(C, 4) SD8(C, 5) SD8(C, 6) SD8(C, 7) \
	SD8(C, 8) SD8(C, 9) SD8(C, 10) SD8(C, 11) SD8(C, 12) SD8(C, 13) SD8(C, 14) \
	SD8(C, 15) SD16(C, 0) SD16(C, 1) SD16(C, 2) SD16(C, 3) SD16(C, 4) SD16(C, 5) \
	SD16(C, 6) SD16(C, 7) C(service_data32_0, 1152, 32) C(service_data32_1, 1184, 32) \
	C(service_data32_2, 1216, 32) C(service_data32_3, 1248, 32) \
	C(service_data64_0, 1280, 64) C(service_data64_1, 1344, 64)
RECORD(service_record, SERVICE_RECORD_FIELDS)

/*
 * InformInfo: IBA 13.4.8.3, table 125 (GID, LIDRangeBegin, LIDRangeEnd,
 * reserved, IsGeneric, Subscribe, Type, TrapNumber/DeviceID, QPN, reserved,
 * RespTimeValue, reserved, ProducerType/VendorID), from bit b
 */
#define INFORM_FIELDS(C, b, res1, res2, res3) \
	C(gid, (b) + 0, 128) C(lid_range_begin, (b) + 128, 16) \
	C(lid_range_end, (b) + 144, 16) C(res1, (b) + 160, 16) C(is_generic, (b) + 176, 8) \
	C(subscribe, (b) + 184, 8) C(type, (b) + 192, 16) C(trap_number, (b) + 208, 16) \
	C(qpn, (b) + 224, 24) C(res2, (b) + 248, 3) C(resp_time_value, (b) + 251, 5) \
	C(res3, (b) + 256, 8) C(producer_type, (b) + 264, 24)
#define INFORM_INFO_FIELDS(C)	INFORM_FIELDS(C, 0, reserved, reserved2, reserved3)
RECORD(inform_info, INFORM_INFO_FIELDS)

/* InformInfoRecord: IBA 15.2.5.12 (SubscriberGID, Enum, reserved, InformInfo) */
#define INFORM_INFO_RECORD_FIELDS(C) \
	C(subscriber_gid, 0, 128) C(enum, 128, 16) C(reserved, 144, 48) \
	INFORM_FIELDS(C, 192, reserved2, reserved3, reserved4)
RECORD(inform_info_record, INFORM_INFO_RECORD_FIELDS)

/*
 * The path parameters PathRecord (from bit 352) and MultiPathRecord (from
 * bit 0) share, in the same order and widths: RawTraffic, reserved,
 * FlowLabel, HopLimit, TClass, Reversible, NumbPath, P_Key, QoSClass, SL,
 * MTU (selector, value), Rate (selector, value), PacketLifeTime (selector,
 * value)
 */
#define PATH_PARAMS_FIELDS(C, b) \
	C(raw_traffic, (b) + 0, 1) C(reserved, (b) + 1, 3) C(flow_label, (b) + 4, 20) \
	C(hop_limit, (b) + 24, 8) C(tclass, (b) + 32, 8) C(reversible, (b) + 40, 1) \
	C(num_path, (b) + 41, 7) C(pkey, (b) + 48, 16) C(qos_class, (b) + 64, 12) \
	C(sl, (b) + 76, 4) C(mtu_selector, (b) + 80, 2) C(mtu, (b) + 82, 6) \
	C(rate_selector, (b) + 88, 2) C(rate, (b) + 90, 6) \
	C(packet_life_time_selector, (b) + 96, 2) C(packet_life_time, (b) + 98, 6)

/* MultiPathRecord: IBA 15.2.5.20, the fixed part before the GIDs */
#define MULTIPATH_RECORD_FIELDS(C) \
	PATH_PARAMS_FIELDS(C, 0) C(service_id_msb, 104, 8) C(independence_selector, 112, 2) \
	C(reserved2, 114, 6) C(sgid_count, 120, 8) C(dgid_count, 128, 8) \
	C(service_id_lsb, 136, 56)
RECORD(multipath_record, MULTIPATH_RECORD_FIELDS)

/* PathRecord: IBA 15.2.5.16, table 209 (ServiceID takes two mask bits) */
#define PATH_RECORD_FIELDS(C) \
	C(service_id_hi, 0, 32) C(service_id_lo, 32, 32) C(dgid, 64, 128) C(sgid, 192, 128) \
	C(dlid, 320, 16) C(slid, 336, 16) PATH_PARAMS_FIELDS(C, 352) C(preference, 456, 8) \
	C(reserved2, 464, 48)
RECORD(path_record, PATH_RECORD_FIELDS)

/*
 * MulticastForwardingTableRecord: IBA 15.2.5.8 (LID, Position, reserved,
 * BlockNum, reserved, 32 port masks)
 */
#define MFT_RECORD(C) \
	C(lid, 0, 16) C(position, 16, 4) C(reserved, 20, 3) C(block, 23, 9) \
	C(reserved2, 32, 32) C(port_masks, 64, 512)
RECORD(mft_record, MFT_RECORD)

/*
 * MCMemberRecord: IBA 15.2.5.17, table 213: MGID, PortGID, Q_Key, MLID,
 * MTU (selector, value), TClass, P_Key, Rate (selector, value),
 * PacketLifeTime (selector, value), SL, FlowLabel, HopLimit, Scope,
 * JoinState, ProxyJoin, reserved
 */
#define MCMEMBER_RECORD(C) \
	C(mgid, 0, 128) C(port_gid, 128, 128) C(qkey, 256, 32) C(mlid, 288, 16) \
	C(mtu_selector, 304, 2) C(mtu, 306, 6) C(tclass, 312, 8) C(pkey, 320, 16) \
	C(rate_selector, 336, 2) C(rate, 338, 6) C(packet_life_time_selector, 344, 2) \
	C(packet_life_time, 346, 6) C(sl, 352, 4) C(flow_label, 356, 20) \
	C(hop_limit, 376, 8) C(scope, 384, 4) C(join_state, 388, 4) C(proxy_join, 392, 1) \
	C(reserved, 393, 23)
RECORD(mcmember_record, MCMEMBER_RECORD)

#define TABLE(id) id##_fields, id##_names, sizeof(id##_fields) / sizeof(id##_fields[0])

/*
 * Indexed by attribute ID (all below 256): the SA looks a table up for
 * every record it matches, so a lookup must not be a search
 */
#define RECORD_ATTRS 256
static const struct {
	uint16_t size;
	const struct field *f;
	const char *const *names;
	unsigned int n;
} records[RECORD_ATTRS] = {
	[SA_ATTR_NODE_RECORD] = { NODE_RECORD_SIZE, TABLE(node_record) },
	[SA_ATTR_PORT_INFO_RECORD] = { PORT_INFO_RECORD_SIZE, TABLE(port_info_record) },
	[SA_ATTR_SWITCH_INFO_RECORD] = { SWITCH_INFO_RECORD_SIZE, TABLE(switch_info_record) },
	[SA_ATTR_LINK_RECORD] = { LINK_RECORD_SIZE, TABLE(link_record) },
	[SA_ATTR_LFT_RECORD] = { LFT_RECORD_SIZE, TABLE(lft_record) },
	[SA_ATTR_SM_INFO_RECORD] = { SM_INFO_RECORD_SIZE, TABLE(sm_info_record) },
	[SA_ATTR_SL2VL_RECORD] = { SL2VL_RECORD_SIZE, TABLE(sl2vl_record) },
	[SA_ATTR_VLARB_RECORD] = { VLARB_RECORD_SIZE, TABLE(vlarb_record) },
	[SA_ATTR_PKEY_RECORD] = { PKEY_RECORD_SIZE, TABLE(pkey_record) },
	[SA_ATTR_GUID_INFO_RECORD] = { GUID_INFO_RECORD_SIZE, TABLE(guid_info_record) },
	[SA_ATTR_PATH_RECORD] = { PATH_RECORD_SIZE, TABLE(path_record) },
	[SA_ATTR_MFT_RECORD] = { MFT_RECORD_SIZE, TABLE(mft_record) },
	[SA_ATTR_MCMEMBER_RECORD] = { MCR_SIZE, TABLE(mcmember_record) },
	[SA_ATTR_SERVICE_RECORD] = { SR_SIZE, TABLE(service_record) },
	[SA_ATTR_INFORM_INFO] = { INFORM_SIZE, TABLE(inform_info) },
	[SA_ATTR_INFORM_INFO_RECORD] = { IIR_SIZE, TABLE(inform_info_record) },
	[SA_ATTR_MULTIPATH_RECORD] = { MPR_FIXED_SIZE, TABLE(multipath_record) },
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
	*name = records[i].names[field];
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

void path_record_encode(const struct path_record *r, uint8_t o[PATH_RECORD_SIZE])
{
	memset(o, 0, PATH_RECORD_SIZE);
	PATH_RECORD(ENC_X, ENC_B)
}

void path_record_decode(const uint8_t in[PATH_RECORD_SIZE], struct path_record *r)
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
	memset(out, 0, MFT_RECORD_SIZE);
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

	memset(out, 0, NODE_RECORD_SIZE);
	SET(out, 0, 16, lid);
	node_info_encode(ni, d);
	memcpy(out + 4, d, 40);
	node_desc_encode(nd, out + 44);
}

void sa_port_info_record_encode(uint16_t lid, uint8_t port, const struct port_info *pi,
				uint8_t *out)
{
	memset(out, 0, PORT_INFO_RECORD_SIZE);
	SET(out, 0, 16, lid);
	out[2] = port;
	port_info_encode(pi, out + 4);
	/* IBA 15.2.5.3: the SA does not disclose M_Keys */
	memset(out + 4, 0, 8);
}

void sa_switch_info_record_encode(uint16_t lid, const struct switch_info *si, uint8_t *out)
{
	uint8_t d[SMP_DATA_SIZE];

	memset(out, 0, SWITCH_INFO_RECORD_SIZE);
	SET(out, 0, 16, lid);
	switch_info_encode(si, d);
	memcpy(out + 4, d, 20);
}

void sa_link_record_encode(uint16_t from_lid, uint8_t from_port, uint8_t to_port, uint16_t to_lid,
			   uint8_t *out)
{
	memset(out, 0, LINK_RECORD_SIZE);
	SET(out, 0, 16, from_lid);
	out[2] = from_port;
	out[3] = to_port;
	SET(out, 32, 16, to_lid);
}

void sa_lft_record_encode(uint16_t lid, uint16_t block, const struct lft_block *b, uint8_t *out)
{
	memset(out, 0, LFT_RECORD_SIZE);
	SET(out, 0, 16, lid);
	SET(out, 16, 16, block);
	lft_block_encode(b, out + 8);
}

void sa_sm_info_record_encode(uint16_t lid, const struct sm_info *si, uint8_t *out)
{
	uint8_t d[SMP_DATA_SIZE];

	memset(out, 0, SM_INFO_RECORD_SIZE);
	SET(out, 0, 16, lid);
	sm_info_encode(si, d);
	/* IBA 15.2.5.10: SM_Key is returned as 0 to unauthenticated requesters */
	memset(d + 8, 0, 8);
	memcpy(out + 4, d, 21);
}

void sa_sl2vl_record_encode(uint16_t lid, uint8_t in_port, uint8_t out_port, const uint8_t vl[16],
			    uint8_t *out)
{
	memset(out, 0, SL2VL_RECORD_SIZE);
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
	memset(out, 0, VLARB_RECORD_SIZE);
	SET(out, 0, 16, lid);
	out[2] = out_port;
	out[3] = block;
	memcpy(out + 8, table, 64);
}

void sa_pkey_record_encode(uint16_t lid, uint16_t block, uint8_t port, const uint16_t pkeys[32],
			   uint8_t *out)
{
	memset(out, 0, PKEY_RECORD_SIZE);
	SET(out, 0, 16, lid);
	SET(out, 16, 16, block);
	out[4] = port;
	for (unsigned int i = 0; i < 32; i++)
		SET(out, 64 + 16 * i, 16, pkeys[i]);
}

void sa_guid_info_record_encode(uint16_t lid, uint8_t block, const uint64_t guids[8],
				uint8_t *out)
{
	memset(out, 0, GUID_INFO_RECORD_SIZE);
	SET(out, 0, 16, lid);
	out[2] = block;
	for (unsigned int i = 0; i < 8; i++)
		SET(out, 64 + 64 * i, 64, guids[i]);
}

void class_port_info_encode(const struct class_port_info *c, uint8_t out[CLASS_PORT_INFO_SIZE])
{
	memset(out, 0, CLASS_PORT_INFO_SIZE);
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

void notice_details_port(uint8_t d[NOTICE_DETAILS_SIZE], uint16_t lid, uint8_t port)
{
	memset(d, 0, NOTICE_DETAILS_SIZE);
	wire_bits_set(d, 16, 16, lid);
	wire_bits_set(d, 32, 8, port);
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
