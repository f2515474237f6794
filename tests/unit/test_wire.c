// SPDX-License-Identifier: MIT
/*
 * mad/wire.c: round trips of every codec, a cross-check of every field
 * against libibmad's independent field table (both directions: our decoder
 * against mad_get_field, our encoder against a buffer built by
 * mad_set_field), and rejection of malformed input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "mad/pma.h"
#include "mad/sa_codec.h"
#include "mad/wire.h"
#include "tests/unit/unit.h"

#define ITERS	2000

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static uint64_t rnd_bits(unsigned int width)
{
	return width >= 64 ? rnd() : rnd() & ((UINT64_C(1) << width) - 1);
}

static void rnd_fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)rnd();
}

/*
 * A struct member described generically, so that one table drives the
 * round trips and the libibmad comparisons.
 */
struct field {
	const char *name;
	size_t off, size;	/* member in our struct */
	unsigned int width;	/* bits on the wire */
	enum MAD_FIELDS ibf;	/* libibmad's name for it */
};

#define F(type, member, w, ibf) \
	{ #member, offsetof(struct type, member), sizeof(((struct type *)0)->member), w, ibf }

static uint64_t member_get(const void *s, const struct field *f)
{
	const uint8_t *p = (const uint8_t *)s + f->off;

	switch (f->size) {
	case 1: return *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static void member_set(void *s, const struct field *f, uint64_t val)
{
	uint8_t *p = (uint8_t *)s + f->off;

	switch (f->size) {
	case 1: *p = (uint8_t)val; break;
	case 2: { uint16_t v = (uint16_t)val; memcpy(p, &v, 2); break; }
	case 4: { uint32_t v = (uint32_t)val; memcpy(p, &v, 4); break; }
	default: memcpy(p, &val, 8); break;
	}
}

static uint64_t ib_get(uint8_t *buf, const struct field *f)
{
	return f->width == 64 ? mad_get_field64(buf, 0, f->ibf) : mad_get_field(buf, 0, f->ibf);
}

static void ib_set(uint8_t *buf, const struct field *f, uint64_t v)
{
	if (f->width == 64)
		mad_set_field64(buf, 0, f->ibf, v);
	else
		mad_set_field(buf, 0, f->ibf, (uint32_t)v);
}

/* PortInfo, IBA 14.2.5.6 table 155: widths from the spec, names from libibmad */
static const struct field port_fields[] = {
	F(port_info, mkey, 64, IB_PORT_MKEY_F),
	F(port_info, gid_prefix, 64, IB_PORT_GID_PREFIX_F),
	F(port_info, lid, 16, IB_PORT_LID_F),
	F(port_info, master_sm_lid, 16, IB_PORT_SMLID_F),
	F(port_info, cap_mask, 32, IB_PORT_CAPMASK_F),
	F(port_info, diag_code, 16, IB_PORT_DIAG_F),
	F(port_info, mkey_lease_period, 16, IB_PORT_MKEY_LEASE_F),
	F(port_info, local_port, 8, IB_PORT_LOCAL_PORT_F),
	F(port_info, link_width_enabled, 8, IB_PORT_LINK_WIDTH_ENABLED_F),
	F(port_info, link_width_supported, 8, IB_PORT_LINK_WIDTH_SUPPORTED_F),
	F(port_info, link_width_active, 8, IB_PORT_LINK_WIDTH_ACTIVE_F),
	F(port_info, link_speed_supported, 4, IB_PORT_LINK_SPEED_SUPPORTED_F),
	F(port_info, port_state, 4, IB_PORT_STATE_F),
	F(port_info, phys_state, 4, IB_PORT_PHYS_STATE_F),
	F(port_info, link_down_default_state, 4, IB_PORT_LINK_DOWN_DEF_F),
	F(port_info, mkey_protect_bits, 2, IB_PORT_MKEY_PROT_BITS_F),
	F(port_info, lmc, 3, IB_PORT_LMC_F),
	F(port_info, link_speed_active, 4, IB_PORT_LINK_SPEED_ACTIVE_F),
	F(port_info, link_speed_enabled, 4, IB_PORT_LINK_SPEED_ENABLED_F),
	F(port_info, neighbor_mtu, 4, IB_PORT_NEIGHBOR_MTU_F),
	F(port_info, master_sm_sl, 4, IB_PORT_SMSL_F),
	F(port_info, vl_cap, 4, IB_PORT_VL_CAP_F),
	F(port_info, init_type, 4, IB_PORT_INIT_TYPE_F),
	F(port_info, vl_high_limit, 8, IB_PORT_VL_HIGH_LIMIT_F),
	F(port_info, vl_arb_high_cap, 8, IB_PORT_VL_ARBITRATION_HIGH_CAP_F),
	F(port_info, vl_arb_low_cap, 8, IB_PORT_VL_ARBITRATION_LOW_CAP_F),
	F(port_info, init_type_reply, 4, IB_PORT_INIT_TYPE_REPLY_F),
	F(port_info, mtu_cap, 4, IB_PORT_MTU_CAP_F),
	F(port_info, vl_stall_count, 3, IB_PORT_VL_STALL_COUNT_F),
	F(port_info, hoq_life, 5, IB_PORT_HOQ_LIFE_F),
	F(port_info, op_vls, 4, IB_PORT_OPER_VLS_F),
	F(port_info, pkey_enf_inbound, 1, IB_PORT_PART_EN_INB_F),
	F(port_info, pkey_enf_outbound, 1, IB_PORT_PART_EN_OUTB_F),
	F(port_info, filter_raw_inbound, 1, IB_PORT_FILTER_RAW_INB_F),
	F(port_info, filter_raw_outbound, 1, IB_PORT_FILTER_RAW_OUTB_F),
	F(port_info, mkey_violations, 16, IB_PORT_MKEY_VIOL_F),
	F(port_info, pkey_violations, 16, IB_PORT_PKEY_VIOL_F),
	F(port_info, qkey_violations, 16, IB_PORT_QKEY_VIOL_F),
	F(port_info, guid_cap, 8, IB_PORT_GUID_CAP_F),
	F(port_info, client_reregister, 1, IB_PORT_CLIENT_REREG_F),
	F(port_info, mcast_pkey_trap_suppr, 2, IB_PORT_MCAST_PKEY_SUPR_ENAB_F),
	F(port_info, subnet_timeout, 5, IB_PORT_SUBN_TIMEOUT_F),
	F(port_info, resp_time_value, 5, IB_PORT_RESP_TIME_VAL_F),
	F(port_info, local_phy_errors, 4, IB_PORT_LOCAL_PHYS_ERR_F),
	F(port_info, overrun_errors, 4, IB_PORT_OVERRUN_ERR_F),
	F(port_info, max_credit_hint, 16, IB_PORT_MAX_CREDIT_HINT_F),
	F(port_info, link_round_trip_latency, 24, IB_PORT_LINK_ROUND_TRIP_F),
	F(port_info, cap_mask2, 16, IB_PORT_CAPMASK2_F),
	F(port_info, link_speed_ext_active, 4, IB_PORT_LINK_SPEED_EXT_ACTIVE_F),
	F(port_info, link_speed_ext_supported, 4, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F),
	F(port_info, link_speed_ext_enabled, 5, IB_PORT_LINK_SPEED_EXT_ENABLED_F),
};

/* Mellanox ExtendedPortInfo (a vendor attribute) */
static const struct field mlnx_epi_fields[] = {
	F(mlnx_ext_port_info, state_change_enable, 8, IB_MLNX_EXT_PORT_STATE_CHG_ENABLE_F),
	F(mlnx_ext_port_info, link_speed_supported, 8, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F),
	F(mlnx_ext_port_info, link_speed_enabled, 8, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F),
	F(mlnx_ext_port_info, link_speed_active, 8, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F),
};

/* SwitchInfo, IBA 14.2.5.4 table 148 */
static const struct field sw_fields[] = {
	F(switch_info, lft_cap, 16, IB_SW_LINEAR_FDB_CAP_F),
	F(switch_info, rft_cap, 16, IB_SW_RANDOM_FDB_CAP_F),
	F(switch_info, mft_cap, 16, IB_SW_MCAST_FDB_CAP_F),
	F(switch_info, lft_top, 16, IB_SW_LINEAR_FDB_TOP_F),
	F(switch_info, default_port, 8, IB_SW_DEF_PORT_F),
	F(switch_info, default_mcast_primary_port, 8, IB_SW_DEF_MCAST_PRIM_F),
	F(switch_info, default_mcast_not_primary_port, 8, IB_SW_DEF_MCAST_NOT_PRIM_F),
	F(switch_info, life_time_value, 5, IB_SW_LIFE_TIME_F),
	F(switch_info, port_state_change, 1, IB_SW_STATE_CHANGE_F),
	F(switch_info, optimized_sl2vl, 2, IB_SW_OPT_SLTOVL_MAPPING_F),
	F(switch_info, lids_per_port, 16, IB_SW_LIDS_PER_PORT_F),
	F(switch_info, partition_enf_cap, 16, IB_SW_PARTITION_ENFORCE_CAP_F),
	F(switch_info, inbound_enf_cap, 1, IB_SW_PARTITION_ENF_INB_F),
	F(switch_info, outbound_enf_cap, 1, IB_SW_PARTITION_ENF_OUTB_F),
	F(switch_info, filter_raw_inbound_cap, 1, IB_SW_FILTER_RAW_INB_F),
	F(switch_info, filter_raw_outbound_cap, 1, IB_SW_FILTER_RAW_OUTB_F),
	F(switch_info, enhanced_port0, 1, IB_SW_ENHANCED_PORT0_F),
	F(switch_info, mft_top, 16, IB_SW_MCAST_FDB_TOP_F),
};

/* NodeInfo, IBA 14.2.5.3 table 147 */
static const struct field node_fields[] = {
	F(node_info, base_version, 8, IB_NODE_BASE_VERS_F),
	F(node_info, class_version, 8, IB_NODE_CLASS_VERS_F),
	F(node_info, node_type, 8, IB_NODE_TYPE_F),
	F(node_info, num_ports, 8, IB_NODE_NPORTS_F),
	F(node_info, sys_guid, 64, IB_NODE_SYSTEM_GUID_F),
	F(node_info, node_guid, 64, IB_NODE_GUID_F),
	F(node_info, port_guid, 64, IB_NODE_PORT_GUID_F),
	F(node_info, partition_cap, 16, IB_NODE_PARTITION_CAP_F),
	F(node_info, device_id, 16, IB_NODE_DEVID_F),
	F(node_info, revision, 32, IB_NODE_REVISION_F),
	F(node_info, local_port, 8, IB_NODE_LOCAL_PORT_F),
	F(node_info, vendor_id, 24, IB_NODE_VENDORID_F),
};

/* PMA ClassPortInfo (IBA 13.4.8.1), the part smd reads */
static const struct field cpi_fields[] = {
	F(pma_class_port_info, base_version, 8, IB_CPI_BASEVER_F),
	F(pma_class_port_info, class_version, 8, IB_CPI_CLASSVER_F),
	F(pma_class_port_info, cap_mask, 16, IB_CPI_CAPMASK_F),
	F(pma_class_port_info, cap_mask2, 27, IB_CPI_CAPMASK2_F),
	F(pma_class_port_info, resp_time_value, 5, IB_CPI_RESP_TIME_VALUE_F),
};

/* PortCounters, IBA 16.1.3.5 */
static const struct field pc_fields[] = {
	F(pma_port_counters, port_select, 8, IB_PC_PORT_SELECT_F),
	F(pma_port_counters, counter_select, 16, IB_PC_COUNTER_SELECT_F),
	F(pma_port_counters, symbol_errors, 16, IB_PC_ERR_SYM_F),
	F(pma_port_counters, link_error_recovery, 8, IB_PC_LINK_RECOVERS_F),
	F(pma_port_counters, link_downed, 8, IB_PC_LINK_DOWNED_F),
	F(pma_port_counters, rcv_errors, 16, IB_PC_ERR_RCV_F),
	F(pma_port_counters, rcv_remote_phys_errors, 16, IB_PC_ERR_PHYSRCV_F),
	F(pma_port_counters, rcv_switch_relay_errors, 16, IB_PC_ERR_SWITCH_REL_F),
	F(pma_port_counters, xmit_discards, 16, IB_PC_XMT_DISCARDS_F),
	F(pma_port_counters, xmit_constraint_errors, 8, IB_PC_ERR_XMTCONSTR_F),
	F(pma_port_counters, rcv_constraint_errors, 8, IB_PC_ERR_RCVCONSTR_F),
	F(pma_port_counters, counter_select2, 8, IB_PC_COUNTER_SELECT2_F),
	F(pma_port_counters, local_link_integrity_errors, 4, IB_PC_ERR_LOCALINTEG_F),
	F(pma_port_counters, excessive_buffer_overrun_errors, 4, IB_PC_ERR_EXCESS_OVR_F),
	F(pma_port_counters, vl15_dropped, 16, IB_PC_VL15_DROPPED_F),
	F(pma_port_counters, xmit_data, 32, IB_PC_XMT_BYTES_F),
	F(pma_port_counters, rcv_data, 32, IB_PC_RCV_BYTES_F),
	F(pma_port_counters, xmit_pkts, 32, IB_PC_XMT_PKTS_F),
	F(pma_port_counters, rcv_pkts, 32, IB_PC_RCV_PKTS_F),
	F(pma_port_counters, xmit_wait, 32, IB_PC_XMT_WAIT_F),
};

/* PortCountersExtended, IBA 16.1.4.11 */
static const struct field pce_fields[] = {
	F(pma_port_counters_ext, port_select, 8, IB_PC_EXT_PORT_SELECT_F),
	F(pma_port_counters_ext, counter_select, 16, IB_PC_EXT_COUNTER_SELECT_F),
	F(pma_port_counters_ext, xmit_data, 64, IB_PC_EXT_XMT_BYTES_F),
	F(pma_port_counters_ext, rcv_data, 64, IB_PC_EXT_RCV_BYTES_F),
	F(pma_port_counters_ext, xmit_pkts, 64, IB_PC_EXT_XMT_PKTS_F),
	F(pma_port_counters_ext, rcv_pkts, 64, IB_PC_EXT_RCV_PKTS_F),
	F(pma_port_counters_ext, unicast_xmit_pkts, 64, IB_PC_EXT_XMT_UPKTS_F),
	F(pma_port_counters_ext, unicast_rcv_pkts, 64, IB_PC_EXT_RCV_UPKTS_F),
	F(pma_port_counters_ext, multicast_xmit_pkts, 64, IB_PC_EXT_XMT_MPKTS_F),
	F(pma_port_counters_ext, multicast_rcv_pkts, 64, IB_PC_EXT_RCV_MPKTS_F),
};

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static unsigned int field_errors;

/* CHECK_EQ with the field's name, without flooding the log on a systematic error */
static void check_field(const char *what, const struct field *f, uint64_t ours, uint64_t theirs)
{
	if (ours == theirs) {
		unit_passed++;
		return;
	}
	unit_failed++;
	if (field_errors++ < 20)
		fprintf(stderr, "%s: field %s: ours 0x%llx, libibmad 0x%llx\n", what, f->name,
			(unsigned long long)ours, (unsigned long long)theirs);
}

static void check_bytes(const char *what, const uint8_t *a, const uint8_t *b, size_t len)
{
	if (!memcmp(a, b, len)) {
		unit_passed++;
		return;
	}
	unit_failed++;
	if (field_errors++ < 20) {
		for (size_t i = 0; i < len; i++)
			if (a[i] != b[i]) {
				fprintf(stderr, "%s: byte %zu: 0x%02x vs 0x%02x\n", what, i,
					a[i], b[i]);
				break;
			}
	}
}

/* ---- raw bit access ---- */

static uint64_t ref_bits_get(const uint8_t *buf, unsigned int off, unsigned int w)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < w; i++) {
		unsigned int bit = off + i;

		v = (v << 1) | ((buf[bit / 8] >> (7 - bit % 8)) & 1);
	}
	return v;
}

static void test_bits(void)
{
	uint8_t buf[80], ref[80];

	for (int it = 0; it < 20000; it++) {
		unsigned int w = 1 + (unsigned int)(rnd() % 64);
		unsigned int off = (unsigned int)(rnd() % (512 - w));
		unsigned int span = (off + w - 1) / 8 - off / 8 + 1;
		uint64_t v = rnd_bits(w);

		rnd_fill(buf, sizeof(buf));
		memcpy(ref, buf, sizeof(buf));
		(void)span;
		if (ref_bits_get(buf, off, w) != wire_bits_get(buf, off, w)) {
			CHECK_EQ(wire_bits_get(buf, off, w), ref_bits_get(buf, off, w));
			fprintf(stderr, "  wire_bits_get off %u width %u\n", off, w);
			continue;
		}
		wire_bits_set(buf, off, w, v);
		/* The field reads back, and no bit outside it changed */
		if (ref_bits_get(buf, off, w) != v) {
			CHECK_EQ(ref_bits_get(buf, off, w), v);
			fprintf(stderr, "  wire_bits_set off %u width %u\n", off, w);
			continue;
		}
		for (unsigned int bit = 0; bit < sizeof(buf) * 8; bit++) {
			if (bit >= off && bit < off + w)
				continue;
			if (ref_bits_get(buf, bit, 1) != ref_bits_get(ref, bit, 1)) {
				CHECK(!"wire_bits_set changed a bit outside the field");
				fprintf(stderr, "  off %u width %u bit %u\n", off, w, bit);
				break;
			}
		}
		unit_passed++;
	}
	/* IBA numbering: bit 0 is the MSB of byte 0 */
	memset(buf, 0, sizeof(buf));
	wire_bits_set(buf, 0, 1, 1);
	CHECK_EQ(buf[0], 0x80);
	wire_bits_set(buf, 12, 4, 0xa);
	CHECK_EQ(buf[1], 0x0a);
	wire_bits_set(buf, 16, 16, 0x1234);
	CHECK_EQ(buf[2], 0x12);
	CHECK_EQ(buf[3], 0x34);
	CHECK_EQ(wire_bits_get(buf, 16, 16), 0x1234);
	CHECK_EQ(wire_bits_get(buf, 0, 4), 0x8);
}

/* ---- SMP headers ---- */

static void rnd_smp(struct smp *s, bool dr)
{
	memset(s, 0, sizeof(*s));
	s->hdr.base_version = 1;
	s->hdr.mgmt_class = dr ? MAD_CLASS_SMI_DR : MAD_CLASS_SMI;
	s->hdr.class_version = 1;
	s->hdr.method = (uint8_t)rnd();
	s->hdr.tid = rnd();
	s->hdr.attr_id = (uint16_t)rnd();
	s->hdr.attr_mod = (uint32_t)rnd();
	s->mkey = rnd();
	rnd_fill(s->data, sizeof(s->data));
	if (dr) {
		s->hdr.status = (uint16_t)rnd_bits(15);
		s->hdr.direction = rnd() & 1;
		s->hdr.hop_cnt = (uint8_t)(rnd() % (SMP_MAX_HOPS + 1));
		s->hdr.hop_ptr = (uint8_t)(rnd() % (s->hdr.hop_cnt + 2));
		s->dr_slid = (uint16_t)rnd();
		s->dr_dlid = (uint16_t)rnd();
		rnd_fill(s->initial_path, sizeof(s->initial_path));
		rnd_fill(s->return_path, sizeof(s->return_path));
	} else {
		s->hdr.status = (uint16_t)rnd();
	}
}

static bool smp_equal(const struct smp *a, const struct smp *b)
{
	const struct mad_hdr *x = &a->hdr, *y = &b->hdr;

	return x->base_version == y->base_version && x->mgmt_class == y->mgmt_class &&
	       x->class_version == y->class_version && x->method == y->method &&
	       x->status == y->status && x->direction == y->direction &&
	       x->hop_ptr == y->hop_ptr && x->hop_cnt == y->hop_cnt && x->tid == y->tid &&
	       x->attr_id == y->attr_id && x->attr_mod == y->attr_mod && a->mkey == b->mkey &&
	       a->dr_slid == b->dr_slid && a->dr_dlid == b->dr_dlid &&
	       !memcmp(a->data, b->data, sizeof(a->data)) &&
	       !memcmp(a->initial_path, b->initial_path, sizeof(a->initial_path)) &&
	       !memcmp(a->return_path, b->return_path, sizeof(a->return_path));
}

static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Compare our header encoding with libibmad's reading of it */
static void check_hdr_ibmad(const char *what, const struct smp *s, uint8_t *buf)
{
	const struct mad_hdr *h = &s->hdr;
	bool dr = h->mgmt_class == MAD_CLASS_SMI_DR;
	uint8_t path[64];

	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_BASEVER_F), h->base_version);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_MGMTCLASS_F), h->mgmt_class);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_CLASSVER_F), h->class_version);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_METHOD_F) |
		 mad_get_field(buf, 0, IB_MAD_RESPONSE_F) << 7, h->method);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_RESPONSE_F), !!(h->method & MAD_METHOD_RESP_BIT));
	CHECK(mad_get_field64(buf, 0, IB_MAD_TRID_F) == h->tid);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_ATTRID_F), h->attr_id);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_ATTRMOD_F), h->attr_mod);
	CHECK(mad_get_field64(buf, 0, IB_MAD_MKEY_F) == s->mkey);
	check_bytes(what, buf + IB_SMP_DATA_OFFS, s->data, IB_SMP_DATA_SIZE);
	if (dr) {
		/* libibmad reads DrSmpStatus as the 15 bits after the D bit */
		CHECK_EQ(mad_get_field(buf, 0, IB_DRSMP_DIRECTION_F), h->direction);
		CHECK_EQ(mad_get_field(buf, 0, IB_DRSMP_STATUS_F), h->status);
		CHECK_EQ(mad_get_field(buf, 0, IB_DRSMP_HOPPTR_F), h->hop_ptr);
		CHECK_EQ(mad_get_field(buf, 0, IB_DRSMP_HOPCNT_F), h->hop_cnt);
		CHECK_EQ(mad_get_field(buf, 0, IB_DRSMP_DRSLID_F), s->dr_slid);
		CHECK_EQ(mad_get_field(buf, 0, IB_DRSMP_DRDLID_F), s->dr_dlid);
		mad_get_array(buf, 0, IB_DRSMP_PATH_F, path);
		check_bytes(what, path, s->initial_path, sizeof(path));
		mad_get_array(buf, 0, IB_DRSMP_RPATH_F, path);
		check_bytes(what, path, s->return_path, sizeof(path));
	} else {
		CHECK_EQ(mad_get_field(buf, 0, IB_MAD_STATUS_F), h->status);
	}
}

