// SPDX-License-Identifier: MIT
/*
 * MAD/SMP codecs. Offsets are bit offsets into the attribute in IBA order
 * (bit 0 = most significant bit of byte 0), as the spec's tables list them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mad/wire.h"
#include "util/utf8.h"

uint64_t wire_bits_get(const uint8_t *buf, unsigned int bitoff, unsigned int width)
{
	unsigned int first = bitoff / 8, last, tail;
	uint64_t v = 0;

	if (width == 0 || width > 64)
		return 0;
	if (bitoff % 8 + width > 64) {
		/* Spans nine bytes: no 64-bit accumulator holds them all */
		for (unsigned int i = 0; i < width; i++) {
			unsigned int bit = bitoff + i;

			v = (v << 1) | ((buf[bit / 8] >> (7 - bit % 8)) & 1);
		}
		return v;
	}
	last = (bitoff + width - 1) / 8;
	tail = (last + 1) * 8 - (bitoff + width);
	for (unsigned int i = first; i <= last; i++)
		v = (v << 8) | buf[i];
	v >>= tail;
	return width == 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

void wire_bits_set(uint8_t *buf, unsigned int bitoff, unsigned int width, uint64_t val)
{
	if (width == 0 || width > 64)
		return;
	/* Fields wider than 8 bits are byte aligned in every SMP attribute */
	if (bitoff % 8 == 0 && width % 8 == 0) {
		for (unsigned int i = 0; i < width / 8; i++)
			buf[bitoff / 8 + width / 8 - 1 - i] = (uint8_t)(val >> (8 * i));
		return;
	}
	for (unsigned int i = 0; i < width; i++) {
		unsigned int bit = bitoff + width - 1 - i;
		uint8_t mask = (uint8_t)(0x80 >> (bit % 8));

		if (val & (UINT64_C(1) << i))
			buf[bit / 8] |= mask;
		else
			buf[bit / 8] &= (uint8_t)~mask;
	}
}

#define GET(buf, off, w)	wire_bits_get((buf), (off), (w))
#define SET(buf, off, w, v)	wire_bits_set((buf), (off), (w), (uint64_t)(v))

void mad_hdr_put(const struct mad_hdr *h, uint8_t *buf)
{
	buf[0] = h->base_version;
	buf[1] = h->mgmt_class;
	buf[2] = h->class_version;
	buf[3] = h->method;
	SET(buf, 32, 16, h->status);
	SET(buf, 64, 64, h->tid);
	SET(buf, 128, 16, h->attr_id);
	SET(buf, 160, 32, h->attr_mod);
}

void mad_hdr_get(const uint8_t *buf, struct mad_hdr *h)
{
	h->base_version = buf[0];
	h->mgmt_class = buf[1];
	h->class_version = buf[2];
	h->method = buf[3];
	h->status = (uint16_t)GET(buf, 32, 16);
	h->tid = GET(buf, 64, 64);
	h->attr_id = (uint16_t)GET(buf, 128, 16);
	h->attr_mod = (uint32_t)GET(buf, 160, 32);
}

/* MAD header: IBA 13.4.3 figure 144; DR SMP: 14.2.1.2 figure 147 */
int smp_encode(const struct smp *smp, uint8_t buf[MAD_SIZE])
{
	const struct mad_hdr *h = &smp->hdr;

	if (h->mgmt_class != MAD_CLASS_SMI && h->mgmt_class != MAD_CLASS_SMI_DR)
		return -EINVAL;
	if (h->mgmt_class == MAD_CLASS_SMI_DR && h->hop_cnt > SMP_MAX_HOPS)
		return -EINVAL;
	memset(buf, 0, MAD_SIZE);
	buf[0] = h->base_version;
	buf[1] = h->mgmt_class;
	buf[2] = h->class_version;
	buf[3] = h->method;
	if (h->mgmt_class == MAD_CLASS_SMI_DR) {
		SET(buf, 32, 1, h->direction);
		SET(buf, 33, 15, h->status & 0x7fff);
		buf[6] = h->hop_ptr;
		buf[7] = h->hop_cnt;
	} else {
		SET(buf, 32, 16, h->status);
	}
	SET(buf, 64, 64, h->tid);
	SET(buf, 128, 16, h->attr_id);
	SET(buf, 160, 32, h->attr_mod);
	SET(buf, 192, 64, smp->mkey);
	if (h->mgmt_class == MAD_CLASS_SMI_DR) {
		SET(buf, 256, 16, smp->dr_slid);
		SET(buf, 272, 16, smp->dr_dlid);
		memcpy(buf + 128, smp->initial_path, SMP_MAX_HOPS + 1);
		memcpy(buf + 192, smp->return_path, SMP_MAX_HOPS + 1);
	}
	memcpy(buf + 64, smp->data, SMP_DATA_SIZE);
	return 0;
}

