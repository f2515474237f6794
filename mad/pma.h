/* SPDX-License-Identifier: MIT */
/*
 * Performance management MADs on the wire (IBA 16.1): the GMP as a PMA
 * sends and answers it (the common header, 40 reserved bytes, 192 bytes
 * of attribute data from byte 64) and the attributes a performance
 * manager reads: ClassPortInfo, PortCounters, PortCountersExtended, each
 * one field table with IBA bit offsets driving both directions (their
 * host-order structs are in iba/iba.h).
 */
#ifndef SMD_MAD_PMA_H
#define SMD_MAD_PMA_H

#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"

#define PMA_DATA_OFF	64
#define PMA_DATA_SIZE	(MAD_SIZE - PMA_DATA_OFF)

struct pma_mad {
	struct mad_hdr hdr;
	uint8_t data[PMA_DATA_SIZE];
};

/* A request of class MAD_CLASS_PERF, version 1 (TID 0: the transaction layer sets it) */
void pma_mad_init(struct pma_mad *m, uint8_t method, uint16_t attr_id, uint32_t attr_mod);
/* MAD_SIZE bytes; -EINVAL for a MAD that is not of the performance class, version 1 */
int pma_mad_encode(const struct pma_mad *m, uint8_t buf[MAD_SIZE]);
/*
 * Exactly one whole MAD (MAD_SIZE bytes), base version 1, class
 * MAD_CLASS_PERF, class version 1: else -EBADMSG, m untrusted
 */
int pma_mad_decode(const uint8_t *buf, size_t len, struct pma_mad *m);
/*
 * resp answers req: a GetResp of the same attribute and modifier, the
 * low 32 bits of the TID equal (the MAD layer owns the high ones). -EPROTO
 */
int pma_check_response(const struct pma_mad *req, const struct pma_mad *resp);

void pma_cpi_decode(const uint8_t d[PMA_DATA_SIZE], struct pma_class_port_info *c);
void pma_cpi_encode(const struct pma_class_port_info *c, uint8_t d[PMA_DATA_SIZE]);
void pma_pc_decode(const uint8_t d[PMA_DATA_SIZE], struct pma_port_counters *pc);
void pma_pc_encode(const struct pma_port_counters *pc, uint8_t d[PMA_DATA_SIZE]);
void pma_pce_decode(const uint8_t d[PMA_DATA_SIZE], struct pma_port_counters_ext *pce);
void pma_pce_encode(const struct pma_port_counters_ext *pce, uint8_t d[PMA_DATA_SIZE]);

#endif