/* Build a MAD with libibmad's setters for the same header */
static void build_hdr_ibmad(const struct smp *s, uint8_t *buf)
{
	const struct mad_hdr *h = &s->hdr;

	memset(buf, 0, MAD_SIZE);
	mad_set_field(buf, 0, IB_MAD_BASEVER_F, h->base_version);
	mad_set_field(buf, 0, IB_MAD_MGMTCLASS_F, h->mgmt_class);
	mad_set_field(buf, 0, IB_MAD_CLASSVER_F, h->class_version);
	mad_set_field(buf, 0, IB_MAD_METHOD_F, h->method & 0x7f);
	mad_set_field(buf, 0, IB_MAD_RESPONSE_F, h->method >> 7);
	mad_set_field64(buf, 0, IB_MAD_TRID_F, h->tid);
	mad_set_field(buf, 0, IB_MAD_ATTRID_F, h->attr_id);
	mad_set_field(buf, 0, IB_MAD_ATTRMOD_F, h->attr_mod);
	mad_set_field64(buf, 0, IB_MAD_MKEY_F, s->mkey);
	memcpy(buf + IB_SMP_DATA_OFFS, s->data, IB_SMP_DATA_SIZE);
	if (h->mgmt_class == MAD_CLASS_SMI_DR) {
		mad_set_field(buf, 0, IB_DRSMP_STATUS_F, h->status);
		mad_set_field(buf, 0, IB_DRSMP_DIRECTION_F, h->direction);
		mad_set_field(buf, 0, IB_DRSMP_HOPPTR_F, h->hop_ptr);
		mad_set_field(buf, 0, IB_DRSMP_HOPCNT_F, h->hop_cnt);
		mad_set_field(buf, 0, IB_DRSMP_DRSLID_F, s->dr_slid);
		mad_set_field(buf, 0, IB_DRSMP_DRDLID_F, s->dr_dlid);
		mad_set_array(buf, 0, IB_DRSMP_PATH_F, (void *)s->initial_path);
		mad_set_array(buf, 0, IB_DRSMP_RPATH_F, (void *)s->return_path);
	} else {
		mad_set_field(buf, 0, IB_MAD_STATUS_F, h->status);
	}
}