int mad_peek(const uint8_t *buf, size_t len, uint8_t *mgmt_class, uint8_t *method,
	     uint64_t *tid)
{
	if (!buf || len < 24)
		return -EBADMSG;
	if (mgmt_class)
		*mgmt_class = buf[1];
	if (method)
		*method = buf[3];
	if (tid)
		*tid = GET(buf, 64, 64);
	return 0;
}

int mad_summarize(const uint8_t *buf, size_t len, struct mad_summary *m)
{
	if (!buf || len < 24)
		return -EBADMSG;
	memset(m, 0, sizeof(*m));
	m->mgmt_class = buf[1];
	m->method = buf[3];
	m->status = (uint16_t)GET(buf, 32, 16);
	/* Directed route: the top bit is the D (direction) bit, not status (IBA 14.2.1.2) */
	if (m->mgmt_class == MAD_CLASS_SMI_DR)
		m->status &= 0x7fff;
	m->tid = GET(buf, 64, 64);
	m->attr_id = (uint16_t)GET(buf, 128, 16);
	m->attr_mod = (uint32_t)GET(buf, 160, 32);
	/* RMPP header (IBA 13.6.2.1), meaningful for classes that use it (SA) */
	if (len >= 36) {
		m->rmpp_type = buf[25];
		m->rmpp_flags = (uint8_t)GET(buf, 213, 3);
	}
	return 0;
}

uint64_t mad_hash_but_tid(const uint8_t mad[MAD_SIZE])
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	/* FNV-1a over every byte but the TID's (bytes 8-15, IBA 13.4.2) */
	for (int i = 0; i < MAD_SIZE; i++) {
		if (i >= 8 && i < 16)
			continue;
		h = (h ^ mad[i]) * UINT64_C(0x100000001b3);
	}
	return h;
}

/* Notice (IBA 13.4.8.2): IsGeneric, Type, then TrapNumber at data bytes 4-5 */
int notice_decode(const uint8_t *buf, size_t len, struct notice_summary *n)
{
	const uint8_t *d = buf + 64;

	if (!buf || len != MAD_SIZE || GET(buf, 128, 16) != SMP_ATTR_NOTICE)
		return -EBADMSG;
	n->generic = GET(d, 0, 1);
	n->type = (uint8_t)GET(d, 1, 7);
	n->trap_number = (uint16_t)GET(d, 32, 16);
	n->issuer_lid = (uint16_t)GET(d, 48, 16);
	return 0;
}

int notice_bad_mkey_decode(const uint8_t *buf, size_t len, struct notice_bad_mkey *n)
{
	const uint8_t *d = buf + 64;
	struct notice_summary ns;

	if (notice_decode(buf, len, &ns) < 0 || !ns.generic || ns.trap_number != 256)
		return -EBADMSG;
	memset(n, 0, sizeof(*n));
	n->issuer_lid = ns.issuer_lid;
	/* DataDetails start at bit 80 of the Notice, after 16 reserved bits */
	n->lid = (uint16_t)GET(d, 96, 16);
	n->dr_slid = (uint16_t)GET(d, 112, 16);
	n->method = (uint8_t)GET(d, 128, 8);
	n->attr_id = (uint16_t)GET(d, 144, 16);
	n->attr_mod = (uint32_t)GET(d, 160, 32);
	n->mkey = GET(d, 192, 64);
	n->dr_notice = GET(d, 264, 1);
	n->dr_truncated = GET(d, 265, 1);
	n->dr_hops = (uint8_t)GET(d, 266, 6);
	if (n->dr_hops > NOTICE_DR_PATH_MAX)
		n->dr_hops = NOTICE_DR_PATH_MAX;
	memcpy(n->dr_return_path, d + 34, NOTICE_DR_PATH_MAX);
	return 0;
}

