/* SPDX-License-Identifier: MIT */
/*
 * Packet capture of every MAD smd sends and receives, as the InfiniBand
 * packets they are on the wire, in a file Wireshark and tshark read:
 *
 *   pcap (link type 197, ERF) -> ERF record type 21 (INFINIBAND) ->
 *   LRH | BTH (UD SEND Only) | DETH | MAD (256 bytes) | ICRC | VCRC
 *
 * The header encoders and both CRCs (IBA Vol 1 7.8) are public for tests.
 * The writer takes records on the caller's thread (a timestamp, a mutex, a
 * copy of the MAD) and does the encoding, the CRCs and the writes in a
 * thread of its own at the lowest priority, in batches, with room for a
 * sweep's burst; it rotates the file at a size limit. A reader gives the
 * frames back for smctl. Nothing here logs: errors are returned or kept
 * for capture_close().
 */
#ifndef SMD_MAD_CAPTURE_H
#define SMD_MAD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"

/* Header sizes (IBA 5.2 / 9.2) and the packets the writer produces */
#define IB_LRH_SIZE		8
#define IB_BTH_SIZE		12
#define IB_DETH_SIZE		8
#define IB_ICRC_SIZE		4
#define IB_VCRC_SIZE		2
#define IB_MAD_PKT_HDRS		(IB_LRH_SIZE + IB_BTH_SIZE + IB_DETH_SIZE)
#define IB_MAD_PKT_SIZE		(IB_MAD_PKT_HDRS + MAD_SIZE + IB_ICRC_SIZE + IB_VCRC_SIZE)

#define IB_LNH_IBA_LOCAL	2	/* LRH.LNH: BTH follows, no GRH */
#define IB_OPCODE_UD_SEND_ONLY	0x64	/* BTH.OpCode: UD (011b), SEND Only (00100b) */
#define IB_VL_SMP		15	/* SMPs travel on VL15 */
#define IB_PKEY_DEFAULT		0xffff
#define IB_QKEY_GSI		0x80010000u	/* the well-known GSI Q_Key (IBA 13.5.1) */

/* pcap and ERF */
#define CAPTURE_PCAP_MAGIC	0xa1b2c3d4u	/* microsecond pcap */
#define CAPTURE_PCAP_HDR_SIZE	24
#define CAPTURE_PCAP_REC_SIZE	16
#define CAPTURE_LINKTYPE_ERF	197
#define CAPTURE_ERF_HDR_SIZE	16
#define CAPTURE_ERF_TYPE_IB	21
#define CAPTURE_ERF_FLAG_IF	0x01	/* capture interface bit: 1 = received */
#define CAPTURE_ERF_FLAG_VLEN	0x04	/* varying record length */
#define CAPTURE_ERF_FLAG_RXE	0x10	/* receive error: see capture_received() */
/* One frame in the file: pcap record header + ERF header + packet */
#define CAPTURE_FRAME_SIZE	(CAPTURE_PCAP_REC_SIZE + CAPTURE_ERF_HDR_SIZE + IB_MAD_PKT_SIZE)

/* Local Route Header (IBA 7.7), host order */
struct ib_lrh {
	uint8_t vl;		/* 4 bits */
	uint8_t lver;		/* 4 bits */
	uint8_t sl;		/* 4 bits */
	uint8_t lnh;		/* 2 bits */
	uint16_t dlid;
	uint16_t pkt_len;	/* 11 bits: 4-byte words from LRH to ICRC inclusive */
	uint16_t slid;
};

/* Base Transport Header (IBA 9.2) */
struct ib_bth {
	uint8_t opcode;
	bool se;
	bool m;
	uint8_t pad_cnt;	/* 2 bits */
	uint8_t tver;		/* 4 bits */
	uint16_t pkey;
	uint8_t resv8a;		/* variant: masked to ones in the ICRC */
	uint32_t dest_qp;	/* 24 bits */
	bool ack_req;
	uint32_t psn;		/* 24 bits */
};

/* Datagram Extended Transport Header (IBA 9.3.3) */
struct ib_deth {
	uint32_t qkey;
	uint32_t src_qp;	/* 24 bits */
};

void capture_lrh_encode(const struct ib_lrh *h, uint8_t out[IB_LRH_SIZE]);
void capture_lrh_decode(const uint8_t in[IB_LRH_SIZE], struct ib_lrh *h);
void capture_bth_encode(const struct ib_bth *h, uint8_t out[IB_BTH_SIZE]);
void capture_bth_decode(const uint8_t in[IB_BTH_SIZE], struct ib_bth *h);
void capture_deth_encode(const struct ib_deth *h, uint8_t out[IB_DETH_SIZE]);
void capture_deth_decode(const uint8_t in[IB_DETH_SIZE], struct ib_deth *h);

/*
 * The two CRCs of IBA Vol 1 7.8, both reflected (least significant bit of
 * each byte first), seeded with ones and complemented, and sent least
 * significant byte first:
 *  - capture_crc32(): CRC-32, polynomial 0x04C11DB7 (the Ethernet CRC);
 *  - capture_crc16(): CRC-16, polynomial 0x100B.
 * Both take and return the complemented value, so 0 starts a CRC and a
 * result can be fed back in to continue it.
 * capture_icrc(): the ICRC of a local packet (LRH, no GRH) of len bytes
 * from the LRH to the end of the payload, with the variant fields LRH.VL
 * and BTH.Resv8a taken as ones (IBA 7.8.1). capture_vcrc(): the VCRC over
 * len bytes from the LRH through the ICRC (IBA 7.8.2).
 */