static void test_smp_roundtrip(void)
{
	uint8_t buf[MAD_SIZE], ref[MAD_SIZE];
	struct smp s, d;

	for (int it = 0; it < ITERS; it++) {
		bool dr = it & 1;

		rnd_smp(&s, dr);
		memset(buf, 0xa5, sizeof(buf));
		CHECK_EQ(smp_encode(&s, buf), 0);
		memset(&d, 0x5a, sizeof(d));
		CHECK_EQ(smp_decode(buf, sizeof(buf), &d), 0);
		CHECK(smp_equal(&s, &d));
		check_hdr_ibmad(dr ? "DR SMP header" : "LID SMP header", &s, buf);
		build_hdr_ibmad(&s, ref);
		check_bytes(dr ? "DR SMP vs mad_set_field" : "LID SMP vs mad_set_field", buf, ref,
			    MAD_SIZE);
		/* Reserved areas are zero */
		CHECK_EQ(buf[18], 0);
		CHECK_EQ(buf[19], 0);
		if (dr) {
			CHECK(all_zero(buf + 36, 28));
		} else {
			CHECK(all_zero(buf + 32, 32));
			CHECK(all_zero(buf + 128, 128));
		}
	}

	/* LID routed: the DR-only members are ignored on encode, zero on decode */
	rnd_smp(&s, false);
	s.hdr.direction = true;
	s.hdr.hop_cnt = 5;
	s.hdr.hop_ptr = 3;
	s.dr_slid = 7;
	s.dr_dlid = 9;
	memset(s.initial_path, 1, sizeof(s.initial_path));
	CHECK_EQ(smp_encode(&s, buf), 0);
	CHECK_EQ(smp_decode(buf, sizeof(buf), &d), 0);
	CHECK_EQ(d.hdr.direction, 0);
	CHECK_EQ(d.hdr.hop_cnt, 0);
	CHECK_EQ(d.hdr.hop_ptr, 0);
	CHECK_EQ(d.dr_slid, 0);
	CHECK_EQ(d.dr_dlid, 0);
	CHECK(all_zero(d.initial_path, sizeof(d.initial_path)));
	CHECK(all_zero(d.return_path, sizeof(d.return_path)));

	/* A DR SMP: D bit, 15 status bits, hop fields, known bytes on the wire */
	rnd_smp(&s, true);
	s.hdr.method = MAD_METHOD_GET_RESP;
	s.hdr.direction = true;
	s.hdr.status = 0x7fff;
	s.hdr.hop_ptr = 3;
	s.hdr.hop_cnt = 2;
	s.hdr.tid = UINT64_C(0x0102030405060708);
	s.hdr.attr_id = SMP_ATTR_PORT_INFO;
	s.hdr.attr_mod = 0x11223344;
	s.mkey = UINT64_C(0x8877665544332211);
	s.dr_slid = 0xffff;
	s.dr_dlid = 0x1234;
	CHECK_EQ(smp_encode(&s, buf), 0);
	CHECK_EQ(buf[0], 1);
	CHECK_EQ(buf[1], 0x81);
	CHECK_EQ(buf[2], 1);
	CHECK_EQ(buf[3], 0x81);
	CHECK_EQ(buf[4], 0xff);
	CHECK_EQ(buf[5], 0xff);
	CHECK_EQ(buf[6], 3);
	CHECK_EQ(buf[7], 2);
	CHECK_EQ(buf[8], 0x01);
	CHECK_EQ(buf[15], 0x08);
	CHECK_EQ(buf[16], 0x00);
	CHECK_EQ(buf[17], 0x15);
	CHECK_EQ(buf[20], 0x11);
	CHECK_EQ(buf[23], 0x44);
	CHECK_EQ(buf[24], 0x88);
	CHECK_EQ(buf[31], 0x11);
	CHECK_EQ(buf[32], 0xff);
	CHECK_EQ(buf[33], 0xff);
	CHECK_EQ(buf[34], 0x12);
	CHECK_EQ(buf[35], 0x34);
	CHECK(!memcmp(buf + 64, s.data, 64));
	CHECK(!memcmp(buf + 128, s.initial_path, 64));
	CHECK(!memcmp(buf + 192, s.return_path, 64));
	/* D bit off, status still 15 bits */
	s.hdr.direction = false;
	s.hdr.status = 0x0004;
	CHECK_EQ(smp_encode(&s, buf), 0);
	CHECK_EQ(buf[4], 0x00);
	CHECK_EQ(buf[5], 0x04);
	CHECK_EQ(smp_decode(buf, MAD_SIZE, &d), 0);
	CHECK_EQ(d.hdr.direction, 0);
	CHECK_EQ(d.hdr.status, 4);
	/* The D bit does not leak into status and vice versa */
	s.hdr.direction = true;
	s.hdr.status = 0;
	CHECK_EQ(smp_encode(&s, buf), 0);
	CHECK_EQ(buf[4], 0x80);
	CHECK_EQ(buf[5], 0x00);
	CHECK_EQ(smp_decode(buf, MAD_SIZE, &d), 0);
	CHECK_EQ(d.hdr.direction, 1);
	CHECK_EQ(d.hdr.status, 0);
	/* A status wider than 15 bits loses its top bit to the D bit's place, not the D bit */
	s.hdr.direction = false;
	s.hdr.status = 0x8001;
	CHECK_EQ(smp_encode(&s, buf), 0);
	CHECK_EQ(buf[4], 0x00);
	CHECK_EQ(buf[5], 0x01);

	/* Decoding a buffer built by libibmad */
	for (int it = 0; it < ITERS; it++) {
		rnd_smp(&s, it & 1);
		build_hdr_ibmad(&s, ref);
		CHECK_EQ(smp_decode(ref, MAD_SIZE, &d), 0);
		CHECK(smp_equal(&s, &d));
	}

	/* Encode refuses what it cannot put on the wire */
	rnd_smp(&s, true);
	s.hdr.hop_cnt = SMP_MAX_HOPS + 1;
	CHECK_EQ(smp_encode(&s, buf), -EINVAL);
	rnd_smp(&s, false);
	s.hdr.mgmt_class = MAD_CLASS_SA;
	CHECK_EQ(smp_encode(&s, buf), -EINVAL);
}

static void test_smp_init(void)
{
	struct dr_path p = { 0 };
	struct smp s;

	p.hops = 3;
	p.port[1] = 1;
	p.port[2] = 17;
	p.port[3] = 36;
	CHECK_EQ(smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0x42, &p), 0);
	CHECK_EQ(s.hdr.base_version, 1);
	CHECK_EQ(s.hdr.class_version, 1);
	CHECK_EQ(s.hdr.mgmt_class, MAD_CLASS_SMI_DR);
	CHECK_EQ(s.hdr.method, MAD_METHOD_GET);
	CHECK_EQ(s.hdr.attr_id, SMP_ATTR_NODE_INFO);
	CHECK_EQ(s.hdr.attr_mod, 0x42);
	CHECK_EQ(s.hdr.hop_cnt, 3);
	CHECK_EQ(s.hdr.hop_ptr, 0);
	CHECK_EQ(s.hdr.direction, 0);
	CHECK_EQ(s.hdr.status, 0);
	CHECK_EQ(s.dr_slid, LID_PERMISSIVE);
	CHECK_EQ(s.dr_dlid, LID_PERMISSIVE);
	CHECK_EQ(s.initial_path[0], 0);
	CHECK_EQ(s.initial_path[1], 1);
	CHECK_EQ(s.initial_path[2], 17);
	CHECK_EQ(s.initial_path[3], 36);
	CHECK(all_zero(s.initial_path + 4, sizeof(s.initial_path) - 4));
	CHECK(all_zero(s.return_path, sizeof(s.return_path)));
	CHECK(all_zero(s.data, sizeof(s.data)));

	p.hops = SMP_MAX_HOPS;
	for (int i = 1; i <= SMP_MAX_HOPS; i++)
		p.port[i] = (uint8_t)i;
	CHECK_EQ(smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, &p), 0);
	CHECK_EQ(s.hdr.hop_cnt, SMP_MAX_HOPS);
	CHECK_EQ(s.initial_path[SMP_MAX_HOPS], SMP_MAX_HOPS);
	p.hops = SMP_MAX_HOPS + 1;
	CHECK_EQ(smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, &p), -EINVAL);
	p.hops = 255;
	CHECK_EQ(smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, &p), -EINVAL);
	CHECK_EQ(smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL), -EINVAL);

	CHECK_EQ(smp_init_lid(&s, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, 7), 0);
	CHECK_EQ(s.hdr.base_version, 1);
	CHECK_EQ(s.hdr.class_version, 1);
	CHECK_EQ(s.hdr.mgmt_class, MAD_CLASS_SMI);
	CHECK_EQ(s.hdr.method, MAD_METHOD_SET);
	CHECK_EQ(s.hdr.attr_id, SMP_ATTR_PORT_INFO);
	CHECK_EQ(s.hdr.attr_mod, 7);
	CHECK_EQ(s.hdr.hop_cnt, 0);
}

/* ---- attributes ---- */

static void rnd_node_info(struct node_info *ni)
{
	memset(ni, 0, sizeof(*ni));
	for (size_t i = 0; i < NFIELDS(node_fields); i++)
		member_set(ni, &node_fields[i], rnd_bits(node_fields[i].width));
	ni->node_type = (uint8_t)(1 + rnd() % 3);
	ni->num_ports = (uint8_t)(1 + rnd() % 255);
	if (!ni->node_guid)
		ni->node_guid = 1;
	ni->local_port = (uint8_t)(rnd() % (ni->num_ports + 1u));
	if (ni->node_type != NODE_TYPE_SWITCH && !ni->local_port)
		ni->local_port = 1;
}

static void test_node_info(void)
{
	uint8_t buf[SMP_DATA_SIZE], ref[SMP_DATA_SIZE];
	struct node_info ni, d;

	for (int it = 0; it < ITERS; it++) {
		rnd_node_info(&ni);
		memset(buf, 0xa5, sizeof(buf));
		node_info_encode(&ni, buf);
		memset(&d, 0x5a, sizeof(d));
		CHECK_EQ(node_info_decode(buf, &d), 0);
		memset(ref, 0, sizeof(ref));
		for (size_t i = 0; i < NFIELDS(node_fields); i++) {
			const struct field *f = &node_fields[i];

			check_field("NodeInfo round trip", f, member_get(&d, f),
				    member_get(&ni, f));
			check_field("NodeInfo encode", f, member_get(&ni, f), ib_get(buf, f));
			ib_set(ref, f, member_get(&ni, f));
		}
		check_bytes("NodeInfo vs mad_set_field", buf, ref, sizeof(buf));
	}
	/* Decode of random bytes reads every field where libibmad does */
	for (int it = 0; it < ITERS; it++) {
		rnd_fill(buf, sizeof(buf));
		node_info_decode(buf, &d);	/* fields are filled even when rejected */
		for (size_t i = 0; i < NFIELDS(node_fields); i++)
			check_field("NodeInfo decode", &node_fields[i],
				    member_get(&d, &node_fields[i]), ib_get(buf, &node_fields[i]));
	}
}

static void test_node_info_reject(void)
{
	uint8_t buf[SMP_DATA_SIZE];
	struct node_info ni = {
		.base_version = 1, .class_version = 1, .node_type = NODE_TYPE_CA,
		.num_ports = 2, .sys_guid = 0x10, .node_guid = 0x20, .port_guid = 0x21,
		.partition_cap = 16, .device_id = 0x1003, .revision = 1, .local_port = 1,
		.vendor_id = 0x2c9,
	}, t, d;

	node_info_encode(&ni, buf);
	CHECK_EQ(node_info_decode(buf, &d), 0);

	static const uint8_t bad_types[] = { 0, 4, 5, 0x80, 0xff };
	for (size_t i = 0; i < sizeof(bad_types); i++) {
		t = ni;
		t.node_type = bad_types[i];
		node_info_encode(&t, buf);
		CHECK_EQ(node_info_decode(buf, &d), -EBADMSG);
	}
	for (uint8_t type = NODE_TYPE_CA; type <= NODE_TYPE_ROUTER; type++) {
		t = ni;
		t.node_type = type;
		node_info_encode(&t, buf);
		CHECK_EQ(node_info_decode(buf, &d), 0);
	}
	t = ni;
	t.num_ports = 0;
	t.local_port = 0;
	t.node_type = NODE_TYPE_SWITCH;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), -EBADMSG);
	t = ni;
	t.node_guid = 0;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), -EBADMSG);
	t = ni;
	t.local_port = 3;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), -EBADMSG);
	t = ni;
	t.num_ports = 255;
	t.local_port = 255;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), 0);
	/* CA and router: the local port is never 0; a switch answers on port 0 */
	t = ni;
	t.local_port = 0;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), -EBADMSG);
	t.node_type = NODE_TYPE_ROUTER;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), -EBADMSG);
	t.node_type = NODE_TYPE_SWITCH;
	t.num_ports = 36;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), 0);
	/* A zero system or port GUID is legal */
	t = ni;
	t.sys_guid = 0;
	t.port_guid = 0;
	node_info_encode(&t, buf);
	CHECK_EQ(node_info_decode(buf, &d), 0);
}