int smp_decode(const uint8_t *buf, size_t len, struct smp *smp)
{
	struct mad_hdr *h = &smp->hdr;

	if (!buf || len != MAD_SIZE)
		return -EBADMSG;
	memset(smp, 0, sizeof(*smp));
	h->base_version = buf[0];
	h->mgmt_class = buf[1];
	h->class_version = buf[2];
	h->method = buf[3];
	if (h->base_version != 1 || h->class_version != 1)
		return -EBADMSG;
	if (h->mgmt_class != MAD_CLASS_SMI && h->mgmt_class != MAD_CLASS_SMI_DR)
		return -EBADMSG;
	if (h->mgmt_class == MAD_CLASS_SMI_DR) {
		h->direction = GET(buf, 32, 1);
		h->status = GET(buf, 33, 15);
		h->hop_ptr = buf[6];
		h->hop_cnt = buf[7];
		if (h->hop_cnt > SMP_MAX_HOPS || h->hop_ptr > SMP_MAX_HOPS + 1)
			return -EBADMSG;
		smp->dr_slid = GET(buf, 256, 16);
		smp->dr_dlid = GET(buf, 272, 16);
		memcpy(smp->initial_path, buf + 128, SMP_MAX_HOPS + 1);
		memcpy(smp->return_path, buf + 192, SMP_MAX_HOPS + 1);
	} else {
		h->status = GET(buf, 32, 16);
	}
	h->tid = GET(buf, 64, 64);
	h->attr_id = GET(buf, 128, 16);
	h->attr_mod = GET(buf, 160, 32);
	smp->mkey = GET(buf, 192, 64);
	memcpy(smp->data, buf + 64, SMP_DATA_SIZE);
	return 0;
}

static void smp_init(struct smp *smp, uint8_t mgmt_class, uint8_t method, uint16_t attr_id,
		     uint32_t attr_mod)
{
	memset(smp, 0, sizeof(*smp));
	smp->hdr.base_version = 1;
	smp->hdr.mgmt_class = mgmt_class;
	smp->hdr.class_version = 1;
	smp->hdr.method = method;
	smp->hdr.attr_id = attr_id;
	smp->hdr.attr_mod = attr_mod;
}

int smp_init_dr(struct smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
		const struct dr_path *path)
{
	if (!path || path->hops > SMP_MAX_HOPS)
		return -EINVAL;
	smp_init(smp, MAD_CLASS_SMI_DR, method, attr_id, attr_mod);
	smp->hdr.hop_cnt = path->hops;
	/* IBA 14.2.2.1: a pure directed route uses permissive DrSLID/DrDLID */
	smp->dr_slid = LID_PERMISSIVE;
	smp->dr_dlid = LID_PERMISSIVE;
	memcpy(smp->initial_path, path->port, (size_t)path->hops + 1);
	return 0;
}

int smp_init_lid(struct smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod)
{
	smp_init(smp, MAD_CLASS_SMI, method, attr_id, attr_mod);
	return 0;
}

int smp_check_response(const struct smp *req, const struct smp *resp)
{
	if (resp->hdr.method != MAD_METHOD_GET_RESP)
		return -EPROTO;
	if (resp->hdr.mgmt_class != req->hdr.mgmt_class ||
	    resp->hdr.attr_id != req->hdr.attr_id ||
	    resp->hdr.attr_mod != req->hdr.attr_mod ||
	    (uint32_t)resp->hdr.tid != (uint32_t)req->hdr.tid)
		return -EPROTO;
	if (req->hdr.mgmt_class == MAD_CLASS_SMI_DR &&
	    (!resp->hdr.direction || resp->hdr.hop_cnt != req->hdr.hop_cnt))
		return -EPROTO;
	return 0;
}



/* NodeInfo: IBA 14.2.5.3, table 147 (bit offsets): one table drives both directions */
#define NODE_INFO_FIELDS(X)				\
	X(base_version, 0, 8)				\
	X(class_version, 8, 8)				\
	X(node_type, 16, 8)				\
	X(num_ports, 24, 8)				\
	X(sys_guid, 32, 64)				\
	X(node_guid, 96, 64)				\
	X(port_guid, 160, 64)				\
	X(partition_cap, 224, 16)			\
	X(device_id, 240, 16)				\
	X(revision, 256, 32)				\
	X(local_port, 288, 8)				\
	X(vendor_id, 296, 24)

