/* SPDX-License-Identifier: MIT */
/*
 * Every byte smd puts on or takes off the wire: MAD and SMP headers and the
 * subnet management attributes (their host-order structs are in iba/iba.h)
 * with encoders and decoders. Nothing outside mad/ knows the byte order. Field offsets follow
 * IBA Vol 1 rel 1.3, chapter 14 (SMPs) and chapter 13.4 (MAD header).
 */
#ifndef SMD_MAD_WIRE_H
#define SMD_MAD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iba/iba.h"

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

/* Raw bit-field access in IBA's numbering: bit 0 is the MSB of byte 0. */
uint64_t wire_bits_get(const uint8_t *buf, unsigned int bitoff, unsigned int width);
void wire_bits_set(uint8_t *buf, unsigned int bitoff, unsigned int width, uint64_t val);

/*
 * The common MAD header of a GMP (LID routed, 16-bit status: IBA 13.4.3,
 * figure 144), bytes 0-23 of buf; the class's own checks stay its codec's.
 */
void mad_hdr_put(const struct mad_hdr *h, uint8_t *buf);
void mad_hdr_get(const uint8_t *buf, struct mad_hdr *h);

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

/* The header fields of any MAD, untrusted beyond its length (status without the DR D bit) */
struct mad_summary {
	uint8_t mgmt_class;
	uint8_t method;
	uint16_t status;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint8_t rmpp_type;	/* RMPP header (IBA 13.6.2.1), 0 when absent */
	uint8_t rmpp_flags;
};
int mad_summarize(const uint8_t *buf, size_t len, struct mad_summary *m);
/* A hash of a MAD's content but its TID: a retry hashes as its first try */
uint64_t mad_hash_but_tid(const uint8_t mad[MAD_SIZE]);
/* A Notice (IBA 13.4.8.2) of a whole 256-byte MAD: -EBADMSG if it is none */
struct notice_summary {
	bool generic;
	uint8_t type;
	uint16_t trap_number;	/* generic notices */
	uint16_t issuer_lid;
};
int notice_decode(const uint8_t *buf, size_t len, struct notice_summary *n);
/*
 * Trap 256, Bad M_Key (IBA 14.2.5.1, the Notice's DataDetails): who showed
 * a port the wrong M_Key and with what. By directed route the requester's
 * LID may be unknown (permissive): the return path then says where it is.
 */
#define NOTICE_DR_PATH_MAX	30
struct notice_bad_mkey {
	uint16_t issuer_lid;		/* the port that refused the SMP */
	uint16_t lid;			/* the requester's LID */
	uint16_t dr_slid;
	uint8_t method;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t mkey;			/* the M_Key the SMP carried */
	bool dr_notice;			/* a directed-route SMP: the fields below apply */
	bool dr_truncated;		/* its return path was longer than 30 hops */
	uint8_t dr_hops;
	uint8_t dr_return_path[NOTICE_DR_PATH_MAX];
};
/* -EBADMSG when the MAD is not a whole generic Notice with trap number 256 */
int notice_bad_mkey_decode(const uint8_t *buf, size_t len, struct notice_bad_mkey *n);

/* Build requests: a directed-route SMP (DrSLID = DrDLID = permissive) */
int smp_init_dr(struct smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
		const struct dr_path *path);
int smp_init_lid(struct smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod);
/* -EPROTO for a DR response that is not a valid answer to req */
int smp_check_response(const struct smp *req, const struct smp *resp);

int node_info_decode(const uint8_t data[SMP_DATA_SIZE], struct node_info *ni);
void node_info_encode(const struct node_info *ni, uint8_t data[SMP_DATA_SIZE]);
int node_desc_decode(const uint8_t data[SMP_DATA_SIZE], struct node_desc *nd);
void node_desc_encode(const struct node_desc *nd, uint8_t data[SMP_DATA_SIZE]);
int switch_info_decode(const uint8_t data[SMP_DATA_SIZE], struct switch_info *si);
void switch_info_encode(const struct switch_info *si, uint8_t data[SMP_DATA_SIZE]);
int port_info_decode(const uint8_t data[SMP_DATA_SIZE], struct port_info *pi);
void port_info_encode(const struct port_info *pi, uint8_t data[SMP_DATA_SIZE]);
/* Mellanox ExtendedPortInfo: bytes 3, 7, 11 and 15 (libibmad's field table) */
int mlnx_ext_port_info_decode(const uint8_t data[SMP_DATA_SIZE], struct mlnx_ext_port_info *e);
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
void vl_arb_block_decode(const uint8_t data[SMP_DATA_SIZE],
			 struct vl_arb_entry e[VL_ARB_BLOCK_SIZE]);
void vl_arb_block_encode(const struct vl_arb_entry e[VL_ARB_BLOCK_SIZE],
			 uint8_t data[SMP_DATA_SIZE]);
/* P_KeyTable block: IBA 14.2.5.7, 32 16-bit entries */
void pkey_block_decode(const uint8_t data[SMP_DATA_SIZE], uint16_t pkeys[32]);
void pkey_block_encode(const uint16_t pkeys[32], uint8_t data[SMP_DATA_SIZE]);
/* GUIDInfo (IBA 14.2.5.5): a block of 8 GUIDs; the block number is the modifier */
void guid_block_decode(const uint8_t data[SMP_DATA_SIZE], uint64_t guids[8]);
void guid_block_encode(const uint64_t guids[8], uint8_t data[SMP_DATA_SIZE]);
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
static inline uint32_t mft_amod(uint32_t block, uint32_t position)
{
	return (position & 0xf) << 28 | (block & 0x1ff);
}
void mft_block_decode(const uint8_t data[SMP_DATA_SIZE], struct mft_block *b);
void mft_block_encode(const struct mft_block *b, uint8_t data[SMP_DATA_SIZE]);

#endif