static void test_node_desc(void)
{
	uint8_t buf[SMP_DATA_SIZE], ref[SMP_DATA_SIZE];
	struct node_desc nd, d;

	memset(&nd, 0, sizeof(nd));
	strcpy(nd.desc, "mlx5_0 host17 HCA-1");
	memset(buf, 0xa5, sizeof(buf));
	node_desc_encode(&nd, buf);
	CHECK(!memcmp(buf, "mlx5_0 host17 HCA-1", 19));
	CHECK(all_zero(buf + 19, sizeof(buf) - 19));
	memset(&d, 0x5a, sizeof(d));
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK(!strcmp(d.desc, "mlx5_0 host17 HCA-1"));
	/* libibmad sees the same 64 bytes */
	mad_get_array(buf, 0, IB_NODE_DESC_F, ref);
	CHECK(!memcmp(ref, buf, sizeof(buf)));

	/* Exactly 64 characters, no NUL on the wire: terminated on decode */
	for (int i = 0; i < SMP_DATA_SIZE; i++)
		buf[i] = (uint8_t)('A' + i % 26);
	memset(&d, 0x5a, sizeof(d));
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK_EQ(strlen(d.desc), SMP_DATA_SIZE);
	CHECK(!memcmp(d.desc, buf, SMP_DATA_SIZE));
	CHECK_EQ(d.desc[SMP_DATA_SIZE], 0);
	/* and encoded back without a NUL */
	node_desc_encode(&d, ref);
	CHECK(!memcmp(ref, buf, SMP_DATA_SIZE));

	/* Non-printables replaced, the rest kept (UTF-8 bytes are not ASCII controls) */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "a\tb\nc\x01\x1f\x7f" "d\xc3\xa9" "e", 12);
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK(!strcmp(d.desc, "a?b?c???d\xc3\xa9" "e"));

	/* Stops at the first NUL */
	memset(buf, 'x', sizeof(buf));
	buf[5] = 0;
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK(!strcmp(d.desc, "xxxxx"));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK_EQ(d.desc[0], 0);

	/* UTF-8: valid sequences kept, broken ones and C1 controls replaced */
	memset(buf, 0, sizeof(buf));
	{
		static const char in[] = "h\xc3\xa9llo \xe2\x82\xac \xc3 \xc2\x85 \xed\xa0\x80 \xc0\xaf";

		memcpy(buf, in, sizeof(in) - 1);
	}
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK(!strcmp(d.desc, "h\xc3\xa9llo \xe2\x82\xac ? ?? ??? ??"));
	/* A sequence cut by the end of the 64 bytes */
	memset(buf, 'a', sizeof(buf));
	buf[63] = 0xe2;
	CHECK_EQ(node_desc_decode(buf, &d), 0);
	CHECK_EQ(d.desc[63], '?');

	/* Every control character anywhere in 64 bytes is replaced */
	for (int it = 0; it < ITERS; it++) {
		bool ok = true;

		rnd_fill(buf, sizeof(buf));
		for (size_t i = 0; i < sizeof(buf); i++)
			if (!buf[i])
				buf[i] = 1;
		CHECK_EQ(node_desc_decode(buf, &d), 0);
		CHECK_EQ(strlen(d.desc), SMP_DATA_SIZE);
		for (size_t i = 0; i < SMP_DATA_SIZE; i++) {
			uint8_t c = (uint8_t)d.desc[i];

			if (c < 0x20 || c == 0x7f)
				ok = false;
			else if (buf[i] >= 0x20 && buf[i] < 0x7f && c != buf[i])
				ok = false;
			/* Bytes of valid UTF-8 stay, anything else becomes '?' */
			else if (buf[i] >= 0x80 && c != buf[i] && c != '?')
				ok = false;
		}
		CHECK(ok);
	}
}

static void test_switch_info(void)
{
	uint8_t buf[SMP_DATA_SIZE], ref[SMP_DATA_SIZE];
	struct switch_info si, d;

	for (int it = 0; it < ITERS; it++) {
		memset(&si, 0, sizeof(si));
		memset(ref, 0, sizeof(ref));
		for (size_t i = 0; i < NFIELDS(sw_fields); i++) {
			member_set(&si, &sw_fields[i], rnd_bits(sw_fields[i].width));
			ib_set(ref, &sw_fields[i], member_get(&si, &sw_fields[i]));
		}
		memset(buf, 0xa5, sizeof(buf));
		switch_info_encode(&si, buf);
		check_bytes("SwitchInfo vs mad_set_field", buf, ref, sizeof(buf));
		memset(&d, 0x5a, sizeof(d));
		CHECK_EQ(switch_info_decode(buf, &d), 0);
		for (size_t i = 0; i < NFIELDS(sw_fields); i++)
			check_field("SwitchInfo round trip", &sw_fields[i],
				    member_get(&d, &sw_fields[i]), member_get(&si, &sw_fields[i]));
	}
	for (int it = 0; it < ITERS; it++) {
		rnd_fill(buf, sizeof(buf));
		CHECK_EQ(switch_info_decode(buf, &d), 0);
		for (size_t i = 0; i < NFIELDS(sw_fields); i++)
			check_field("SwitchInfo decode", &sw_fields[i],
				    member_get(&d, &sw_fields[i]), ib_get(buf, &sw_fields[i]));
	}
}

/*
 * OptimizedSLtoVLMappingProgramming: the capability is the low bit of
 * SwitchInfo bits 94-95 (byte 11, bit 0 on the wire), and the attribute
 * modifier names ports in bits 0-15 or every port with bits 16 and 17
 */
static void test_opt_sl2vl(void)
{
	uint8_t buf[SMP_DATA_SIZE];
	struct switch_info si;

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(switch_info_decode(buf, &si), 0);
	CHECK(!switch_info_opt_sl2vl(&si));
	buf[11] = 0x01;
	CHECK_EQ(switch_info_decode(buf, &si), 0);
	CHECK(switch_info_opt_sl2vl(&si));
	CHECK_EQ(mad_get_field(buf, 0, IB_SW_OPT_SLTOVL_MAPPING_F), 1);
	/* LifeTimeValue and PortStateChange share the byte and do not count */
	buf[11] = 0xfe;
	CHECK_EQ(switch_info_decode(buf, &si), 0);
	CHECK(!switch_info_opt_sl2vl(&si));
	CHECK_EQ(si.life_time_value, 31);
	CHECK_EQ(si.port_state_change, 1);
	/* One port pair; every input port to one output; the whole switch */
	CHECK_EQ(sl2vl_amod(3, 7, false, false), 0x0307u);
	CHECK_EQ(sl2vl_amod(3, 7, true, false), 0x20007u);
	CHECK_EQ(sl2vl_amod(3, 7, false, true), 0x10300u);
	CHECK_EQ(sl2vl_amod(3, 7, true, true), 0x30000u);
	CHECK_EQ(sl2vl_amod(0, 0, false, false), 0u);
	/* Ports above 255 cannot be named: only their low byte goes out */
	CHECK_EQ(sl2vl_amod(0x1ff, 0x102, false, false) & ~0xffffu, 0u);
}

static void test_port_info(void)
{
	uint8_t buf[SMP_DATA_SIZE], ref[SMP_DATA_SIZE];
	struct port_info pi, d;

	for (int it = 0; it < ITERS; it++) {
		memset(&pi, 0, sizeof(pi));
		memset(ref, 0, sizeof(ref));
		for (size_t i = 0; i < NFIELDS(port_fields); i++) {
			member_set(&pi, &port_fields[i], rnd_bits(port_fields[i].width));
			ib_set(ref, &port_fields[i], member_get(&pi, &port_fields[i]));
		}
		memset(buf, 0xa5, sizeof(buf));
		port_info_encode(&pi, buf);
		check_bytes("PortInfo vs mad_set_field", buf, ref, sizeof(buf));
		memset(&d, 0x5a, sizeof(d));
		CHECK_EQ(port_info_decode(buf, &d), 0);
		for (size_t i = 0; i < NFIELDS(port_fields); i++)
			check_field("PortInfo round trip", &port_fields[i],
				    member_get(&d, &port_fields[i]),
				    member_get(&pi, &port_fields[i]));
	}
	for (int it = 0; it < ITERS; it++) {
		rnd_fill(buf, sizeof(buf));
		CHECK_EQ(port_info_decode(buf, &d), 0);
		for (size_t i = 0; i < NFIELDS(port_fields); i++)
			check_field("PortInfo decode", &port_fields[i],
				    member_get(&d, &port_fields[i]), ib_get(buf, &port_fields[i]));
	}
	/* One field at a time, all ones: nothing spills into a neighbour */
	for (size_t i = 0; i < NFIELDS(port_fields); i++) {
		const struct field *f = &port_fields[i];

		memset(&pi, 0, sizeof(pi));
		member_set(&pi, f, rnd_bits(f->width) | 1 | (UINT64_C(1) << (f->width - 1)));
		memset(ref, 0, sizeof(ref));
		ib_set(ref, f, member_get(&pi, f));
		port_info_encode(&pi, buf);
		check_bytes(f->name, buf, ref, sizeof(buf));
		port_info_decode(buf, &d);
		for (size_t j = 0; j < NFIELDS(port_fields); j++)
			check_field(f->name, &port_fields[j], member_get(&d, &port_fields[j]),
				    member_get(&pi, &port_fields[j]));
	}
	/* Known bytes: LID at 16..17, state in the low nibble of byte 32 */
	memset(&pi, 0, sizeof(pi));
	pi.lid = 0xbeef;
	pi.port_state = PORT_STATE_ACTIVE;
	pi.phys_state = PHYS_STATE_LINKUP;
	pi.lmc = 7;
	port_info_encode(&pi, buf);
	CHECK_EQ(buf[16], 0xbe);
	CHECK_EQ(buf[17], 0xef);
	CHECK_EQ(buf[32], 0x04);
	CHECK_EQ(buf[33], 0x50);
	CHECK_EQ(buf[34], 0x07);
}

/*
 * IBA 1.7's XDR fields, which libibmad 44 (Debian 12) does not know: PortInfo
 * blocks built byte by byte from the spec's bit offsets (bit 0 the MSB of
 * byte 0): CapabilityMask bits 160-191 (bit 14 IsExtendedSpeedsSupported,
 * 15 IsCapabilityMask2Supported), LinkWidthActive 248-255, LinkSpeedActive
 * 280-283, byte 56: reserved 448, LinkSpeedExtActive2 449-450,
 * LinkSpeedExtSupported2 451-452, LinkSpeedExtEnabled2 453-455 (libibmad's
 * newer fields.c), CapabilityMask2 480-495 (bit 11 IsExtendedSpeeds2Supported,
 * bit 12 IsLinkSpeedXDRSupported), LinkSpeedExtActive 496-499,
 * LinkSpeedExtSupported 500-503, LinkSpeedExtEnabled 507-511.
 */
static void xdr_block(uint8_t d[SMP_DATA_SIZE], uint32_t cap, uint16_t cap2, uint8_t width,
		      uint8_t speed, uint8_t ext, uint8_t ext2)
{
	memset(d, 0, SMP_DATA_SIZE);
	d[20] = (uint8_t)(cap >> 24);
	d[21] = (uint8_t)(cap >> 16);
	d[22] = (uint8_t)(cap >> 8);
	d[23] = (uint8_t)cap;
	d[31] = width;
	d[35] = (uint8_t)(speed << 4);
	d[56] = (uint8_t)(ext2 << 5 | 1u << 3 | 1u << 0);	/* Supported2, Enabled2: XDR */
	d[60] = (uint8_t)(cap2 >> 8);
	d[61] = (uint8_t)cap2;
	d[62] = (uint8_t)(ext << 4 | 0xf);			/* Supported: FDR to NDR */
	d[63] = 0x1f;						/* Enabled: every one */
}