int node_info_decode(const uint8_t d[SMP_DATA_SIZE], struct node_info *ni)
{
#define X(name, off, w) ni->name = GET(d, off, w);
	NODE_INFO_FIELDS(X)
#undef X
	if (ni->node_type < NODE_TYPE_CA || ni->node_type > NODE_TYPE_ROUTER)
		return -EBADMSG;
	if (ni->num_ports == 0 || ni->node_guid == 0)
		return -EBADMSG;
	if (ni->local_port > ni->num_ports)
		return -EBADMSG;
	if (ni->node_type != NODE_TYPE_SWITCH && ni->local_port == 0)
		return -EBADMSG;
	return 0;
}

void node_info_encode(const struct node_info *ni, uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, ni->name);
	NODE_INFO_FIELDS(X)
#undef X
}

/* A valid UTF-8 sequence at s that is no C1 control: its length, or 0 */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint32_t cp;
	size_t len = utf8_len(s, n, &cp);

	return len && (cp < 0x80 || cp > 0x9f) ? len : 0;
}

/*
 * NodeDescription: IBA 14.2.5.2, 64 bytes of UTF-8, not necessarily
 * terminated. It reaches logs and the database: control characters and
 * invalid UTF-8 become '?'.
 */
int node_desc_decode(const uint8_t d[SMP_DATA_SIZE], struct node_desc *nd)
{
	size_t i = 0, o = 0, n = strnlen((const char *)d, SMP_DATA_SIZE);

	while (i < n) {
		size_t len = utf8_seq(d + i, n - i);

		if (len == 1 && (d[i] < 0x20 || d[i] == 0x7f))
			len = 0;
		if (!len) {
			nd->desc[o++] = '?';
			i++;
			continue;
		}
		memcpy(nd->desc + o, d + i, len);
		o += len;
		i += len;
	}
	nd->desc[o] = 0;
	return 0;
}

void node_desc_encode(const struct node_desc *nd, uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
	memcpy(d, nd->desc, strnlen(nd->desc, SMP_DATA_SIZE));
}

/* SwitchInfo: IBA 14.2.5.4, table 148 (bit offsets) */
#define SWITCH_INFO_FIELDS(X)				\
	X(lft_cap, 0, 16)				\
	X(rft_cap, 16, 16)				\
	X(mft_cap, 32, 16)				\
	X(lft_top, 48, 16)				\
	X(default_port, 64, 8)				\
	X(default_mcast_primary_port, 72, 8)		\
	X(default_mcast_not_primary_port, 80, 8)	\
	X(life_time_value, 88, 5)			\
	X(port_state_change, 93, 1)			\
	X(optimized_sl2vl, 94, 2)			\
	X(lids_per_port, 96, 16)			\
	X(partition_enf_cap, 112, 16)			\
	X(inbound_enf_cap, 128, 1)			\
	X(outbound_enf_cap, 129, 1)			\
	X(filter_raw_inbound_cap, 130, 1)		\
	X(filter_raw_outbound_cap, 131, 1)		\
	X(enhanced_port0, 132, 1)			\
	X(mft_top, 144, 16)

int switch_info_decode(const uint8_t d[SMP_DATA_SIZE], struct switch_info *si)
{
#define X(name, off, w) si->name = GET(d, off, w);
	SWITCH_INFO_FIELDS(X)
#undef X
	return 0;
}

void switch_info_encode(const struct switch_info *si, uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, si->name);
	SWITCH_INFO_FIELDS(X)
#undef X
}

/*
 * PortInfo: IBA 14.2.5.6, table 155 (bit offsets). Bits 449-455, reserved
 * before IBA 1.7, hold the XDR fields LinkSpeedExtActive2 (2 bits),
 * LinkSpeedExtSupported2 (2) and LinkSpeedExtEnabled2 (3): the offsets
 * rdma-core's libibmad gives them (fields.c, "More PortInfo fields (XDR)",
 * 2023), bit 0 of each XDR; bit 448 stays reserved.
 */
