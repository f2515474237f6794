// SPDX-License-Identifier: MIT
/*
 * MAD capture: IB packet encoders, the ICRC and VCRC, a pcap/ERF writer
 * with its own thread, and a reader. Layouts: LRH IBA 7.7, BTH 9.2,
 * DETH 9.3.3, CRCs 7.8; ERF record type 21 (Endace ERF, INFINIBAND) in
 * pcap with link type 197.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/resource.h>

#include "mad/capture.h"
#include "util/macros.h"

/* ---- byte order ---------------------------------------------------------- */

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static uint32_t swap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

/* ---- headers ------------------------------------------------------------- */

void capture_lrh_encode(const struct ib_lrh *h, uint8_t out[IB_LRH_SIZE])
{
	out[0] = (uint8_t)((h->vl & 0xf) << 4 | (h->lver & 0xf));
	out[1] = (uint8_t)((h->sl & 0xf) << 4 | (h->lnh & 0x3));
	put_be16(out + 2, h->dlid);
	put_be16(out + 4, h->pkt_len & 0x7ff);
	put_be16(out + 6, h->slid);
}

void capture_lrh_decode(const uint8_t in[IB_LRH_SIZE], struct ib_lrh *h)
{
	h->vl = in[0] >> 4;
	h->lver = in[0] & 0xf;
	h->sl = in[1] >> 4;
	h->lnh = in[1] & 0x3;
	h->dlid = get_be16(in + 2);
	h->pkt_len = get_be16(in + 4) & 0x7ff;
	h->slid = get_be16(in + 6);
}

void capture_bth_encode(const struct ib_bth *h, uint8_t out[IB_BTH_SIZE])
{
	out[0] = h->opcode;
	out[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->m ? 0x40 : 0) | (h->pad_cnt & 0x3) << 4 |
			   (h->tver & 0xf));
	put_be16(out + 2, h->pkey);
	out[4] = h->resv8a;
	put_be24(out + 5, h->dest_qp);
	out[8] = h->ack_req ? 0x80 : 0;
	put_be24(out + 9, h->psn);
}

void capture_bth_decode(const uint8_t in[IB_BTH_SIZE], struct ib_bth *h)
{
	h->opcode = in[0];
	h->se = in[1] & 0x80;
	h->m = in[1] & 0x40;
	h->pad_cnt = (in[1] >> 4) & 0x3;
	h->tver = in[1] & 0xf;
	h->pkey = get_be16(in + 2);
	h->resv8a = in[4];
	h->dest_qp = get_be24(in + 5);
	h->ack_req = in[8] & 0x80;
	h->psn = get_be24(in + 9);
}

void capture_deth_encode(const struct ib_deth *h, uint8_t out[IB_DETH_SIZE])
{
	put_be32(out, h->qkey);
	out[4] = 0;
	put_be24(out + 5, h->src_qp);
}

void capture_deth_decode(const uint8_t in[IB_DETH_SIZE], struct ib_deth *h)
{
	h->qkey = get_be32(in);
	h->src_qp = get_be24(in + 5);
}

/* ---- CRCs ---------------------------------------------------------------- */

/*
 * Slicing by 8: t[k][b] is the CRC register after byte b followed by k zero
 * bytes, starting from zero. Both CRCs are reflected, so the low-order byte
 * of the register meets the next input byte.
 */
static uint32_t crc32_tab[8][256];
static uint16_t crc16_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

#define CRC32_POLY_REFLECTED	0xedb88320u	/* 0x04C11DB7 bit-reversed */
#define CRC16_POLY_REFLECTED	0xd008u		/* 0x100B bit-reversed */

static void crc_tables_init(void)
{
	for (unsigned int b = 0; b < 256; b++) {
		uint32_t c32 = b;
		uint16_t c16 = (uint16_t)b;

		for (int i = 0; i < 8; i++) {
			c32 = (c32 >> 1) ^ ((c32 & 1) ? CRC32_POLY_REFLECTED : 0);
			c16 = (uint16_t)((c16 >> 1) ^ ((c16 & 1) ? CRC16_POLY_REFLECTED : 0));
		}
		crc32_tab[0][b] = c32;
		crc16_tab[0][b] = c16;
	}
	for (int k = 1; k < 8; k++) {
		for (unsigned int b = 0; b < 256; b++) {
			uint32_t c32 = crc32_tab[k - 1][b];
			uint16_t c16 = crc16_tab[k - 1][b];

			crc32_tab[k][b] = (c32 >> 8) ^ crc32_tab[0][c32 & 0xff];
			crc16_tab[k][b] = (uint16_t)((c16 >> 8) ^ crc16_tab[0][c16 & 0xff]);
		}
	}
}