static void test_port_info_xdr(void)
{
	const uint32_t cap = 1u << 14 | 1u << 15;
	const uint16_t cap2 = 1u << 11 | 1u << 12;
	uint8_t d[SMP_DATA_SIZE], again[SMP_DATA_SIZE];
	struct port_info pi;

	/* 4x XDR: every field where the spec puts it, and back to the same bytes */
	xdr_block(d, cap, cap2, 2, 4, 8, 1);
	CHECK_EQ(port_info_decode(d, &pi), 0);
	CHECK_EQ(pi.cap_mask, cap);
	CHECK_EQ(pi.cap_mask2, cap2);
	CHECK_EQ(pi.link_width_active, 2);
	CHECK_EQ(pi.link_speed_active, 4);
	CHECK_EQ(pi.link_speed_ext_active, 8);
	CHECK_EQ(pi.link_speed_ext_supported, 0xf);
	CHECK_EQ(pi.link_speed_ext_enabled, 0x1f);
	CHECK_EQ(pi.link_speed_ext_active2, 1);
	CHECK_EQ(pi.link_speed_ext_supported2, 1);
	CHECK_EQ(pi.link_speed_ext_enabled2, 1);
	CHECK_EQ(pi.max_credit_hint, 0);		/* the neighbours stay clean */
	CHECK_EQ(pi.link_round_trip_latency, 0);
	port_info_encode(&pi, again);
	check_bytes("PortInfo XDR round trip", again, d, sizeof(d));
	CHECK_EQ(iba_speed_active(&pi, &pi, false), IBA_SPEED_XDR);
	CHECK_EQ(iba_rate_from_link(pi.link_width_active, iba_speed_active(&pi, &pi, false)), 23);
	CHECK(!strcmp(iba_speed_name(IBA_SPEED_XDR), "XDR"));
	/* Bit 448 is reserved: a port that sets it changes nothing */
	d[56] |= 0x80;
	CHECK_EQ(port_info_decode(d, &pi), 0);
	CHECK_EQ(pi.link_speed_ext_active2, 1);
	CHECK_EQ(pi.link_speed_ext_enabled2, 1);
	/* A switch's external port: its port 0's capabilities decide */
	{
		struct port_info ext_port, port0;

		xdr_block(d, 0, 0, 8, 4, 8, 1);		/* CapabilityMask reserved here */
		port_info_decode(d, &ext_port);
		xdr_block(d, cap, cap2, 0, 0, 0, 0);
		port_info_decode(d, &port0);
		CHECK_EQ(iba_speed_active(&ext_port, &port0, false), IBA_SPEED_XDR);
		CHECK_EQ(iba_speed_active(&ext_port, NULL, false), IBA_SPEED_QDR);
		CHECK_EQ(iba_rate_from_link(ext_port.link_width_active, IBA_SPEED_XDR), 25);
	}
	/* Without IsExtendedSpeeds2Supported: LinkSpeedExtActive (NDR) */
	xdr_block(d, cap, 1u << 12, 2, 4, 8, 1);
	port_info_decode(d, &pi);
	CHECK_EQ(iba_speed_active(&pi, &pi, false), IBA_SPEED_NDR);
	CHECK_EQ(iba_rate_from_link(2, IBA_SPEED_NDR), 21);
	/* ... nor CapabilityMask2 at all: the same */
	xdr_block(d, 1u << 14, cap2, 2, 4, 8, 1);
	port_info_decode(d, &pi);
	CHECK_EQ(iba_speed_active(&pi, &pi, false), IBA_SPEED_NDR);
	/* Without IsExtendedSpeedsSupported: LinkSpeedActive alone (QDR) */
	xdr_block(d, 1u << 15, cap2, 2, 4, 8, 1);
	port_info_decode(d, &pi);
	CHECK_EQ(iba_speed_active(&pi, &pi, false), IBA_SPEED_QDR);
	CHECK_EQ(iba_speed_active(&pi, &pi, true), IBA_SPEED_FDR10);
	/* Values the spec does not define: no known speed */
	xdr_block(d, cap, cap2, 2, 4, 8, 2);
	port_info_decode(d, &pi);
	CHECK_EQ(iba_speed_active(&pi, &pi, false), IBA_SPEED_NONE);
	xdr_block(d, cap, cap2, 2, 4, 3, 0);
	port_info_decode(d, &pi);
	CHECK_EQ(iba_speed_active(&pi, &pi, false), IBA_SPEED_NONE);
	CHECK(!strcmp(iba_speed_name(IBA_SPEED_NONE), ""));
	/* No extended speed active: LinkSpeedActive's SDR, DDR, QDR */
	for (uint8_t sp = 1; sp <= 4; sp <<= 1) {
		xdr_block(d, cap, cap2, 2, sp, 0, 0);
		port_info_decode(d, &pi);
		CHECK_EQ(iba_speed_active(&pi, &pi, false),
			 sp == 1 ? IBA_SPEED_SDR : sp == 2 ? IBA_SPEED_DDR : IBA_SPEED_QDR);
	}
}

/*
 * Every width and speed up to 12x XDR against the PathRecord rate codes
 * (IBA 15.2.5.16 table 205 and the codes releases 1.3-1.7 added): written
 * out here from the table, in Gb/s and code, not computed. 12x XDR (2400
 * Gb/s) has no code: the fastest one not above it, 1600 Gb/s.
 */
static void test_rates(void)
{
	static const uint8_t widths[] = { 1, 16, 2, 4, 8 };	/* 1x, 2x, 4x, 8x, 12x */
	static const unsigned int lanes[] = { 1, 2, 4, 8, 12 };
	static const enum iba_speed speeds[] = {
		IBA_SPEED_SDR, IBA_SPEED_DDR, IBA_SPEED_QDR, IBA_SPEED_FDR10, IBA_SPEED_FDR,
		IBA_SPEED_EDR, IBA_SPEED_HDR, IBA_SPEED_NDR, IBA_SPEED_XDR,
	};
	static const struct { uint8_t code; const char *gbps; } want[5][9] = {
		/*  SDR        DDR        QDR         FDR10       FDR          EDR
		 *  HDR        NDR        XDR */
		{ { 2, "2.5" }, { 5, "5" }, { 3, "10" }, { 3, "10" }, { 11, "14" }, { 15, "25" },
		  { 20, "50" }, { 16, "100" }, { 17, "200" } },			/* 1x */
		{ { 5, "5" }, { 3, "10" }, { 6, "20" }, { 6, "20" }, { 19, "28" }, { 20, "50" },
		  { 16, "100" }, { 17, "200" }, { 21, "400" } },		/* 2x */
		{ { 3, "10" }, { 6, "20" }, { 7, "40" }, { 7, "40" }, { 12, "56" }, { 16, "100" },
		  { 17, "200" }, { 21, "400" }, { 23, "800" } },		/* 4x */
		{ { 6, "20" }, { 7, "40" }, { 9, "80" }, { 9, "80" }, { 13, "112" }, { 17, "200" },
		  { 21, "400" }, { 23, "800" }, { 25, "1600" } },		/* 8x */
		{ { 4, "30" }, { 8, "60" }, { 10, "120" }, { 10, "120" }, { 14, "168" },
		  { 18, "300" }, { 22, "600" }, { 24, "1200" }, { 25, "1600" } },	/* 12x */
	};

	for (unsigned int w = 0; w < 5; w++) {
		CHECK_EQ(iba_width_lanes(widths[w]), lanes[w]);
		for (unsigned int s = 0; s < 9; s++) {
			uint8_t got = iba_rate_from_link(widths[w], speeds[s]);
			char gbps[16];
			unsigned int dg = iba_rate_to_dgbps(want[w][s].code);

			snprintf(gbps, sizeof(gbps), dg % 10 ? "%u.%u" : "%u", dg / 10, dg % 10);
			CHECK_MSG(got == want[w][s].code, "%ux %s: rate %u, the table says %u",
				  lanes[w], iba_speed_name(speeds[s]), got, want[w][s].code);
			CHECK_MSG(!strcmp(gbps, want[w][s].gbps), "code %u is %s Gb/s, not %s",
				  want[w][s].code, gbps, want[w][s].gbps);
		}
	}
	CHECK_EQ(iba_rate_to_dgbps(IBA_RATE_MAX), 16000);
	CHECK_EQ(iba_rate_to_dgbps(IBA_RATE_MAX + 1), 0);
	CHECK_EQ(iba_rate_to_dgbps(0), 0);
	CHECK_EQ(iba_rate_to_dgbps(1), 0);
	CHECK_EQ(iba_width_lanes(3), 0);
	/* A width that is not one (or none) counts as 1x; no speed as SDR */
	CHECK_EQ(iba_rate_from_link(0, IBA_SPEED_QDR), 3);
	CHECK_EQ(iba_rate_from_link(2, IBA_SPEED_NONE), 3);
}

/* ExtendedPortInfo against libibmad's field table; FDR10 where it says so */
static void test_mlnx_ext_port_info(void)
{
	uint8_t buf[SMP_DATA_SIZE];
	/* member_get may read 8 bytes: room for them past the 4-byte struct */
	union { struct mlnx_ext_port_info e; uint64_t room[2]; } u = { { 0 } };
	struct mlnx_ext_port_info e;

	for (int it = 0; it < ITERS; it++) {
		rnd_fill(buf, sizeof(buf));
		CHECK_EQ(mlnx_ext_port_info_decode(buf, &u.e), 0);
		for (size_t i = 0; i < NFIELDS(mlnx_epi_fields); i++)
			check_field("MLNX ExtendedPortInfo", &mlnx_epi_fields[i],
				    member_get(&u, &mlnx_epi_fields[i]),
				    ib_get(buf, &mlnx_epi_fields[i]));
	}
	memset(buf, 0, sizeof(buf));
	buf[15] = MLNX_EXT_SPEED_FDR10;
	mlnx_ext_port_info_decode(buf, &e);
	CHECK_EQ(e.link_speed_active, MLNX_EXT_SPEED_FDR10);
	CHECK_EQ(e.link_speed_enabled, 0);
	/* The devices that answer it: SwitchX, ConnectX-3 and after, Bull's OEM ones */
	CHECK(iba_has_mlnx_ext_port_info(0x02c9, 0xc738));
	CHECK(iba_has_mlnx_ext_port_info(0x02c9, 0x1003));
	CHECK(iba_has_mlnx_ext_port_info(0x119f, 0x1b33));
	CHECK(!iba_has_mlnx_ext_port_info(0x02c9, 0x1b33));
	CHECK(!iba_has_mlnx_ext_port_info(0x02c9, 0x6340));	/* InfiniHost III */
	CHECK(!iba_has_mlnx_ext_port_info(0x08f1, 0x5a40));
}

static void test_lft_block(void)
{
	uint8_t buf[SMP_DATA_SIZE];
	struct lft_block b, d;

	for (int it = 0; it < ITERS; it++) {
		rnd_fill(b.port, sizeof(b.port));
		memset(buf, 0, sizeof(buf));
		lft_block_encode(&b, buf);
		CHECK(!memcmp(buf, b.port, sizeof(buf)));
		memset(&d, 0, sizeof(d));
		lft_block_decode(buf, &d);
		CHECK(!memcmp(d.port, b.port, sizeof(d.port)));
	}
	/* Entry i is LID (block * 64 + i) */
	for (int i = 0; i < LFT_BLOCK_SIZE; i++)
		buf[i] = (uint8_t)i;
	buf[63] = LFT_PORT_NONE;
	lft_block_decode(buf, &d);
	CHECK_EQ(d.port[0], 0);
	CHECK_EQ(d.port[17], 17);
	CHECK_EQ(d.port[63], LFT_PORT_NONE);
	CHECK_EQ(LFT_MAX_BLOCKS, 768);
}

/* IBA 14.2.5.8: SL0 is the high nibble of byte 0, SL15 the low nibble of byte 7 */
static void test_sl2vl(void)
{
	uint8_t buf[SMP_DATA_SIZE], vl[16], back[16];

	for (int sl = 0; sl < 16; sl++)
		vl[sl] = (uint8_t)(15 - sl);
	memset(buf, 0xaa, sizeof(buf));
	sl2vl_table_encode(vl, buf);
	CHECK_EQ(buf[0], 0xfe);
	CHECK_EQ(buf[7], 0x10);
	CHECK_EQ(buf[8], 0);		/* the rest of the attribute is reserved */
	CHECK_EQ(buf[63], 0);
	sl2vl_table_decode(buf, back);
	CHECK(!memcmp(vl, back, sizeof(vl)));
	for (int it = 0; it < ITERS; it++) {
		for (int sl = 0; sl < 16; sl++)
			vl[sl] = (uint8_t)rnd_bits(4);
		sl2vl_table_encode(vl, buf);
		sl2vl_table_decode(buf, back);
		CHECK(!memcmp(vl, back, sizeof(vl)));
	}
}

/* IBA 14.2.5.9 Table 158: entry i is bytes 2i (VL in the low nibble) and 2i+1 (weight) */
static void test_vl_arb(void)
{
	struct vl_arb_entry e[VL_ARB_BLOCK_SIZE] = { { 0 } }, d[VL_ARB_BLOCK_SIZE];
	uint8_t buf[SMP_DATA_SIZE];

	e[0] = (struct vl_arb_entry){ .vl = 3, .weight = 0x40 };
	e[31] = (struct vl_arb_entry){ .vl = 14, .weight = 0xff };
	memset(buf, 0x55, sizeof(buf));
	vl_arb_block_encode(e, buf);
	CHECK_EQ(buf[0], 0x03);
	CHECK_EQ(buf[1], 0x40);
	CHECK_EQ(buf[2], 0);
	CHECK_EQ(buf[62], 0x0e);
	CHECK_EQ(buf[63], 0xff);
	/* The reserved high nibble is ignored on decode */
	buf[0] = 0xf3;
	vl_arb_block_decode(buf, d);
	CHECK_EQ(d[0].vl, 3);
	CHECK_EQ(d[0].weight, 0x40);
	CHECK_EQ(d[31].vl, 14);
	for (int it = 0; it < ITERS; it++) {
		for (int i = 0; i < VL_ARB_BLOCK_SIZE; i++) {
			e[i].vl = (uint8_t)rnd_bits(4);
			e[i].weight = (uint8_t)rnd_bits(8);
		}
		vl_arb_block_encode(e, buf);
		vl_arb_block_decode(buf, d);
		CHECK(!memcmp(e, d, sizeof(e)));
	}
}

/* ---- rejection ---- */

static void valid_dr(uint8_t buf[MAD_SIZE])
{
	struct dr_path p = { .hops = 2, .port = { 0, 1, 2 } };
	struct smp s;

	smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, &p);
	s.hdr.tid = 0x1234;
	smp_encode(&s, buf);
}