#define PORT_INFO_FIELDS(X)				\
	X(mkey, 0, 64)					\
	X(gid_prefix, 64, 64)				\
	X(lid, 128, 16)					\
	X(master_sm_lid, 144, 16)			\
	X(cap_mask, 160, 32)				\
	X(diag_code, 192, 16)				\
	X(mkey_lease_period, 208, 16)			\
	X(local_port, 224, 8)				\
	X(link_width_enabled, 232, 8)			\
	X(link_width_supported, 240, 8)			\
	X(link_width_active, 248, 8)			\
	X(link_speed_supported, 256, 4)			\
	X(port_state, 260, 4)				\
	X(phys_state, 264, 4)				\
	X(link_down_default_state, 268, 4)		\
	X(mkey_protect_bits, 272, 2)			\
	X(lmc, 277, 3)					\
	X(link_speed_active, 280, 4)			\
	X(link_speed_enabled, 284, 4)			\
	X(neighbor_mtu, 288, 4)				\
	X(master_sm_sl, 292, 4)				\
	X(vl_cap, 296, 4)				\
	X(init_type, 300, 4)				\
	X(vl_high_limit, 304, 8)			\
	X(vl_arb_high_cap, 312, 8)			\
	X(vl_arb_low_cap, 320, 8)			\
	X(init_type_reply, 328, 4)			\
	X(mtu_cap, 332, 4)				\
	X(vl_stall_count, 336, 3)			\
	X(hoq_life, 339, 5)				\
	X(op_vls, 344, 4)				\
	X(pkey_enf_inbound, 348, 1)			\
	X(pkey_enf_outbound, 349, 1)			\
	X(filter_raw_inbound, 350, 1)			\
	X(filter_raw_outbound, 351, 1)			\
	X(mkey_violations, 352, 16)			\
	X(pkey_violations, 368, 16)			\
	X(qkey_violations, 384, 16)			\
	X(guid_cap, 400, 8)				\
	X(client_reregister, 408, 1)			\
	X(mcast_pkey_trap_suppr, 409, 2)		\
	X(subnet_timeout, 411, 5)			\
	X(resp_time_value, 419, 5)			\
	X(local_phy_errors, 424, 4)			\
	X(overrun_errors, 428, 4)			\
	X(max_credit_hint, 432, 16)			\
	X(link_speed_ext_active2, 449, 2)		\
	X(link_speed_ext_supported2, 451, 2)		\
	X(link_speed_ext_enabled2, 453, 3)		\
	X(link_round_trip_latency, 456, 24)		\
	X(cap_mask2, 480, 16)				\
	X(link_speed_ext_active, 496, 4)		\
	X(link_speed_ext_supported, 500, 4)		\
	X(link_speed_ext_enabled, 507, 5)

int port_info_decode(const uint8_t d[SMP_DATA_SIZE], struct port_info *pi)
{
#define X(name, off, w) pi->name = GET(d, off, w);
	PORT_INFO_FIELDS(X)
#undef X
	return 0;
}

void port_info_encode(const struct port_info *pi, uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, pi->name);
	PORT_INFO_FIELDS(X)
#undef X
}

int mlnx_ext_port_info_decode(const uint8_t d[SMP_DATA_SIZE], struct mlnx_ext_port_info *e)
{
	e->state_change_enable = (uint8_t)GET(d, 24, 8);
	e->link_speed_supported = (uint8_t)GET(d, 56, 8);
	e->link_speed_enabled = (uint8_t)GET(d, 88, 8);
	e->link_speed_active = (uint8_t)GET(d, 120, 8);
	return 0;
}

void sl2vl_table_decode(const uint8_t d[SMP_DATA_SIZE], uint8_t vl[16])
{
	for (unsigned int sl = 0; sl < 16; sl++)
		vl[sl] = (uint8_t)GET(d, 4 * sl, 4);
}

void sl2vl_table_encode(const uint8_t vl[16], uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
	for (unsigned int sl = 0; sl < 16; sl++)
		SET(d, 4 * sl, 4, vl[sl] & 0xf);
}

uint32_t sl2vl_amod(unsigned int in, unsigned int out, bool all_in, bool all_out)
{
	return (all_in ? SL2VL_AMOD_ALL_IN : (in & 0xffu) << 8) |
	       (all_out ? SL2VL_AMOD_ALL_OUT : out & 0xffu);
}