static uint32_t crc32_update(uint32_t r, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t x = r ^ get_le32(p);

		r = crc32_tab[7][x & 0xff] ^ crc32_tab[6][(x >> 8) & 0xff] ^
		    crc32_tab[5][(x >> 16) & 0xff] ^ crc32_tab[4][x >> 24] ^
		    crc32_tab[3][p[4]] ^ crc32_tab[2][p[5]] ^ crc32_tab[1][p[6]] ^
		    crc32_tab[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		r = (r >> 8) ^ crc32_tab[0][(r ^ *p++) & 0xff];
	return r;
}

static uint16_t crc16_update(uint16_t r, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint16_t x = r ^ get_le16(p);

		r = crc16_tab[7][x & 0xff] ^ crc16_tab[6][x >> 8] ^ crc16_tab[5][p[2]] ^
		    crc16_tab[4][p[3]] ^ crc16_tab[3][p[4]] ^ crc16_tab[2][p[5]] ^
		    crc16_tab[1][p[6]] ^ crc16_tab[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		r = (uint16_t)((r >> 8) ^ crc16_tab[0][(r ^ *p++) & 0xff]);
	return r;
}

uint32_t capture_crc32(uint32_t crc, const uint8_t *buf, size_t len)
{
	pthread_once(&crc_once, crc_tables_init);
	return ~crc32_update(~crc, buf, len);
}

uint16_t capture_crc16(uint16_t crc, const uint8_t *buf, size_t len)
{
	pthread_once(&crc_once, crc_tables_init);
	return (uint16_t)~crc16_update((uint16_t)~crc, buf, len);
}

uint32_t capture_icrc(const uint8_t *pkt, size_t len)
{
	uint8_t hdr[IB_LRH_SIZE + IB_BTH_SIZE];
	size_t n = len < sizeof(hdr) ? len : sizeof(hdr);

	/* The variant fields count as ones: LRH.VL, BTH.Resv8a (IBA 7.8.1) */
	memcpy(hdr, pkt, n);
	if (n > 0)
		hdr[0] |= 0xf0;
	if (n > IB_LRH_SIZE + 4)
		hdr[IB_LRH_SIZE + 4] = 0xff;
	return capture_crc32(capture_crc32(0, hdr, n), pkt + n, len - n);
}

uint16_t capture_vcrc(const uint8_t *pkt, size_t len)
{
	return capture_crc16(0, pkt, len);
}

/* ---- packets ------------------------------------------------------------- */

static void packet_build(const struct ib_lrh *lrh_in, const struct ib_bth *bth,
			 const struct ib_deth *deth, const uint8_t *mad, uint8_t *out)
{
	struct ib_lrh lrh = *lrh_in;
	size_t icrc_at = IB_MAD_PKT_HDRS + MAD_SIZE;

	lrh.pkt_len = (IB_MAD_PKT_SIZE - IB_VCRC_SIZE) / 4;
	capture_lrh_encode(&lrh, out);
	capture_bth_encode(bth, out + IB_LRH_SIZE);
	capture_deth_encode(deth, out + IB_LRH_SIZE + IB_BTH_SIZE);
	memcpy(out + IB_MAD_PKT_HDRS, mad, MAD_SIZE);
	put_le32(out + icrc_at, capture_icrc(out, icrc_at));
	put_le16(out + icrc_at + IB_ICRC_SIZE, capture_vcrc(out, icrc_at + IB_ICRC_SIZE));
}

void capture_packet_build(const struct capture_frame *f, uint8_t out[IB_MAD_PKT_SIZE])
{
	packet_build(&f->lrh, &f->bth, &f->deth, f->mad, out);
}

int capture_packet_parse(const uint8_t *pkt, size_t len, struct capture_frame *f)
{
	size_t icrc_at = IB_MAD_PKT_HDRS + MAD_SIZE;

	if (len != IB_MAD_PKT_SIZE)
		return -EBADMSG;
	capture_lrh_decode(pkt, &f->lrh);
	capture_bth_decode(pkt + IB_LRH_SIZE, &f->bth);
	capture_deth_decode(pkt + IB_LRH_SIZE + IB_BTH_SIZE, &f->deth);
	if (f->lrh.lnh != IB_LNH_IBA_LOCAL || f->bth.opcode != IB_OPCODE_UD_SEND_ONLY ||
	    f->lrh.pkt_len * 4u != len - IB_VCRC_SIZE || f->bth.pad_cnt)
		return -EBADMSG;
	memcpy(f->mad, pkt + IB_MAD_PKT_HDRS, MAD_SIZE);
	f->icrc = get_le32(pkt + icrc_at);
	f->vcrc = get_le16(pkt + icrc_at + IB_ICRC_SIZE);
	f->icrc_ok = f->icrc == capture_icrc(pkt, icrc_at);
	f->vcrc_ok = f->vcrc == capture_vcrc(pkt, icrc_at + IB_ICRC_SIZE);
	return 0;
}

/* ---- classes ------------------------------------------------------------- */

static const struct {
	const char *name;
	unsigned int bit;
} class_names[] = {
	{ "smp", CAPTURE_CLASS_SMP },
	{ "sa", CAPTURE_CLASS_SA },
	{ "trap", CAPTURE_CLASS_TRAP },
	{ "other", CAPTURE_CLASS_OTHER },
};

#define NCLASS_NAMES (ARRAY_SIZE(class_names))

unsigned int capture_class_of(const uint8_t mad[MAD_SIZE])
{
	uint8_t method = mad[3];

	if (method == MAD_METHOD_TRAP || method == MAD_METHOD_TRAP_REPRESS)
		return CAPTURE_CLASS_TRAP;
	switch (mad[1]) {
	case MAD_CLASS_SMI:
	case MAD_CLASS_SMI_DR:
		return CAPTURE_CLASS_SMP;
	case MAD_CLASS_SA:
		return CAPTURE_CLASS_SA;
	default:
		return CAPTURE_CLASS_OTHER;
	}
}

int capture_parse_classes(const char *s, unsigned int *mask)
{
	unsigned int m = 0;
	const char *p = s;

	for (;;) {
		size_t n;
		bool found = false;

		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, ", \t");
		if (n == 3 && !strncmp(p, "all", 3)) {
			m |= CAPTURE_CLASS_ALL;
			found = true;
		}
		for (size_t i = 0; i < NCLASS_NAMES && !found; i++) {
			const char *name = class_names[i].name;

			if (strlen(name) == n && !strncmp(p, name, n)) {
				m |= class_names[i].bit;
				found = true;
			}
		}
		if (!found)
			return -EINVAL;
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	*mask = m;
	return 0;
}

void capture_format_classes(unsigned int mask, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = 0;
	if ((mask & CAPTURE_CLASS_ALL) == CAPTURE_CLASS_ALL || !mask) {
		snprintf(buf, len, "all");
		return;
	}
	for (size_t i = 0; i < NCLASS_NAMES; i++) {
		if (!(mask & class_names[i].bit))
			continue;
		int w = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
				 class_names[i].name);

		if (w < 0 || (size_t)w >= len - off)
			return;
		off += (size_t)w;
	}
}

/* ---- the writer ---------------------------------------------------------- */

/* What the caller's thread stores per MAD; the writer thread makes the frame */
struct cap_rec {
	uint64_t ts_ns;
	uint32_t sqp, dqp;
	uint16_t slid, dlid;
	uint8_t sl;
	uint8_t flags;
	uint8_t mad[MAD_SIZE];
};

#define REC_INBOUND	0x01
#define REC_LOST	0x02

/*
 * Buffers: batches of records. NBATCH_KEEP stay allocated; during a burst
 * (a sweep of a large fabric) the pool grows up to NBATCH_MAX (~18 MiB,
 * about one sweep of a k=16 fat-tree) before a caller has to wait, so the
 * writer thread, which runs at the lowest priority, can take the CPU the
 * sweep leaves and catch up afterwards.
 */
#define BATCH_RECS	256	/* ~72 KiB of records, ~80 KiB written per batch */
#define NBATCH_KEEP	8
#define NBATCH_MAX	256
#define WRITER_NICE	19
#define FLUSH_EVERY_S	1	/* an idle writer writes what it has this often */

struct cap_batch {
	unsigned int n;
	struct cap_rec rec[BATCH_RECS];
};

struct capture {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* to the writer: batch queued, flush or stop */
	pthread_cond_t space;		/* from the writer: batch freed, flush done */
	pthread_t thread;
	bool thread_started;
	struct cap_batch *fill;		/* being filled by callers */
	struct cap_batch *queue[NBATCH_MAX];	/* full, waiting for the writer */
	unsigned int qhead, qlen;
	struct cap_batch *freel[NBATCH_MAX];
	unsigned int nfree, nalloc;
	uint64_t flush_req, flush_done;
	bool stop;
	int err;
	struct capture_stats st;
	/* set at open */
	char *path;
	uint64_t max_bytes;
	unsigned int classes;
	const uint16_t *local_lid;
	uint16_t port_lid;
	/* the writer thread's own, on cache lines of their own */
	_Alignas(64) int fd;
	uint64_t file_bytes;
	uint32_t psn;
	uint8_t *out;		/* one batch of frames */
};

static void pcap_header(uint8_t out[CAPTURE_PCAP_HDR_SIZE])
{
	put_le32(out, CAPTURE_PCAP_MAGIC);
	put_le16(out + 4, 2);
	put_le16(out + 6, 4);
	put_le32(out + 8, 0);		/* thiszone */
	put_le32(out + 12, 0);		/* sigfigs */
	put_le32(out + 16, 65535);	/* snaplen */
	put_le32(out + 20, CAPTURE_LINKTYPE_ERF);
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int file_open(struct capture *c)
{
	uint8_t hdr[CAPTURE_PCAP_HDR_SIZE];
	int r;

	struct stat st;

	/*
	 * The capture holds every MAD, keys included: never through a
	 * symlink someone planted, never into a FIFO or device (O_NONBLOCK:
	 * opening a FIFO would wait for a reader), and mode 0600 even when
	 * the file was there before.
	 */
	c->fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		     0600);
	if (c->fd < 0)
		return -errno;
	if (fstat(c->fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else
		r = fchmod(c->fd, 0600) < 0 ? -errno : 0;
	if (r < 0) {
		close(c->fd);
		c->fd = -1;
		return r;
	}
	pcap_header(hdr);
	r = write_all(c->fd, hdr, sizeof(hdr));
	c->file_bytes = r < 0 ? 0 : sizeof(hdr);
	return r;
}

/* FILE.(KEEP-1) -> FILE.KEEP, ..., FILE -> FILE.1, then a fresh FILE */
static int file_rotate(struct capture *c)
{
	size_t n = strlen(c->path) + 16;
	char *from = malloc(n), *to = malloc(n);
	int r = 0;

	if (!from || !to) {
		r = -ENOMEM;
		goto out;
	}
	if (close(c->fd) < 0 && errno != EINTR)
		r = -errno;
	c->fd = -1;
	for (int i = CAPTURE_KEEP - 1; i >= 0 && !r; i--) {
		if (i)
			snprintf(from, n, "%s.%d", c->path, i);
		else
			snprintf(from, n, "%s", c->path);
		snprintf(to, n, "%s.%d", c->path, i + 1);
		if (rename(from, to) < 0 && errno != ENOENT)
			r = -errno;
	}
	if (!r)
		r = file_open(c);
out:
	free(from);
	free(to);
	return r;
}

static uint16_t lid_local(const struct capture *c)
{
	uint16_t lid = c->local_lid ? *c->local_lid : 0;

	return lid ? lid : c->port_lid;
}

static bool class_is_smi(uint8_t mclass)
{
	return mclass == MAD_CLASS_SMI || mclass == MAD_CLASS_SMI_DR;
}

/* Writer thread: one record to its frame in c->out */
static void rec_encode(struct capture *c, const struct cap_rec *rec, uint8_t *out)
{
	struct ib_lrh lrh = { 0 };
	struct ib_bth bth = { 0 };
	struct ib_deth deth;
	uint64_t sec = rec->ts_ns / 1000000000u, ns = rec->ts_ns % 1000000000u;
	uint8_t *erf = out + CAPTURE_PCAP_REC_SIZE;
	uint8_t flags = CAPTURE_ERF_FLAG_VLEN;

	put_le32(out, (uint32_t)sec);
	put_le32(out + 4, (uint32_t)(ns / 1000u));
	put_le32(out + 8, CAPTURE_ERF_HDR_SIZE + IB_MAD_PKT_SIZE);
	put_le32(out + 12, CAPTURE_ERF_HDR_SIZE + IB_MAD_PKT_SIZE);

	/* ERF: 32.32 fixed-point seconds, little endian; the rest big endian */
	put_le64(erf, sec << 32 | ((ns << 32) / 1000000000u));
	if (rec->flags & REC_INBOUND)
		flags |= CAPTURE_ERF_FLAG_IF;
	if (rec->flags & REC_LOST)
		flags |= CAPTURE_ERF_FLAG_RXE;
	erf[8] = CAPTURE_ERF_TYPE_IB;
	erf[9] = flags;
	put_be16(erf + 10, CAPTURE_ERF_HDR_SIZE + IB_MAD_PKT_SIZE);	/* rlen */
	put_be16(erf + 12, 0);						/* lctr */
	put_be16(erf + 14, IB_MAD_PKT_SIZE);				/* wlen */

	lrh.vl = class_is_smi(rec->mad[1]) ? IB_VL_SMP : 0;
	lrh.sl = rec->sl;
	lrh.lnh = IB_LNH_IBA_LOCAL;
	lrh.dlid = rec->dlid;
	lrh.slid = rec->slid;
	bth.opcode = IB_OPCODE_UD_SEND_ONLY;
	bth.pkey = IB_PKEY_DEFAULT;
	bth.dest_qp = rec->dqp & 0xffffff;
	bth.psn = c->psn++ & 0xffffff;
	deth.qkey = rec->dqp ? IB_QKEY_GSI : 0;
	deth.src_qp = rec->sqp & 0xffffff;
	packet_build(&lrh, &bth, &deth, rec->mad, erf + CAPTURE_ERF_HDR_SIZE);
}

/* Writer thread, lock not held: write one batch, rotating as needed */
static void batch_write(struct capture *c, const struct cap_batch *b)
{
	uint64_t frames = 0, bytes = 0, rotations = 0;
	unsigned int pending = 0, i;
	size_t used = 0;
	int r = 0;

	for (i = 0; i < b->n && c->fd >= 0; i++) {
		if (c->max_bytes && c->file_bytes + used + CAPTURE_FRAME_SIZE > c->max_bytes &&
		    c->file_bytes + used > CAPTURE_PCAP_HDR_SIZE) {
			r = write_all(c->fd, c->out, used);
			if (r < 0)
				break;
			c->file_bytes += used;
			bytes += used;
			frames += pending;
			used = 0;
			pending = 0;
			r = file_rotate(c);
			if (r < 0)
				break;
			bytes += c->file_bytes;
			rotations++;
		}
		rec_encode(c, &b->rec[i], c->out + used);
		used += CAPTURE_FRAME_SIZE;
		pending++;
	}
	if (!r && used && c->fd >= 0) {
		r = write_all(c->fd, c->out, used);
		if (!r) {
			c->file_bytes += used;
			bytes += used;
			frames += pending;
			pending = 0;
		}
	}
	if (r < 0 && c->fd >= 0) {
		/* Stop writing; what is in the file stays, the error is reported at close */
		close(c->fd);
		c->fd = -1;
	}
	pthread_mutex_lock(&c->lock);
	if (r < 0 && !c->err)
		c->err = r;
	c->st.frames += frames;
	c->st.dropped += b->n - frames;
	c->st.bytes += bytes;
	c->st.rotations += rotations;
	pthread_mutex_unlock(&c->lock);
}

static void queue_push(struct capture *c, struct cap_batch *b)
{
	c->queue[(c->qhead + c->qlen) % NBATCH_MAX] = b;
	c->qlen++;
}

static void *writer_main(void *arg)
{
	struct capture *c = arg;

	/* Linux: the nice value of this thread only; failing is harmless */
	setpriority(PRIO_PROCESS, (id_t)gettid(), WRITER_NICE);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->qlen && !c->stop && c->flush_done == c->flush_req) {
			struct timespec dl;

			clock_gettime(CLOCK_MONOTONIC, &dl);
			dl.tv_sec += FLUSH_EVERY_S;
			if (pthread_cond_timedwait(&c->work, &c->lock, &dl) == ETIMEDOUT &&
			    c->fill && c->fill->n) {
				/* Quiet for a while: write out what is there */
				queue_push(c, c->fill);
				c->fill = NULL;
			}
		}
		if ((c->stop || c->flush_done != c->flush_req) && c->fill && c->fill->n) {
			queue_push(c, c->fill);
			c->fill = NULL;
		}
		if (!c->qlen) {
			c->flush_done = c->flush_req;
			pthread_cond_broadcast(&c->space);
			if (c->stop)
				break;
			continue;
		}
		struct cap_batch *b = c->queue[c->qhead];

		c->qhead = (c->qhead + 1) % NBATCH_MAX;
		c->qlen--;
		pthread_mutex_unlock(&c->lock);
		batch_write(c, b);
		pthread_mutex_lock(&c->lock);
		b->n = 0;
		if (c->nfree >= NBATCH_KEEP) {
			/* The burst is over: give the extra buffers back */
			c->nalloc--;
			pthread_mutex_unlock(&c->lock);
			free(b);
			pthread_mutex_lock(&c->lock);
		} else {
			c->freel[c->nfree++] = b;
		}
		pthread_cond_broadcast(&c->space);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void capture_free(struct capture *c)
{
	if (c->fd >= 0)
		close(c->fd);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->space);
	pthread_mutex_destroy(&c->lock);
	for (unsigned int i = 0; i < c->nfree; i++)
		free(c->freel[i]);
	for (unsigned int i = 0; i < c->qlen; i++)
		free(c->queue[(c->qhead + i) % NBATCH_MAX]);
	free(c->fill);
	free(c->out);
	free(c->path);
	free(c);
}

int capture_open(const struct capture_cfg *cfg, struct capture **out)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	struct capture *c;
	int r;

	if (!cfg || !cfg->path || !*cfg->path)
		return -EINVAL;
	c = aligned_alloc(_Alignof(struct capture), sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->work, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&c->space, NULL);
	c->path = strdup(cfg->path);
	c->out = malloc((size_t)BATCH_RECS * CAPTURE_FRAME_SIZE);
	if (!c->path || !c->out) {
		capture_free(c);
		return -ENOMEM;
	}
	for (int i = 0; i < NBATCH_KEEP; i++) {
		struct cap_batch *b = calloc(1, sizeof(*b));

		if (!b) {
			capture_free(c);
			return -ENOMEM;
		}
		c->freel[c->nfree++] = b;
		c->nalloc++;
	}
	c->max_bytes = cfg->max_bytes;
	c->classes = cfg->classes ? cfg->classes : CAPTURE_CLASS_ALL;
	c->local_lid = cfg->local_lid;
	c->port_lid = cfg->port_lid;
	pthread_once(&crc_once, crc_tables_init);

	r = file_open(c);
	if (r < 0) {
		capture_free(c);
		return r;
	}
	c->st.bytes = c->file_bytes;
	/* The writer takes no signals: they belong to the caller's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&c->thread, NULL, writer_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		capture_free(c);
		return r;
	}
	c->thread_started = true;
	*out = c;
	return 0;
}

int capture_flush(struct capture *c)
{
	int r;

	pthread_mutex_lock(&c->lock);
	uint64_t want = ++c->flush_req;

	pthread_cond_signal(&c->work);
	while (c->flush_done < want)
		pthread_cond_wait(&c->space, &c->lock);
	r = c->err;
	pthread_mutex_unlock(&c->lock);
	return r;
}

int capture_close(struct capture *c)
{
	int r;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->lock);
	if (c->thread_started)
		pthread_join(c->thread, NULL);
	r = c->err;
	if (c->fd >= 0 && close(c->fd) < 0 && !r && errno != EINTR)
		r = -errno;
	c->fd = -1;
	capture_free(c);
	return r;
}

void capture_get_stats(struct capture *c, struct capture_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}

int capture_error(struct capture *c)
{
	int r;

	pthread_mutex_lock(&c->lock);
	r = c->err;
	pthread_mutex_unlock(&c->lock);
	return r;
}

/* Caller's thread, lock held: a slot for one record, NULL when stopped */
static struct cap_rec *rec_get(struct capture *c)
{
	while (!c->fill) {
		if (c->nfree) {
			c->fill = c->freel[--c->nfree];
			break;
		}
		if (c->nalloc < NBATCH_MAX) {
			c->fill = malloc(sizeof(*c->fill));
			if (c->fill) {
				c->fill->n = 0;
				c->nalloc++;
				break;
			}
		}
		if (c->stop)
			return NULL;
		c->st.stalls++;
		pthread_cond_wait(&c->space, &c->lock);
	}
	return &c->fill->rec[c->fill->n];
}

static void rec_commit(struct capture *c)
{
	if (++c->fill->n == BATCH_RECS) {
		queue_push(c, c->fill);
		c->fill = NULL;
		pthread_cond_signal(&c->work);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void capture_sent(struct capture *c, const uint8_t mad[MAD_SIZE], uint16_t dlid, uint32_t dqp)
{
	uint64_t ts = now_ns();
	struct cap_rec *rec;
	bool dr = mad[1] == MAD_CLASS_SMI_DR;

	pthread_mutex_lock(&c->lock);
	if (!(capture_class_of(mad) & c->classes)) {
		c->st.filtered++;
		goto out;
	}
	rec = rec_get(c);
	if (!rec)
		goto out;
	rec->ts_ns = ts;
	rec->slid = dr ? LID_PERMISSIVE : lid_local(c);
	rec->dlid = dr ? LID_PERMISSIVE : dlid;
	rec->sqp = class_is_smi(mad[1]) ? 0 : 1;
	rec->dqp = dqp;
	rec->sl = 0;
	rec->flags = 0;
	memcpy(rec->mad, mad, MAD_SIZE);
	rec_commit(c);
	c->st.sent++;
out:
	pthread_mutex_unlock(&c->lock);
}

void capture_received(struct capture *c, const uint8_t *mad, size_t len, uint16_t slid,
		      uint32_t sqp, uint8_t sl, int status)
{
	uint8_t buf[MAD_SIZE] = { 0 };
	uint64_t ts = now_ns();
	struct cap_rec *rec;
	bool dr, smi;

	if (len > MAD_SIZE)
		len = MAD_SIZE;
	memcpy(buf, mad, len);
	dr = buf[1] == MAD_CLASS_SMI_DR;
	smi = class_is_smi(buf[1]);
	pthread_mutex_lock(&c->lock);
	if (!(capture_class_of(buf) & c->classes)) {
		c->st.filtered++;
		goto out;
	}
	rec = rec_get(c);
	if (!rec)
		goto out;
	rec->ts_ns = ts;
	if (status) {
		/* Our own request, given back: addressed as it was sent */
		rec->slid = dr ? LID_PERMISSIVE : lid_local(c);
		rec->dlid = dr ? LID_PERMISSIVE : slid;
		rec->sqp = smi ? 0 : 1;
		rec->dqp = sqp;
		rec->sl = 0;
		rec->flags = REC_INBOUND | REC_LOST;
		c->st.lost++;
	} else {
		rec->slid = dr ? LID_PERMISSIVE : slid;
		rec->dlid = dr ? LID_PERMISSIVE : lid_local(c);
		rec->sqp = sqp;
		rec->dqp = smi ? 0 : 1;
		rec->sl = sl & 0xf;
		rec->flags = REC_INBOUND;
	}
	memcpy(rec->mad, buf, MAD_SIZE);
	rec_commit(c);
	c->st.received++;
out:
	pthread_mutex_unlock(&c->lock);
}

/* ---- the reader ---------------------------------------------------------- */

struct capture_reader {
	FILE *f;
	bool swap;		/* the file's byte order is not little endian */
	bool nsec;		/* nanosecond pcap */
	uint32_t snaplen;
	uint8_t *buf;
};

#define PCAP_MAGIC_NSEC		0xa1b23c4du
#define READER_MAX_REC		(256 * 1024)

int capture_reader_open(const char *path, struct capture_reader **out)
{
	uint8_t hdr[CAPTURE_PCAP_HDR_SIZE];
	struct capture_reader *r;
	uint32_t magic, linktype;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->buf = malloc(READER_MAX_REC);
	if (!r->buf) {
		free(r);
		return -ENOMEM;
	}
	r->f = fopen(path, "rbe");
	if (!r->f) {
		err = -errno;
		goto fail;
	}
	err = -EBADMSG;
	if (fread(hdr, 1, sizeof(hdr), r->f) != sizeof(hdr))
		goto fail;
	magic = get_le32(hdr);
	if (magic == CAPTURE_PCAP_MAGIC || magic == PCAP_MAGIC_NSEC) {
		r->swap = false;
	} else if (swap32(magic) == CAPTURE_PCAP_MAGIC || swap32(magic) == PCAP_MAGIC_NSEC) {
		r->swap = true;
		magic = swap32(magic);
	} else {
		goto fail;
	}
	r->nsec = magic == PCAP_MAGIC_NSEC;
	linktype = get_le32(hdr + 20);
	if (r->swap)
		linktype = swap32(linktype);
	if ((linktype & 0x0fffffff) != CAPTURE_LINKTYPE_ERF) {
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	capture_reader_close(r);
	return err;
}

int capture_reader_next(struct capture_reader *r, struct capture_frame *f, bool *ib)
{
	uint8_t rh[CAPTURE_PCAP_REC_SIZE];
	uint32_t incl, sec, frac;
	const uint8_t *erf;
	size_t n, hlen;
	uint16_t rlen, wlen;
	uint8_t type;

	*ib = false;
	memset(f, 0, sizeof(*f));
	n = fread(rh, 1, sizeof(rh), r->f);
	if (n == 0 && feof(r->f))
		return 0;
	if (n != sizeof(rh))
		return -EBADMSG;
	sec = get_le32(rh);
	frac = get_le32(rh + 4);
	incl = get_le32(rh + 8);
	if (r->swap) {
		sec = swap32(sec);
		frac = swap32(frac);
		incl = swap32(incl);
	}
	if (incl > READER_MAX_REC || fread(r->buf, 1, incl, r->f) != incl)
		return -EBADMSG;
	f->ts_ns = (uint64_t)sec * 1000000000u + (r->nsec ? frac : (uint64_t)frac * 1000u);
	if (incl < CAPTURE_ERF_HDR_SIZE)
		return 1;
	erf = r->buf;
	type = erf[8];
	f->inbound = erf[9] & CAPTURE_ERF_FLAG_IF;
	f->lost = erf[9] & CAPTURE_ERF_FLAG_RXE;
	rlen = get_be16(erf + 10);
	wlen = get_be16(erf + 14);
	hlen = CAPTURE_ERF_HDR_SIZE;
	/* Extension headers: 8 bytes each while the type's top bit is set */
	for (uint8_t t = type; t & 0x80; t = erf[hlen - 8]) {
		hlen += 8;
		if (hlen > incl)
			return 1;
	}
	if ((type & 0x7f) != CAPTURE_ERF_TYPE_IB || rlen > incl || rlen < hlen)
		return 1;
	uint64_t ts = get_le64(erf);

	f->ts_ns = (ts >> 32) * 1000000000u + (((ts & 0xffffffffu) * 1000000000u) >> 32);
	n = rlen - hlen;
	if (wlen < n)
		n = wlen;
	if (capture_packet_parse(erf + hlen, n, f) == 0)
		*ib = true;
	return 1;
}

void capture_reader_close(struct capture_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->buf);
	free(r);
}