static void test_smp_decode_reject(void)
{
	uint8_t buf[MAD_SIZE + 1], b[MAD_SIZE];
	struct smp s;

	valid_dr(buf);
	buf[MAD_SIZE] = 0;
	CHECK_EQ(smp_decode(buf, MAD_SIZE, &s), 0);
	CHECK_EQ(smp_decode(buf, 0, &s), -EBADMSG);
	CHECK_EQ(smp_decode(buf, 1, &s), -EBADMSG);
	CHECK_EQ(smp_decode(buf, 24, &s), -EBADMSG);
	CHECK_EQ(smp_decode(buf, MAD_SIZE - 1, &s), -EBADMSG);
	CHECK_EQ(smp_decode(buf, MAD_SIZE + 1, &s), -EBADMSG);
	CHECK_EQ(smp_decode(NULL, MAD_SIZE, &s), -EBADMSG);
	CHECK_EQ(smp_decode(NULL, 0, &s), -EBADMSG);

	static const uint8_t bad_base[] = { 0, 2, 0xff };
	for (size_t i = 0; i < sizeof(bad_base); i++) {
		memcpy(b, buf, MAD_SIZE);
		b[0] = bad_base[i];
		CHECK_EQ(smp_decode(b, MAD_SIZE, &s), -EBADMSG);
	}
	static const uint8_t bad_classver[] = { 0, 2, 0x80 };
	for (size_t i = 0; i < sizeof(bad_classver); i++) {
		memcpy(b, buf, MAD_SIZE);
		b[2] = bad_classver[i];
		CHECK_EQ(smp_decode(b, MAD_SIZE, &s), -EBADMSG);
	}
	static const uint8_t bad_class[] = { 0x00, 0x02, 0x03, 0x04, 0x06, 0x80, 0x82, 0xff };
	for (size_t i = 0; i < sizeof(bad_class); i++) {
		memcpy(b, buf, MAD_SIZE);
		b[1] = bad_class[i];
		CHECK_EQ(smp_decode(b, MAD_SIZE, &s), -EBADMSG);
	}
	memcpy(b, buf, MAD_SIZE);
	b[1] = MAD_CLASS_SMI;
	CHECK_EQ(smp_decode(b, MAD_SIZE, &s), 0);
	/* DR hop count is 6 bits */
	for (unsigned int hops = 0; hops < 256; hops++) {
		memcpy(b, buf, MAD_SIZE);
		b[7] = (uint8_t)hops;
		b[6] = 0;
		if (hops <= SMP_MAX_HOPS)
			CHECK_EQ(smp_decode(b, MAD_SIZE, &s), 0);
		else
			CHECK_EQ(smp_decode(b, MAD_SIZE, &s), -EBADMSG);
	}
	/* ... but for a LID-routed SMP bytes 6..7 are not hop fields */
	memcpy(b, buf, MAD_SIZE);
	b[1] = MAD_CLASS_SMI;
	b[7] = 200;
	CHECK_EQ(smp_decode(b, MAD_SIZE, &s), 0);

	/* mad_peek needs the header and nothing else */
	uint8_t mclass = 0, method = 0;
	uint64_t tid = 0;

	CHECK_EQ(mad_peek(buf, MAD_SIZE, &mclass, &method, &tid), 0);
	CHECK_EQ(mclass, MAD_CLASS_SMI_DR);
	CHECK_EQ(method, MAD_METHOD_GET);
	CHECK_EQ(tid, 0x1234);
	CHECK_EQ(mad_peek(buf, 24, NULL, NULL, NULL), 0);
	CHECK_EQ(mad_peek(buf, 23, &mclass, &method, &tid), -EBADMSG);
	CHECK_EQ(mad_peek(buf, 0, &mclass, &method, &tid), -EBADMSG);
	CHECK_EQ(mad_peek(NULL, MAD_SIZE, &mclass, &method, &tid), -EBADMSG);
}

static void make_resp(const struct smp *req, struct smp *resp)
{
	*resp = *req;
	resp->hdr.method = MAD_METHOD_GET_RESP;
	if (req->hdr.mgmt_class == MAD_CLASS_SMI_DR) {
		resp->hdr.direction = true;
		resp->hdr.hop_ptr = req->hdr.hop_cnt;
	}
}

static void test_check_response(void)
{
	struct dr_path p = { .hops = 2, .port = { 0, 3, 5 } };
	struct smp req, resp, r;

	CHECK_EQ(smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, 3, &p), 0);
	req.hdr.tid = UINT64_C(0x1234567800abcdef);
	make_resp(&req, &resp);
	CHECK_EQ(smp_check_response(&req, &resp), 0);

	/* Any status is still a response to this request */
	r = resp;
	r.hdr.status = MAD_STATUS_INVALID_FIELD;
	CHECK_EQ(smp_check_response(&req, &r), 0);

	/* The kernel rewrites the high 32 bits of the TID */
	r = resp;
	r.hdr.tid = UINT64_C(0xfedcba9800abcdef);
	CHECK_EQ(smp_check_response(&req, &r), 0);
	r.hdr.tid = UINT64_C(0x0000000000abcdef);
	CHECK_EQ(smp_check_response(&req, &r), 0);
	r.hdr.tid = UINT64_C(0x1234567800abcdee);
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r.hdr.tid = UINT64_C(0x1234567880abcdef);
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);

	static const uint8_t bad_methods[] = {
		MAD_METHOD_GET, MAD_METHOD_SET, MAD_METHOD_TRAP, MAD_METHOD_TRAP_REPRESS,
		0x86, 0x92, 0x00, 0xff,
	};
	for (size_t i = 0; i < sizeof(bad_methods); i++) {
		r = resp;
		r.hdr.method = bad_methods[i];
		CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	}
	r = resp;
	r.hdr.attr_id = SMP_ATTR_NODE_INFO;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r = resp;
	r.hdr.attr_mod = 4;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r = resp;
	r.hdr.attr_mod = 3 | 0x80000000u;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r = resp;
	r.hdr.direction = false;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r = resp;
	r.hdr.hop_cnt = 1;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r.hdr.hop_cnt = 3;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r = resp;
	r.hdr.mgmt_class = MAD_CLASS_SMI;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);

	/* LID routed: no D bit, no hop count */
	CHECK_EQ(smp_init_lid(&req, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, 0), 0);
	req.hdr.tid = 0x77;
	make_resp(&req, &resp);
	CHECK_EQ(smp_check_response(&req, &resp), 0);
	r = resp;
	r.hdr.tid = UINT64_C(0xffffffff00000077);
	CHECK_EQ(smp_check_response(&req, &r), 0);
	r = resp;
	r.hdr.mgmt_class = MAD_CLASS_SMI_DR;
	r.hdr.direction = true;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);
	r = resp;
	r.hdr.method = MAD_METHOD_SET;
	CHECK_EQ(smp_check_response(&req, &r), -EPROTO);

	/* Through the wire: a decoded answer matches its request */
	uint8_t buf[MAD_SIZE];

	CHECK_EQ(smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_NODE_DESC, 0, &p), 0);
	req.hdr.tid = UINT64_C(0xaaaaaaaa00000001);
	make_resp(&req, &resp);
	resp.hdr.tid = UINT64_C(0x5555555500000001);
	CHECK_EQ(smp_encode(&resp, buf), 0);
	CHECK_EQ(smp_decode(buf, MAD_SIZE, &r), 0);
	CHECK_EQ(smp_check_response(&req, &r), 0);
}

static void test_dr_path(void)
{
	struct dr_path a = { 0 }, b;
	char s[512];

	CHECK_EQ(dr_path_format(&a, s, sizeof(s)), 0);
	CHECK(!strcmp(s, "0"));
	CHECK_EQ(dr_path_extend(&a, 1, &b), 0);
	CHECK_EQ(b.hops, 1);
	CHECK_EQ(b.port[1], 1);
	CHECK_EQ(a.hops, 0);	/* from is untouched */
	CHECK_EQ(dr_path_format(&b, s, sizeof(s)), 0);
	CHECK(!strcmp(s, "0,1"));
	CHECK_EQ(dr_path_extend(&b, 255, &b), 0);	/* in place */
	CHECK_EQ(dr_path_extend(&b, 36, &b), 0);
	CHECK_EQ(b.hops, 3);
	CHECK_EQ(dr_path_format(&b, s, sizeof(s)), 0);
	CHECK(!strcmp(s, "0,1,255,36"));
	CHECK_EQ(b.port[1], 1);

	/* Exactly fitting, one short, and no room at all */
	CHECK_EQ(dr_path_format(&b, s, strlen("0,1,255,36") + 1), 0);
	CHECK(!strcmp(s, "0,1,255,36"));
	CHECK_EQ(dr_path_format(&b, s, strlen("0,1,255,36")), -ENOSPC);
	CHECK_EQ(strlen(s), strlen("0,1,255,36") - 1);	/* truncated but terminated */
	CHECK_EQ(dr_path_format(&b, s, 3), -ENOSPC);
	CHECK_EQ(strlen(s), 2);
	CHECK_EQ(dr_path_format(&b, s, 1), -ENOSPC);
	CHECK_EQ(s[0], 0);
	s[0] = 'x';
	CHECK_EQ(dr_path_format(&b, s, 0), -EINVAL);
	CHECK_EQ(s[0], 'x');	/* len 0: nothing written */

	/* Up to 63 hops, and not one more */
	a.hops = 0;
	for (int i = 1; i <= SMP_MAX_HOPS; i++) {
		CHECK_EQ(dr_path_extend(&a, (uint8_t)(i + 100), &a), 0);
		CHECK_EQ(a.hops, i);
	}
	b = a;
	CHECK_EQ(dr_path_extend(&a, 1, &b), -E2BIG);
	CHECK_EQ(b.hops, SMP_MAX_HOPS);
	CHECK(!memcmp(&a, &b, sizeof(a)));
	CHECK_EQ(dr_path_extend(&a, 1, &a), -E2BIG);
	CHECK_EQ(a.hops, SMP_MAX_HOPS);
	CHECK_EQ(dr_path_format(&a, s, sizeof(s)), 0);
	CHECK_EQ(strlen(s), 1 + SMP_MAX_HOPS * 4);	/* "0" + 63 x ",NNN" */
	CHECK(!strncmp(s, "0,101,102,", 10));
	CHECK(!strcmp(s + strlen(s) - 4, ",163"));

	/* A full path is usable as a request */
	struct smp req;

	CHECK_EQ(smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, &a), 0);
	CHECK_EQ(req.hdr.hop_cnt, SMP_MAX_HOPS);
	CHECK_EQ(req.initial_path[1], 101);
	CHECK_EQ(req.initial_path[SMP_MAX_HOPS], 163);
}

static void test_encodings(void)
{
	static const unsigned int mtu[16] = { 0, 256, 512, 1024, 2048, 4096 };
	static const unsigned int vls[16] = { 0, 1, 2, 4, 8, 15 };

	for (unsigned int i = 0; i < 16; i++) {
		CHECK_EQ(mtu_to_bytes((uint8_t)i), mtu[i]);
		CHECK_EQ(vl_cap_to_count((uint8_t)i), vls[i]);
	}
	CHECK_EQ(mtu_to_bytes(0xff), 0);
	CHECK_EQ(mtu_to_bytes(0x80 | 1), 0);
	CHECK_EQ(vl_cap_to_count(0xff), 0);
	CHECK_EQ(vl_cap_to_count(0x80 | 1), 0);
}

static void test_sm_info(void)
{
	struct sm_info a = {
		.guid = 0x0002c90300a1b2c3ull, .sm_key = 0x1122334455667788ull,
		.act_count = 0xdeadbeef, .priority = 13, .sm_state = SM_STATE_MASTER,
	}, b;
	uint8_t d[SMP_DATA_SIZE];
	struct smp req, resp;
	struct dr_path path = { .hops = 2, .port = { 0, 1, 7 } };

	sm_info_encode(&a, d);
	/* libibmad's own field table agrees on every field */
	CHECK(mad_get_field64(d, 0, IB_SMINFO_GUID_F) == a.guid);
	CHECK(mad_get_field64(d, 0, IB_SMINFO_KEY_F) == a.sm_key);
	CHECK_EQ(mad_get_field(d, 0, IB_SMINFO_ACT_F), a.act_count);
	CHECK_EQ(mad_get_field(d, 0, IB_SMINFO_PRIO_F), a.priority);
	CHECK_EQ(mad_get_field(d, 0, IB_SMINFO_STATE_F), a.sm_state);
	CHECK_EQ(sm_info_decode(d, &b), 0);
	CHECK(a.guid == b.guid && a.sm_key == b.sm_key && a.act_count == b.act_count &&
	      a.priority == b.priority && a.sm_state == b.sm_state);
	/* SMState 4..15 do not exist (IBA table 168) */
	mad_set_field(d, 0, IB_SMINFO_STATE_F, 4);
	CHECK_EQ(sm_info_decode(d, &b), -EBADMSG);

	/* A response made from a request is accepted as its answer */
	CHECK_EQ(smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0, &path), 0);
	req.hdr.tid = 0x1234;
	resp = req;
	smp_make_response(&resp, 0);
	CHECK_EQ(resp.hdr.method, MAD_METHOD_GET_RESP);
	CHECK(resp.hdr.direction);
	CHECK_EQ(resp.hdr.hop_ptr, 2);
	CHECK_EQ(smp_check_response(&req, &resp), 0);
	CHECK_EQ(smp_init_lid(&req, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0), 0);
	resp = req;
	smp_make_response(&resp, MAD_STATUS_METHOD_ATTR_UNSUPP);
	CHECK(!resp.hdr.direction);
	CHECK_EQ(resp.hdr.status, MAD_STATUS_METHOD_ATTR_UNSUPP);
}