bool switch_info_opt_sl2vl(const struct switch_info *si)
{
	return si->optimized_sl2vl & 1;
}

/* IBA 14.2.5.9, Table 158: per entry 4 reserved bits, the VL (4), the weight (8) */
void vl_arb_block_decode(const uint8_t d[SMP_DATA_SIZE], struct vl_arb_entry e[VL_ARB_BLOCK_SIZE])
{
	for (unsigned int i = 0; i < VL_ARB_BLOCK_SIZE; i++) {
		e[i].vl = (uint8_t)GET(d, 16 * i + 4, 4);
		e[i].weight = (uint8_t)GET(d, 16 * i + 8, 8);
	}
}

void vl_arb_block_encode(const struct vl_arb_entry e[VL_ARB_BLOCK_SIZE],
			 uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
	for (unsigned int i = 0; i < VL_ARB_BLOCK_SIZE; i++) {
		SET(d, 16 * i + 4, 4, e[i].vl & 0xf);
		SET(d, 16 * i + 8, 8, e[i].weight);
	}
}

void pkey_block_decode(const uint8_t d[SMP_DATA_SIZE], uint16_t pkeys[32])
{
	for (unsigned int i = 0; i < 32; i++)
		pkeys[i] = (uint16_t)GET(d, 16 * i, 16);
}

void pkey_block_encode(const uint16_t pkeys[32], uint8_t d[SMP_DATA_SIZE])
{
	for (unsigned int i = 0; i < 32; i++)
		SET(d, 16 * i, 16, pkeys[i]);
}

void guid_block_decode(const uint8_t data[SMP_DATA_SIZE], uint64_t guids[8])
{
	for (unsigned int k = 0; k < 8; k++)
		guids[k] = GET(data, 64 * k, 64);
}

void guid_block_encode(const uint64_t guids[8], uint8_t data[SMP_DATA_SIZE])
{
	memset(data, 0, SMP_DATA_SIZE);
	for (unsigned int k = 0; k < 8; k++)
		SET(data, 64 * k, 64, guids[k]);
}

/* SMInfo: IBA 14.2.5.13, table 168 (bit offsets) */
#define SM_INFO_FIELDS(X)				\
	X(guid, 0, 64)					\
	X(sm_key, 64, 64)				\
	X(act_count, 128, 32)				\
	X(priority, 160, 4)				\
	X(sm_state, 164, 4)

int sm_info_decode(const uint8_t d[SMP_DATA_SIZE], struct sm_info *si)
{
#define X(name, off, w) si->name = GET(d, off, w);
	SM_INFO_FIELDS(X)
#undef X
	return si->sm_state > SM_STATE_MASTER ? -EBADMSG : 0;
}

void sm_info_encode(const struct sm_info *si, uint8_t d[SMP_DATA_SIZE])
{
	memset(d, 0, SMP_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, si->name);
	SM_INFO_FIELDS(X)
#undef X
}

void smp_make_response(struct smp *smp, uint16_t status)
{
	smp->hdr.method = MAD_METHOD_GET_RESP;
	smp->hdr.status = status;
	if (smp->hdr.mgmt_class == MAD_CLASS_SMI_DR) {
		/* The responder turns the SMP around: D set, hop pointer at the end */
		smp->hdr.direction = true;
		smp->hdr.hop_ptr = smp->hdr.hop_cnt;
	}
}

/* LinearForwardingTable: IBA 14.2.5.10, 64 one-byte port entries */
void lft_block_decode(const uint8_t d[SMP_DATA_SIZE], struct lft_block *b)
{
	memcpy(b->port, d, LFT_BLOCK_SIZE);
}

void lft_block_encode(const struct lft_block *b, uint8_t d[SMP_DATA_SIZE])
{
	memcpy(d, b->port, LFT_BLOCK_SIZE);
}

void mft_block_decode(const uint8_t d[SMP_DATA_SIZE], struct mft_block *b)
{
	for (unsigned int i = 0; i < MFT_BLOCK_SIZE; i++)
		b->mask[i] = (uint16_t)GET(d, 16 * i, 16);
}

void mft_block_encode(const struct mft_block *b, uint8_t d[SMP_DATA_SIZE])
{
	for (unsigned int i = 0; i < MFT_BLOCK_SIZE; i++)
		SET(d, 16 * i, 16, b->mask[i]);
}


