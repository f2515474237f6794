// SPDX-License-Identifier: MIT
/*
 * PMA codecs (pma.h). Offsets are bit offsets into the attribute data
 * (which starts at byte 64 of the MAD) in IBA order: bit 0 is the most
 * significant bit of byte 0, as the spec's tables list them.
 */
#include <errno.h>
#include <string.h>

#include "mad/pma.h"

#define GET(buf, off, w)	wire_bits_get((buf), (off), (w))
#define SET(buf, off, w, v)	wire_bits_set((buf), (off), (w), (uint64_t)(v))

void pma_mad_init(struct pma_mad *m, uint8_t method, uint16_t attr_id, uint32_t attr_mod)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_PERF;
	m->hdr.class_version = PMA_CLASS_VERSION;
	m->hdr.method = method;
	m->hdr.attr_id = attr_id;
	m->hdr.attr_mod = attr_mod;
}

/* The common MAD header, IBA 13.4.3 figure 144 */
int pma_mad_encode(const struct pma_mad *m, uint8_t buf[MAD_SIZE])
{
	const struct mad_hdr *h = &m->hdr;

	if (h->mgmt_class != MAD_CLASS_PERF || h->class_version != PMA_CLASS_VERSION)
		return -EINVAL;
	memset(buf, 0, MAD_SIZE);
	mad_hdr_put(h, buf);
	/* Bytes 24-63: reserved in PerfMgt MADs, the data starts at 64 (IBA 16.1) */
	memcpy(buf + PMA_DATA_OFF, m->data, PMA_DATA_SIZE);
	return 0;
}

int pma_mad_decode(const uint8_t *buf, size_t len, struct pma_mad *m)
{
	struct mad_hdr *h = &m->hdr;

	memset(m, 0, sizeof(*m));
	if (!buf || len != MAD_SIZE)
		return -EBADMSG;
	mad_hdr_get(buf, h);
	if (h->base_version != 1 || h->mgmt_class != MAD_CLASS_PERF ||
	    h->class_version != PMA_CLASS_VERSION) {
		memset(m, 0, sizeof(*m));
		return -EBADMSG;
	}
	memcpy(m->data, buf + PMA_DATA_OFF, PMA_DATA_SIZE);
	return 0;
}

int pma_check_response(const struct pma_mad *req, const struct pma_mad *resp)
{
	if (resp->hdr.method != MAD_METHOD_GET_RESP || resp->hdr.attr_id != req->hdr.attr_id ||
	    resp->hdr.attr_mod != req->hdr.attr_mod ||
	    (uint32_t)resp->hdr.tid != (uint32_t)req->hdr.tid)
		return -EPROTO;
	return 0;
}

/* ClassPortInfo: IBA 13.4.8.1 (the fields before the redirect GID) */
#define CPI_FIELDS(X)					\
	X(base_version, 0, 8)				\
	X(class_version, 8, 8)				\
	X(cap_mask, 16, 16)				\
	X(cap_mask2, 32, 27)				\
	X(resp_time_value, 59, 5)

void pma_cpi_decode(const uint8_t d[PMA_DATA_SIZE], struct pma_class_port_info *c)
{
#define X(name, off, w) c->name = GET(d, off, w);
	CPI_FIELDS(X)
#undef X
}

void pma_cpi_encode(const struct pma_class_port_info *c, uint8_t d[PMA_DATA_SIZE])
{
	memset(d, 0, PMA_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, c->name);
	CPI_FIELDS(X)
#undef X
}

/*
 * PortCounters: IBA 16.1.3.5 (bits 0-7 and 160-175 reserved;
 * IBA 1.3 names 160-175 PortQP1Dropped where CapabilityMask bit 15 says so)
 */
#define PC_FIELDS(X)					\
	X(port_select, 8, 8)				\
	X(counter_select, 16, 16)			\
	X(symbol_errors, 32, 16)			\
	X(link_error_recovery, 48, 8)			\
	X(link_downed, 56, 8)				\
	X(rcv_errors, 64, 16)				\
	X(rcv_remote_phys_errors, 80, 16)		\
	X(rcv_switch_relay_errors, 96, 16)		\
	X(xmit_discards, 112, 16)			\
	X(xmit_constraint_errors, 128, 8)		\
	X(rcv_constraint_errors, 136, 8)		\
	X(counter_select2, 144, 8)			\
	X(local_link_integrity_errors, 152, 4)		\
	X(excessive_buffer_overrun_errors, 156, 4)	\
	X(vl15_dropped, 176, 16)			\
	X(xmit_data, 192, 32)				\
	X(rcv_data, 224, 32)				\
	X(xmit_pkts, 256, 32)				\
	X(rcv_pkts, 288, 32)				\
	X(xmit_wait, 320, 32)

void pma_pc_decode(const uint8_t d[PMA_DATA_SIZE], struct pma_port_counters *pc)
{
#define X(name, off, w) pc->name = GET(d, off, w);
	PC_FIELDS(X)
#undef X
}

void pma_pc_encode(const struct pma_port_counters *pc, uint8_t d[PMA_DATA_SIZE])
{
	memset(d, 0, PMA_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, pc->name);
	PC_FIELDS(X)
#undef X
}

/* PortCountersExtended: IBA 16.1.4.11 (bits 0-7 and 32-63 reserved) */
#define PCE_FIELDS(X)					\
	X(port_select, 8, 8)				\
	X(counter_select, 16, 16)			\
	X(xmit_data, 64, 64)				\
	X(rcv_data, 128, 64)				\
	X(xmit_pkts, 192, 64)				\
	X(rcv_pkts, 256, 64)				\
	X(unicast_xmit_pkts, 320, 64)			\
	X(unicast_rcv_pkts, 384, 64)			\
	X(multicast_xmit_pkts, 448, 64)			\
	X(multicast_rcv_pkts, 512, 64)

void pma_pce_decode(const uint8_t d[PMA_DATA_SIZE], struct pma_port_counters_ext *pce)
{
#define X(name, off, w) pce->name = GET(d, off, w);
	PCE_FIELDS(X)
#undef X
}

void pma_pce_encode(const struct pma_port_counters_ext *pce, uint8_t d[PMA_DATA_SIZE])
{
	memset(d, 0, PMA_DATA_SIZE);
#define X(name, off, w) SET(d, off, w, pce->name);
	PCE_FIELDS(X)
#undef X
}