/*
 * The SA records added for issue 16, against libibmad's field table where
 * it has one (ServiceRecord, Notice, MultiPathRecord, GUIDInfoRecord), and
 * round trips; the component-mask field tables name the same bits.
 */
static void test_sa_records(void)
{
	struct service_record sr = { .id = 0x1000000000000abcull, .pkey = 0xffff,
				     .lease = 3600 }, sr2;
	struct notice n = { .generic = 1, .type = NOTICE_TYPE_SM,
			    .producer = NOTICE_PRODUCER_CLASS_MGR, .trap_num = 64,
			    .issuer_lid = 7, .toggle = 1, .count = 0x1234 }, n2;
	struct inform_info ii = { .lid_begin = 0xffff, .generic = 1, .subscribe = 1,
				  .type = 3, .trap_num = 65, .qpn = 0xabcdef, .resp_time = 19,
				  .producer = 4 }, ii2;
	struct multipath_record mp = { .flow_label = 0x12345, .hop_limit = 9, .tclass = 0x42,
				       .reversible = 1, .numb_path = 77, .pkey = 0x8001,
				       .qos_class = 0xabc, .sl = 5, .mtu_selector = 2, .mtu = 4,
				       .independence = 1, .sgid_count = 3, .dgid_count = 250,
				       .service_id = 0xfe00112233445566ull }, mp2;
	uint8_t b[256] = { 0 }, gid[16];
	uint64_t guids[8];

	for (unsigned int i = 0; i < 16; i++) {
		sr.gid[i] = (uint8_t)(0xa0 + i);
		sr.key[i] = (uint8_t)(0x10 + i);
		sr.data8[i] = (uint8_t)(0x80 + i);
		n.details[i] = (uint8_t)(i + 1);
		n.issuer_gid[i] = (uint8_t)(0xf0 | i);
		ii.gid[i] = (uint8_t)(0x30 + i);
	}
	memcpy(sr.name, "smd.test-service", 16);
	for (unsigned int i = 0; i < 8; i++)
		sr.data16[i] = (uint16_t)(0x1110 * (i + 1));
	for (unsigned int i = 0; i < 4; i++)
		sr.data32[i] = 0x01020304u * (i + 1);
	sr.data64[0] = 0x1122334455667788ull;
	sr.data64[1] = 0x99aabbccddeeff00ull;
	service_record_encode(&sr, b);
	CHECK(mad_get_field64(b, 0, IB_SA_SR_ID_F) == sr.id);
	mad_get_array(b, 0, IB_SA_SR_GID_F, gid);
	CHECK(!memcmp(gid, sr.gid, 16));
	CHECK_EQ(mad_get_field(b, 0, IB_SA_SR_PKEY_F), sr.pkey);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_SR_LEASE_F), sr.lease);
	CHECK(!memcmp(b + 48, "smd.test-service", 16));
	CHECK_EQ(b[112], 0x80);
	CHECK_EQ(b[174], 0xff);
	service_record_decode(b, &sr2);
	CHECK(!memcmp(&sr, &sr2, sizeof(sr)));
	/* Component 2 is ServiceP_Key, 35 and 36 the two ServiceData64 */
	CHECK_EQ(sa_record_nfields(SA_ATTR_SERVICE_RECORD), 37);
	CHECK_EQ(sa_record_field(SA_ATTR_SERVICE_RECORD, b, 2), 0xffff);
	CHECK(sa_record_field(SA_ATTR_SERVICE_RECORD, b, 36) == sr.data64[1]);
	CHECK_EQ(sa_record_field(SA_ATTR_SERVICE_RECORD, b, 30), sr.data16[7]);
	CHECK_EQ(sa_record_size(SA_ATTR_SERVICE_RECORD), SR_SIZE);

	memset(b, 0, sizeof(b));
	sa_notice_encode(&n, b);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_IS_GENERIC_F), 1);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_TYPE_F), NOTICE_TYPE_SM);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_PRODUCER_F), NOTICE_PRODUCER_CLASS_MGR);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_TRAP_NUMBER_F), 64);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_ISSUER_LID_F), 7);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_TOGGLE_F), 1);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_COUNT_F), 0x1234);
	CHECK_EQ(mad_get_field(b, 0, IB_NOTICE_DATA_LID_F), 0x0102);
	CHECK_EQ(b[64], 0xf0);
	sa_notice_decode(b, &n2);
	CHECK(!memcmp(&n, &n2, sizeof(n)));

	memset(b, 0, sizeof(b));
	inform_info_encode(&ii, b);
	inform_info_decode(b, &ii2);
	CHECK(!memcmp(&ii, &ii2, sizeof(ii)));
	CHECK_EQ(b[22], 1);
	CHECK_EQ(b[23], 1);
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO, b, 7), 65);
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO, b, 8), 0xabcdef);
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO, b, 10), 19);
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO, b, 12), 4);
	inform_info_record_encode(gid, 0x55, &ii, b);
	CHECK(!memcmp(b, gid, 16));
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO_RECORD, b, 1), 0x55);
	/* IBA 15.2.5.12: bit 10 is TrapNumber, bit 15 ProducerType */
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO_RECORD, b, 10), 65);
	CHECK_EQ(sa_record_field(SA_ATTR_INFORM_INFO_RECORD, b, 15), 4);
	CHECK_EQ(sa_record_nfields(SA_ATTR_INFORM_INFO_RECORD), 16);

	memset(b, 0, sizeof(b));
	multipath_record_encode(&mp, b);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_MP_NPATH_F), 77);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_MP_NSRC_F), 3);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_MP_NDEST_F), 250);
	multipath_record_decode(b, &mp2);
	CHECK(!memcmp(&mp, &mp2, sizeof(mp)));
	CHECK_EQ(sa_record_field(SA_ATTR_MULTIPATH_RECORD, b, 16), 0xfe);
	CHECK(sa_record_field(SA_ATTR_MULTIPATH_RECORD, b, 21) == 0x00112233445566ull);

	for (unsigned int i = 0; i < 8; i++)
		guids[i] = 0x0002c90300000000ull + i;
	sa_guid_info_record_encode(9, 2, guids, b);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_GIR_LID_F), 9);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_GIR_BLOCKNUM_F), 2);
	CHECK(mad_get_field64(b, 0, IB_SA_GIR_GUID0_F) == guids[0]);
	CHECK(mad_get_field64(b, 0, IB_SA_GIR_GUID7_F) == guids[7]);
	/* Each GUID is its own component: bit 4 + n */
	CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, b, 4 + 5) == guids[5]);
	CHECK_EQ(sa_record_nfields(SA_ATTR_GUID_INFO_RECORD), 12);
}

/*
 * The struct codecs of PathRecord, MultiPathRecord and MCMemberRecord and
 * the component-mask tables are two lists of the same layout: every field
 * set to a value of its own, the masked fields read back in mask order
 * (IBA 15.2.5.16 table 209, 15.2.5.20, 15.2.5.17 table 213) must be those
 * values, reserved ones 0. FIELD_BYTES marks a GID, compared by bytes.
 */
#define FIELD_BYTES UINT64_MAX
static void check_mask_fields(uint16_t attr, const uint8_t *rec, const uint64_t *want,
			      unsigned int n, const char *what)
{
	CHECK_EQ(sa_record_nfields(attr), n);
	for (unsigned int k = 0; k < n; k++) {
		const char *name;
		unsigned int off, w;

		if (sa_record_field_info(attr, k, &name, &off, &w) < 0 || want[k] == FIELD_BYTES)
			continue;
		CHECK_MSG(w <= 64 && sa_record_field(attr, rec, k) == want[k],
			  "%s field %u (%s): 0x%llx, want 0x%llx", what, k, name ? name : "?",
			  (unsigned long long)sa_record_field(attr, rec, k),
			  (unsigned long long)want[k]);
	}
}

static void test_sa_codec_vs_mask(void)
{
	struct path_record pr = {
		.service_id = 0x8123456789abcdefull, .dlid = 0x8765, .slid = 0x9876,
		.raw_traffic = 1, .flow_label = 0xfedcb, .hop_limit = 0xe1, .tclass = 0xb2,
		.reversible = 1, .numb_path = 0x6c, .pkey = 0xc3d4, .qos_class = 0xa5b, .sl = 0xe,
		.mtu_selector = 3, .mtu = 0x2f, .rate_selector = 2, .rate = 0x3e,
		.plt_selector = 1, .packet_life_time = 0x27, .preference = 0x9a,
	}, pr2;
	const uint64_t pr_want[] = {
		0x81234567, 0x89abcdef, FIELD_BYTES, FIELD_BYTES, 0x8765, 0x9876, 1, 0, 0xfedcb,
		0xe1, 0xb2, 1, 0x6c, 0xc3d4, 0xa5b, 0xe, 3, 0x2f, 2, 0x3e, 1, 0x27, 0x9a, 0,
	};
	struct multipath_record mp = {
		.raw_traffic = 1, .flow_label = 0xfedcb, .hop_limit = 0xe1, .tclass = 0xb2,
		.reversible = 1, .numb_path = 0x6c, .pkey = 0xc3d4, .qos_class = 0xa5b, .sl = 0xe,
		.mtu_selector = 3, .mtu = 0x2f, .rate_selector = 2, .rate = 0x3e,
		.plt_selector = 1, .packet_life_time = 0x27, .independence = 2,
		.sgid_count = 0x91, .dgid_count = 0x7f, .service_id = 0xc1a2b3c4d5e6f708ull,
	}, mp2;
	const uint64_t mp_want[] = {
		1, 0, 0xfedcb, 0xe1, 0xb2, 1, 0x6c, 0xc3d4, 0xa5b, 0xe, 3, 0x2f, 2, 0x3e, 1, 0x27,
		0xc1, 2, 0, 0x91, 0x7f, 0xa2b3c4d5e6f708ull,
	};
	struct mc_member_record mc = {
		.qkey = 0x80010203, .mlid = 0xc123, .mtu_selector = 2, .mtu = 0x25, .tclass = 0xb7,
		.pkey = 0x8abc, .rate_selector = 1, .rate = 0x33, .plt_selector = 3,
		.packet_life_time = 0x2e, .sl = 0xb, .flow_label = 0xa1b2c, .hop_limit = 0xd4,
		.scope = 5, .join_state = 9, .proxy_join = 1,
	}, mc2;
	const uint64_t mc_want[] = {
		FIELD_BYTES, FIELD_BYTES, 0x80010203, 0xc123, 2, 0x25, 0xb7, 0x8abc, 1, 0x33, 3,
		0x2e, 0xb, 0xa1b2c, 0xd4, 5, 9, 1, 0,
	};
	uint8_t b[MAD_SIZE] = { 0 }, b2[MAD_SIZE] = { 0 };

	for (unsigned int i = 0; i < 16; i++) {
		pr.dgid[i] = (uint8_t)(0xd0 + i);
		pr.sgid[i] = (uint8_t)(0x50 + i);
		mc.mgid[i] = (uint8_t)(0xf0 + i);
		mc.port_gid[i] = (uint8_t)(0x60 + i);
	}
	path_record_encode(&pr, b);
	check_mask_fields(SA_ATTR_PATH_RECORD, b, pr_want, 24, "PathRecord");
	CHECK(!memcmp(b + 8, pr.dgid, 16) && !memcmp(b + 24, pr.sgid, 16));
	CHECK_EQ(mad_get_field(b, 0, IB_SA_PR_DLID_F), 0x8765);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_PR_SL_F), 0xe);
	path_record_decode(b, &pr2);
	path_record_encode(&pr2, b2);
	CHECK(!memcmp(b, b2, 64));
	CHECK(pr2.service_id == pr.service_id && pr2.preference == 0x9a && pr2.mtu == 0x2f);

	memset(b, 0, sizeof(b));
	multipath_record_encode(&mp, b);
	check_mask_fields(SA_ATTR_MULTIPATH_RECORD, b, mp_want, 22, "MultiPathRecord");
	/* the same path parameters as PathRecord's, 352 bits earlier */
	path_record_encode(&pr, b2);
	for (unsigned int k = 0; k < 16; k++)
		CHECK_EQ(sa_record_field(SA_ATTR_MULTIPATH_RECORD, b, k),
			 sa_record_field(SA_ATTR_PATH_RECORD, b2, 6 + k));
	multipath_record_decode(b, &mp2);
	memset(b2, 0, sizeof(b2));
	multipath_record_encode(&mp2, b2);
	CHECK(!memcmp(b, b2, MPR_FIXED_SIZE));

	memset(b, 0, sizeof(b));
	mc_member_record_encode(&mc, b);
	check_mask_fields(SA_ATTR_MCMEMBER_RECORD, b, mc_want, 19, "MCMemberRecord");
	CHECK(!memcmp(b, mc.mgid, 16) && !memcmp(b + 16, mc.port_gid, 16));
	CHECK_EQ(mad_get_field(b, 0, IB_SA_MCM_QKEY_F), 0x80010203);
	CHECK_EQ(mad_get_field(b, 0, IB_SA_MCM_JOIN_STATE_F), 9);
	mc_member_record_decode(b, &mc2);
	memset(b2, 0, sizeof(b2));
	mc_member_record_encode(&mc2, b2);
	CHECK(!memcmp(b, b2, MCR_SIZE));
}