uint32_t capture_crc32(uint32_t crc, const uint8_t *buf, size_t len);
uint16_t capture_crc16(uint16_t crc, const uint8_t *buf, size_t len);
uint32_t capture_icrc(const uint8_t *pkt, size_t len);
uint16_t capture_vcrc(const uint8_t *pkt, size_t len);

/* A MAD as one packet: the headers as they were or will be on the wire */
struct capture_frame {
	uint64_t ts_ns;		/* CLOCK_REALTIME */
	bool inbound;		/* received by smd */
	bool lost;		/* the transport gave our own request back: not delivered */
	struct ib_lrh lrh;
	struct ib_bth bth;
	struct ib_deth deth;
	uint8_t mad[MAD_SIZE];
	/* Set by capture_packet_parse() */
	uint32_t icrc, vcrc;	/* as found in the packet */
	bool icrc_ok, vcrc_ok;
};

/*
 * Encode f as IB_MAD_PKT_SIZE bytes: headers as given except LRH.PktLen
 * (computed), then the MAD, ICRC and VCRC.
 */
void capture_packet_build(const struct capture_frame *f, uint8_t out[IB_MAD_PKT_SIZE]);
/* Decode one packet of the shape above; -EBADMSG if it is not one (CRCs are only reported) */
int capture_packet_parse(const uint8_t *pkt, size_t len, struct capture_frame *f);

/* Filter: which MADs the writer keeps */
#define CAPTURE_CLASS_SMP	(1u << 0)	/* subnet management (LID routed, DR) but traps */
#define CAPTURE_CLASS_SA	(1u << 1)	/* subnet administration, RMPP segments included */
#define CAPTURE_CLASS_TRAP	(1u << 2)	/* Trap and TrapRepress of any class */
#define CAPTURE_CLASS_OTHER	(1u << 3)	/* any other management class */
#define CAPTURE_CLASS_ALL	0x0fu

unsigned int capture_class_of(const uint8_t mad[MAD_SIZE]);
/* "smp,sa,trap,other" or "all"; -EINVAL for an unknown or empty list */
int capture_parse_classes(const char *s, unsigned int *mask);
/* The canonical form of a mask, as capture_parse_classes() reads it back */
void capture_format_classes(unsigned int mask, char *buf, size_t len);

struct capture_cfg {
	const char *path;
	uint64_t max_bytes;	/* 0: no limit; else rotate before a file would exceed it */
	unsigned int classes;	/* CAPTURE_CLASS_*; 0 means all */
	const uint16_t *local_lid;	/* our LID as the SM knows it, read per MAD; may be NULL */
	uint16_t port_lid;	/* used while *local_lid is 0 (the port's LID when opened) */
};

/* Rotation keeps the current file and FILE.1 .. FILE.CAPTURE_KEEP (the oldest last) */
#define CAPTURE_KEEP		3

struct capture_stats {
	uint64_t sent;		/* MADs recorded, by direction */
	uint64_t received;
	uint64_t lost;		/* requests the transport gave back (also in received) */
	uint64_t filtered;	/* MADs left out by the class filter */
	uint64_t frames;	/* frames written to files */
	uint64_t bytes;		/* bytes written, headers included */
	uint64_t dropped;	/* recorded but not written after a write error */
	uint64_t rotations;
	uint64_t stalls;	/* times a caller waited for the writer to free a buffer */
};

struct capture;

/* Create (truncate) the file and start the writer thread; 0 or -errno */
int capture_open(const struct capture_cfg *cfg, struct capture **out);
/* Write everything recorded, stop the thread, close; 0 or the first write error */
int capture_close(struct capture *c);
/* Block until everything recorded so far is written to the file */
int capture_flush(struct capture *c);
void capture_get_stats(struct capture *c, struct capture_stats *st);
/* 0, or the first write or rotation error (the capture stops writing then) */
int capture_error(struct capture *c);

/*
 * Record one MAD. sent: dlid/dqp are where it goes (dlid is ignored for
 * directed route: those carry permissive LIDs). received: slid/sqp/sl
 * are what the transport reports; status != 0 means the transport gave
 * back our own request as undeliverable (a kernel send timeout, ibsim's
 * loss report): recorded inbound with the ERF "RX error" flag, addressed
 * as it was sent.
 */
void capture_sent(struct capture *c, const uint8_t mad[MAD_SIZE], uint16_t dlid, uint32_t dqp);
void capture_received(struct capture *c, const uint8_t *mad, size_t len, uint16_t slid,
		      uint32_t sqp, uint8_t sl, int status);

/* Reading a capture back */
struct capture_reader;

/* -ENOENT etc. from fopen, -EBADMSG: not pcap, -EPROTONOSUPPORT: not link type ERF */
int capture_reader_open(const char *path, struct capture_reader **out);
/*
 * 1 and the next frame; 0 at the end; -EBADMSG for a truncated or corrupt
 * file. *ib is false (and f holds only ts_ns and direction) for a record
 * that is not an ERF InfiniBand record of the shape smd writes.
 */
int capture_reader_next(struct capture_reader *r, struct capture_frame *f, bool *ib);
void capture_reader_close(struct capture_reader *r);

#endif