/* GUIDInfo block (IBA 14.2.5.5): GUID k at byte 8k, big-endian */
static void test_guid_block(void)
{
	uint64_t g[8], back[8];
	uint8_t d[SMP_DATA_SIZE];

	for (unsigned int k = 0; k < 8; k++)
		g[k] = UINT64_C(0x0102030405060700) + k;
	memset(d, 0xee, sizeof(d));
	guid_block_encode(g, d);
	CHECK_EQ(d[0], 0x01);
	CHECK_EQ(d[7], 0x00);
	CHECK_EQ(d[8 * 5 + 7], 0x05);
	CHECK_EQ(d[63], 0x07);
	guid_block_decode(d, back);
	CHECK(!memcmp(g, back, sizeof(g)));
}

/* Trap 256 as an SMA lays it out, byte by byte (IBA 14.2.5.1), and read back */
static void test_bad_mkey_notice(void)
{
	uint8_t mad[MAD_SIZE] = { 1, MAD_CLASS_SMI, 1, MAD_METHOD_TRAP }, *d = mad + 64;
	struct notice_bad_mkey n;
	struct notice_summary ns;

	mad[16] = 0x00, mad[17] = 0x02;		/* Notice */
	d[0] = 0x82;				/* generic, type 2: security */
	d[3] = 1;				/* producer: CA */
	d[4] = 0x01, d[5] = 0x00;		/* trap 256 */
	d[6] = 0x00, d[7] = 0x09;		/* issuer LID 9 */
	d[12] = 0x00, d[13] = 0x2a;		/* requester LID 42 */
	d[14] = 0xff, d[15] = 0xff;		/* DrSLID permissive */
	d[16] = MAD_METHOD_SET;
	d[18] = 0x00, d[19] = 0x15;		/* PortInfo */
	d[20] = 0x80, d[23] = 0x01;		/* modifier 0x80000001 */
	for (int i = 0; i < 8; i++)
		d[24 + i] = (uint8_t)(0xa0 + i);
	d[33] = 0x80 | 3;			/* DR notice, 3 hops */
	d[34] = 1, d[35] = 4, d[36] = 2;
	CHECK_EQ(notice_decode(mad, MAD_SIZE, &ns), 0);
	CHECK_EQ(ns.trap_number, 256);
	CHECK_EQ(notice_bad_mkey_decode(mad, MAD_SIZE, &n), 0);
	CHECK_EQ(n.issuer_lid, 9);
	CHECK_EQ(n.lid, 42);
	CHECK_EQ(n.dr_slid, 0xffff);
	CHECK_EQ(n.method, MAD_METHOD_SET);
	CHECK_EQ(n.attr_id, SMP_ATTR_PORT_INFO);
	CHECK_EQ(n.attr_mod, 0x80000001u);
	CHECK_EQ(n.mkey, UINT64_C(0xa0a1a2a3a4a5a6a7));
	CHECK(n.dr_notice && !n.dr_truncated);
	CHECK_EQ(n.dr_hops, 3);
	CHECK_EQ(n.dr_return_path[0], 1);
	CHECK_EQ(n.dr_return_path[2], 2);
	/* A hop count past the 30 bytes the Notice holds is clamped */
	d[33] = 0xc0 | 63;
	CHECK_EQ(notice_bad_mkey_decode(mad, MAD_SIZE, &n), 0);
	CHECK(n.dr_truncated);
	CHECK_EQ(n.dr_hops, NOTICE_DR_PATH_MAX);
	/* Another trap number, a vendor notice, a short MAD: not a Bad M_Key trap */
	d[5] = 0x01;
	CHECK_EQ(notice_bad_mkey_decode(mad, MAD_SIZE, &n), -EBADMSG);
	d[5] = 0x00;
	d[0] = 0x02;
	CHECK_EQ(notice_bad_mkey_decode(mad, MAD_SIZE, &n), -EBADMSG);
	d[0] = 0x82;
	CHECK_EQ(notice_bad_mkey_decode(mad, 200, &n), -EBADMSG);
}

/*
 * The PMA attributes against libibmad's field tables (perfquery's): our
 * encoder against a buffer mad_set_field built, our decoder against
 * mad_get_field on random bytes, one field at a time with nothing
 * spilling into a neighbour. Offsets are into the data (MAD byte 64).
 */
struct pma_codec {
	const char *what;
	const struct field *f;
	size_t nf, size;
	void (*enc)(const void *s, uint8_t *d);
	void (*dec)(const uint8_t *d, void *s);
};

static void enc_cpi(const void *s, uint8_t *d) { pma_cpi_encode(s, d); }
static void dec_cpi(const uint8_t *d, void *s) { pma_cpi_decode(d, s); }
static void enc_pc(const void *s, uint8_t *d) { pma_pc_encode(s, d); }
static void dec_pc(const uint8_t *d, void *s) { pma_pc_decode(d, s); }
static void enc_pce(const void *s, uint8_t *d) { pma_pce_encode(s, d); }
static void dec_pce(const uint8_t *d, void *s) { pma_pce_decode(d, s); }

static void check_pma_codec(const struct pma_codec *c)
{
	uint8_t buf[PMA_DATA_SIZE], ref[PMA_DATA_SIZE];
	uint8_t a[128], b[128];

	for (int it = 0; it < ITERS; it++) {
		memset(a, 0, sizeof(a));
		memset(ref, 0, sizeof(ref));
		for (size_t i = 0; i < c->nf; i++) {
			member_set(a, &c->f[i], rnd_bits(c->f[i].width));
			ib_set(ref, &c->f[i], member_get(a, &c->f[i]));
		}
		memset(buf, 0xa5, sizeof(buf));
		c->enc(a, buf);
		check_bytes(c->what, buf, ref, sizeof(buf));
		memset(b, 0x5a, sizeof(b));
		c->dec(buf, b);
		for (size_t i = 0; i < c->nf; i++)
			check_field(c->what, &c->f[i], member_get(b, &c->f[i]),
				    member_get(a, &c->f[i]));
	}
	for (int it = 0; it < ITERS; it++) {
		rnd_fill(buf, sizeof(buf));
		c->dec(buf, b);
		for (size_t i = 0; i < c->nf; i++)
			check_field(c->what, &c->f[i], member_get(b, &c->f[i]),
				    ib_get(buf, &c->f[i]));
	}
	for (size_t i = 0; i < c->nf; i++) {
		const struct field *f = &c->f[i];

		memset(a, 0, sizeof(a));
		member_set(a, f, rnd_bits(f->width) | 1 | (UINT64_C(1) << (f->width - 1)));
		memset(ref, 0, sizeof(ref));
		ib_set(ref, f, member_get(a, f));
		c->enc(a, buf);
		check_bytes(f->name, buf, ref, sizeof(buf));
		c->dec(buf, b);
		for (size_t j = 0; j < c->nf; j++)
			check_field(f->name, &c->f[j], member_get(b, &c->f[j]),
				    member_get(a, &c->f[j]));
	}
}

static void test_pma_attributes(void)
{
	const struct pma_codec codecs[] = {
		{ "ClassPortInfo", cpi_fields, NFIELDS(cpi_fields),
		  sizeof(struct pma_class_port_info), enc_cpi, dec_cpi },
		{ "PortCounters", pc_fields, NFIELDS(pc_fields), sizeof(struct pma_port_counters),
		  enc_pc, dec_pc },
		{ "PortCountersExtended", pce_fields, NFIELDS(pce_fields),
		  sizeof(struct pma_port_counters_ext), enc_pce, dec_pce },
	};
	struct pma_port_counters pc = { 0 };
	uint8_t d[PMA_DATA_SIZE];

	for (size_t i = 0; i < NFIELDS(codecs); i++) {
		CHECK(codecs[i].size <= 128);
		check_pma_codec(&codecs[i]);
	}
	/* Known bytes: PortSelect byte 1, SymbolErrorCounter 4-5, PortXmitData 24-27 */
	pc.port_select = 7;
	pc.symbol_errors = 0x1234;
	pc.xmit_data = 0xdeadbeef;
	pma_pc_encode(&pc, d);
	CHECK_EQ(d[1], 7);
	CHECK_EQ(d[4], 0x12);
	CHECK_EQ(d[5], 0x34);
	CHECK_EQ(d[24], 0xde);
	CHECK_EQ(d[27], 0xef);
}

/* The PerfMgt MAD: header bytes as libibmad reads them, data from byte 64, what is refused */
static void test_pma_mad(void)
{
	struct pma_mad m, d, r;
	uint8_t buf[MAD_SIZE];

	pma_mad_init(&m, MAD_METHOD_GET, PMA_ATTR_PORT_COUNTERS, 0);
	m.hdr.tid = UINT64_C(0x1122334455667788);
	m.data[1] = 9;
	CHECK_EQ(pma_mad_encode(&m, buf), 0);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_BASEVER_F), 1);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_MGMTCLASS_F), IB_PERFORMANCE_CLASS);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_CLASSVER_F), 1);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_METHOD_F), IB_MAD_METHOD_GET);
	CHECK_EQ(mad_get_field(buf, 0, IB_MAD_ATTRID_F), IB_GSI_PORT_COUNTERS);
	CHECK(mad_get_field64(buf, 0, IB_MAD_TRID_F) == m.hdr.tid);
	CHECK_EQ(mad_get_field(buf + IB_PC_DATA_OFFS, 0, IB_PC_PORT_SELECT_F), 9);
	CHECK_EQ(pma_mad_decode(buf, MAD_SIZE, &d), 0);
	CHECK(d.hdr.tid == m.hdr.tid && d.hdr.attr_id == PMA_ATTR_PORT_COUNTERS);
	CHECK_EQ(d.data[1], 9);
	/* Wrong sizes, base version, class, class version */
	CHECK_EQ(pma_mad_decode(buf, MAD_SIZE - 1, &d), -EBADMSG);
	CHECK_EQ(pma_mad_decode(buf, 24, &d), -EBADMSG);
	CHECK_EQ(pma_mad_decode(NULL, MAD_SIZE, &d), -EBADMSG);
	buf[0] = 2;
	CHECK_EQ(pma_mad_decode(buf, MAD_SIZE, &d), -EBADMSG);
	buf[0] = 1;
	buf[1] = MAD_CLASS_SA;
	CHECK_EQ(pma_mad_decode(buf, MAD_SIZE, &d), -EBADMSG);
	buf[1] = MAD_CLASS_PERF;
	buf[2] = 2;
	CHECK_EQ(pma_mad_decode(buf, MAD_SIZE, &d), -EBADMSG);
	m.hdr.mgmt_class = MAD_CLASS_SA;
	CHECK_EQ(pma_mad_encode(&m, buf), -EINVAL);
	/* An answer: GetResp, same attribute and modifier, TID's low half */
	pma_mad_init(&m, MAD_METHOD_GET, PMA_ATTR_PORT_COUNTERS_EXT, 0);
	m.hdr.tid = UINT64_C(0xaaaa000012345678);
	r = m;
	r.hdr.method = MAD_METHOD_GET_RESP;
	r.hdr.tid = UINT64_C(0x5555000012345678);
	CHECK_EQ(pma_check_response(&m, &r), 0);
	r.hdr.tid++;
	CHECK_EQ(pma_check_response(&m, &r), -EPROTO);
	r.hdr.tid--;
	r.hdr.attr_id = PMA_ATTR_PORT_COUNTERS;
	CHECK_EQ(pma_check_response(&m, &r), -EPROTO);
	r.hdr.attr_id = PMA_ATTR_PORT_COUNTERS_EXT;
	r.hdr.method = MAD_METHOD_GET;
	CHECK_EQ(pma_check_response(&m, &r), -EPROTO);
}

int main(void)
{
	RUN(test_bits);
	RUN(test_smp_roundtrip);
	RUN(test_smp_init);
	RUN(test_node_info);
	RUN(test_node_info_reject);
	RUN(test_node_desc);
	RUN(test_switch_info);
	RUN(test_opt_sl2vl);
	RUN(test_port_info);
	RUN(test_port_info_xdr);
	RUN(test_rates);
	RUN(test_mlnx_ext_port_info);
	RUN(test_lft_block);
	RUN(test_sl2vl);
	RUN(test_vl_arb);
	RUN(test_smp_decode_reject);
	RUN(test_check_response);
	RUN(test_dr_path);
	RUN(test_encodings);
	RUN(test_sm_info);
	RUN(test_sa_records);
	RUN(test_sa_codec_vs_mask);
	RUN(test_guid_block);
	RUN(test_bad_mkey_notice);
	RUN(test_pma_attributes);
	RUN(test_pma_mad);
	return unit_report();
}
