/*
 * mcclient.c - a multicast SA client for tests, written from the IBA spec.
 *
 * It speaks MCMemberRecord (IBA 15.2.5.17) to the SA through libibumad
 * only: every byte of the MAD header (IBA 13.4.2), the RMPP header
 * (IBA 13.6.2), the SA header (IBA 15.2.1.1) and the record is written
 * here, independently of smd's own encoders, so that it can judge them.
 * Under the simulator it runs as an ibsim client (LD_PRELOAD libumad2sim,
 * SIM_HOST names the node).  One line of key=value pairs per operation.
 *
 *   mcclient [options] VERB [key=value...] [\; VERB ...]
 *   mcclient [options] --batch FILE      (one sequence per line, "-" = stdin)
 *   mcclient [options] --fanout HOSTS [--jobs N] VERB ...
 *
 * VERBs: info, cpi, join, leave, get, gettable, ipoib, ipoib-leave, scan.
 * Run "mcclient --help" for the keys.  Operations of one sequence run in
 * order; up to --inflight sequences run at once (each with one request in
 * flight).  --fanout forks one child per host of the file (SIM_HOST set
 * before the child's first umad call: umad2sim attaches lazily), at most
 * --jobs at once: ibsim serves 10 clients in all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>

/* ------------------------------------------------------------ constants */
#define MAD_SIZE	256
#define MAD_HDR		24	/* IBA 13.4.2: common MAD header */
#define RMPP_HDR	12	/* IBA 13.6.2.1: RMPP header, bytes 24-35 */
#define SA_HDR		20	/* IBA 15.2.1.1: SM_Key, AttributeOffset, ComponentMask */
#define SA_DATA_OFF	(MAD_HDR + RMPP_HDR + SA_HDR)	/* 56 */
#define SA_DATA_LEN	(MAD_SIZE - SA_DATA_OFF)	/* 200 */
#define MCR_LEN		52	/* IBA 15.2.5.17: 13 words */
#define MCR_PADDED	56	/* AttributeOffset 7: records are 8-byte aligned */
#define CPI_LEN		72	/* IBA 13.4.8.1 ClassPortInfo */
/* umad2sim 0.10 hands a reader only sizeof(struct sim_request) (288) minus
 * umad_size() (64) bytes of each MAD: bytes 224-255 read as 0 */
#define SIM_LOST_FROM	224

#define CLASS_SA	0x03
#define SA_CLASS_VER	2
#define METHOD_GET	0x01
#define METHOD_SET	0x02
#define METHOD_GETTABLE	0x12
#define METHOD_DELETE	0x15
#define METHOD_RESP	0x80
#define ATTR_CPI	0x0001
#define ATTR_MCR	0x0038
/* SMPs, for reading MulticastForwardingTables (IBA 14.2.1.1, 14.2.5.12) */
#define CLASS_SMP_LID	0x01
#define SMP_DATA_OFF	64
#define ATTR_NODEINFO	0x0011
#define ATTR_MFT	0x001b
#define MLIDS_PER_BLOCK	32
#define SA_QKEY		0x80010000u	/* IBA 13.5.1: the well-known GSI Q_Key */

/* IBA 13.6.2.1 RMPP types and flags */
#define RMPP_DATA	1
#define RMPP_ACK	2
#define RMPP_STOP	3
#define RMPP_ABORT	4
#define RMPP_ACTIVE	0x01
#define RMPP_FIRST	0x02
#define RMPP_LAST	0x04
#define RMPP_WINDOW	64

/* IBA 15.2.5.17: MCMemberRecord component mask bits (Table 219 order) */
enum {
	C_MGID, C_PGID, C_QKEY, C_MLID, C_MTUSEL, C_MTU, C_TCLASS, C_PKEY,
	C_RATESEL, C_RATE, C_PLTSEL, C_PLT, C_SL, C_FLOW, C_HOP, C_SCOPE,
	C_JS, C_PROXY, C_NFIELDS
};
static const char *const field_name[C_NFIELDS] = {
	"mgid", "pgid", "qkey", "mlid", "mtusel", "mtu", "tclass", "pkey",
	"ratesel", "rate", "pltsel", "plt", "sl", "flow", "hop", "scope",
	"js", "proxy"
};
#define BIT(c)	(1ull << (c))

/* JoinState bits, IBA 15.2.5.17 (bit 3 added by the 2015 SendOnlyFullMember annex) */
#define JS_FULL		0x1
#define JS_NON		0x2
#define JS_SENDONLY	0x4
#define JS_SO_FULL	0x8

/* ------------------------------------------------------------ byte order */
static void put8(uint8_t *p, unsigned v) { p[0] = v; }
static void put16(uint8_t *p, unsigned v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}
static unsigned get16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

/* ------------------------------------------------------------ the record */
struct mcr {
	uint8_t mgid[16], pgid[16];
	uint32_t qkey, flow;
	uint16_t mlid, pkey;
	uint8_t mtusel, mtu, tclass, ratesel, rate, pltsel, plt, sl, hop, scope, js, proxy;
};

/* IBA 15.2.5.17 MCMemberRecord layout (byte offsets in the record) */
static void mcr_encode(uint8_t *d, const struct mcr *r)
{
	memset(d, 0, MCR_PADDED);
	memcpy(d, r->mgid, 16);
	memcpy(d + 16, r->pgid, 16);
	put32(d + 32, r->qkey);
	put16(d + 36, r->mlid);
	put8(d + 38, (r->mtusel & 3) << 6 | (r->mtu & 0x3f));
	put8(d + 39, r->tclass);
	put16(d + 40, r->pkey);
	put8(d + 42, (r->ratesel & 3) << 6 | (r->rate & 0x3f));
	put8(d + 43, (r->pltsel & 3) << 6 | (r->plt & 0x3f));
	put32(d + 44, (uint32_t)(r->sl & 0xf) << 28 | (r->flow & 0xfffff) << 8 | r->hop);
	put8(d + 48, (r->scope & 0xf) << 4 | (r->js & 0xf));
	put8(d + 49, (r->proxy & 1) << 7);	/* then 23 reserved bits */
}

static void mcr_decode(const uint8_t *d, struct mcr *r)
{
	uint32_t w;

	memcpy(r->mgid, d, 16);
	memcpy(r->pgid, d + 16, 16);
	r->qkey = get32(d + 32);
	r->mlid = get16(d + 36);
	r->mtusel = d[38] >> 6;
	r->mtu = d[38] & 0x3f;
	r->tclass = d[39];
	r->pkey = get16(d + 40);
	r->ratesel = d[42] >> 6;
	r->rate = d[42] & 0x3f;
	r->pltsel = d[43] >> 6;
	r->plt = d[43] & 0x3f;
	w = get32(d + 44);
	r->sl = w >> 28;
	r->flow = (w >> 8) & 0xfffff;
	r->hop = w & 0xff;
	r->scope = d[48] >> 4;
	r->js = d[48] & 0xf;
	r->proxy = d[49] >> 7;
}

/* ------------------------------------------------------------ options */
static struct {
	int timeout_ms;
	int retries;
	int inflight;
	int jobs;
	int sa_lid;		/* 0: the port's SM LID */
	int sim_lost_from;	/* first MAD byte umad2sim drops, -1 none */
	int verbose;
	bool quiet_records;
	bool no_repair;
	bool summary;
	const char *sysfs_dir;	/* --fanout children attach in a dir here */
	const char *host;	/* SIM_HOST, for the output */
} opt = { 1000, 3, 32, 4, 0, -2, 0, false, false, false, "/dev/shm", NULL };

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ the port */
static struct {
	int portid, agent, smp_agent;
	unsigned lid, sm_lid;
	uint64_t prefix, guid;
	uint16_t pkeys[64];
	unsigned npkeys;
	uint8_t gid[16];
	uint32_t next_tid;
} port;

static int port_open(void)
{
	umad_port_t p;
	unsigned i;

	if (umad_init() < 0) {
		fprintf(stderr, "mcclient: umad_init failed\n");
		return -1;
	}
	if (umad_get_port(NULL, 0, &p) < 0) {
		fprintf(stderr, "mcclient: no umad port\n");
		return -1;
	}
	port.lid = p.base_lid;
	port.sm_lid = p.sm_lid;
	port.prefix = be64toh(p.gid_prefix);
	port.guid = be64toh(p.port_guid);
	for (i = 0; i < p.pkeys_size && port.npkeys < 64; i++)
		if (p.pkeys[i] & 0x7fff)
			port.pkeys[port.npkeys++] = p.pkeys[i];
	umad_release_port(&p);
	put64(port.gid, port.prefix);
	put64(port.gid + 8, port.guid);
	port.portid = umad_open_port(NULL, 0);
	if (port.portid < 0) {
		fprintf(stderr, "mcclient: umad_open_port failed\n");
		return -1;
	}
	/* rmpp_version 0: no kernel RMPP, this program reassembles itself */
	port.agent = umad_register(port.portid, CLASS_SA, SA_CLASS_VER, 0, NULL);
	if (port.agent < 0) {
		fprintf(stderr, "mcclient: umad_register failed\n");
		return -1;
	}
	port.smp_agent = umad_register(port.portid, CLASS_SMP_LID, 1, 0, NULL);
	if (port.smp_agent < 0) {
		fprintf(stderr, "mcclient: umad_register (SMP) failed\n");
		return -1;
	}
	port.next_tid = (uint32_t)getpid() << 12;
	if (!opt.sa_lid)
		opt.sa_lid = port.sm_lid;
	return 0;
}

/* ------------------------------------------------------------ operations */
enum verb {
	V_JOIN, V_LEAVE, V_GET, V_GETTABLE, V_CPI, V_IPOIB, V_IPOIB_LEAVE,
	V_SCAN, V_INFO, V_RAWTABLE, V_MFT
};
static const char *const verb_name[] = {
	"join", "leave", "get", "gettable", "cpi", "ipoib", "ipoib-leave", "scan", "info",
	"rawtable", "mft"
};

struct seq;

struct op {
	enum verb verb;
	struct mcr rec;
	uint64_t mask, setmask, clearmask;
	bool mask_explicit, mgid_given, pgid_given, pkey_given, js_given;
	bool mgid_from_prev;	/* mgid=@: the MGID of the last answer */
	bool pgid_self;		/* pgid=self */
	bool mgid_snm;		/* mgid=snm: this port's IPv6 solicited-node group */
	bool sendonly, oldkernel;
	uint64_t smkey;
	unsigned scan_from, scan_to;
	unsigned attr;		/* rawtable: any SA attribute, to test RMPP */
	unsigned lid;		/* mft: the switch */
	int method;
	struct op *next;
};

struct seq {
	struct op *head, *cur;
	int id;
	/* state of the request in flight */
	uint32_t tid;
	int tries;
	double deadline, t_first;
	bool busy;
	uint8_t req[MAD_SIZE];
	/* RMPP reassembly (IBA 13.6.3 receiver) */
	bool rmpp;
	uint32_t next_seg, total, nseg, attr_off, last_pay;
	bool bad_paylen;
	uint8_t *data;
	size_t len, cap;
	uint8_t first_hdr[SA_DATA_OFF];
	/* scan progress */
	unsigned scan_next, scan_found, scan_err;
	/* mft: NumPorts, then (block, position) in turn; masks[mlid][pos] */
	unsigned mft_nports, mft_block, mft_pos;
	bool mft_have_ni;
	uint16_t (*masks)[16];
	/* what earlier operations learnt */
	struct mcr last;	/* the last record answered */
	bool have_last;
	struct mcr joined;	/* the last successful join, for ipoib-leave */
	bool have_joined;
	bool bcast_tried, cpi_done, cpi_no_sofull;
	bool barrier;		/* a "barrier" line of a batch */
	bool split;		/* made by split_scans() */
	bool truncated;		/* a table sent as one MAD that may go on */
	bool repairing;
	uint8_t *repaired;
	size_t rep_pos;
	unsigned table_status;
	const char *why;
};

/* what the process learnt: the broadcast group, as the IPoIB driver keeps it */
static struct mcr bcast;
static bool have_bcast;
static int failures;

static const char *sa_status_name(unsigned st)
{
	static const char *const sa[] = {
		"OK", "ERR_NO_RESOURCES", "ERR_REQ_INVALID", "ERR_NO_RECORDS",
		"ERR_TOO_MANY_RECORDS", "ERR_REQ_INVALID_GID",
		"ERR_REQ_INSUFFICIENT_COMPONENTS", "ERR_REQ_DENIED"
	};
	unsigned code = (st >> 2) & 7, cls = (st >> 8) & 0x7f;

	if (st == 0)
		return "OK";
	/* IBA 13.4.7 Table 112: common status bits 2-4 */
	if (code == 1)
		return "BAD_VERSION";
	if (code == 2)
		return "METHOD_UNSUPPORTED";
	if (code == 3)
		return "METHOD_ATTR_UNSUPPORTED";
	if (code == 7)
		return "INVALID_FIELD";
	if (st & 1)
		return "BUSY";
	/* IBA 15.2.1.1: SA-specific codes in bits 8-14 */
	if (cls && cls < sizeof(sa) / sizeof(sa[0]))
		return sa[cls];
	return "OTHER";
}

static void gid_str(const uint8_t *g, char *buf)
{
	inet_ntop(AF_INET6, g, buf, INET6_ADDRSTRLEN);
}

/* One output line: "host=... seq=N op=VERB key=value ..." */
static void emit(const struct seq *s, const char *fmt, ...)
{
	char line[2048];
	int n;
	va_list ap;

	n = snprintf(line, sizeof(line), "host=%s seq=%d ", opt.host ? opt.host : "-",
		     s ? s->id : 0);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line: children of --fanout share stdout */
	if (write(STDOUT_FILENO, line, n) < 0)
		exit(3);
}

static int rec_str(const struct mcr *r, char *buf, size_t len)
{
	char mg[INET6_ADDRSTRLEN], pg[INET6_ADDRSTRLEN];

	gid_str(r->mgid, mg);
	gid_str(r->pgid, pg);
	return snprintf(buf, len,
			"mgid=%s pgid=%s mlid=0x%04x qkey=0x%08" PRIx32 " pkey=0x%04x "
			"mtusel=%u mtu=%u tclass=%u ratesel=%u rate=%u pltsel=%u plt=%u "
			"sl=%u flow=0x%05" PRIx32 " hop=%u scope=%u js=0x%x proxy=%u",
			mg, pg, r->mlid, r->qkey, r->pkey, r->mtusel, r->mtu, r->tclass,
			r->ratesel, r->rate, r->pltsel, r->plt, r->sl, r->flow, r->hop,
			r->scope, r->js, r->proxy);
}

/* ------------------------------------------------------------ parsing */
static int parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end || end == s || x > max)
		return -1;
	*v = x;
	return 0;
}

static int parse_gid(const char *s, uint8_t *g)
{
	if (!strcmp(s, "0")) {
		memset(g, 0, 16);
		return 0;
	}
	return inet_pton(AF_INET6, s, g) == 1 ? 0 : -1;
}

static int field_index(const char *name)
{
	int i;

	if (!strcmp(name, "portgid"))
		return C_PGID;
	if (!strcmp(name, "joinstate"))
		return C_JS;
	for (i = 0; i < C_NFIELDS; i++)
		if (!strcmp(name, field_name[i]))
			return i;
	return -1;
}

static int mask_from_names(const char *list, uint64_t *mask)
{
	char buf[512], *tok, *save;
	int f;

	snprintf(buf, sizeof(buf), "%s", list);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		f = field_index(tok);
		if (f < 0)
			return -1;
		*mask |= BIT(f);
	}
	return 0;
}

static int set_field(struct op *o, int f, const char *val)
{
	static const uint64_t max[C_NFIELDS] = {
		[C_QKEY] = 0xffffffff, [C_MLID] = 0xffff, [C_MTUSEL] = 3, [C_MTU] = 63,
		[C_TCLASS] = 255, [C_PKEY] = 0xffff, [C_RATESEL] = 3, [C_RATE] = 63,
		[C_PLTSEL] = 3, [C_PLT] = 63, [C_SL] = 15, [C_FLOW] = 0xfffff,
		[C_HOP] = 255, [C_SCOPE] = 15, [C_JS] = 15, [C_PROXY] = 1
	};
	struct mcr *r = &o->rec;
	uint64_t v = 0;

	if (f == C_MGID) {
		if (!strcmp(val, "@")) {
			o->mgid_from_prev = true;
		} else if (!strcmp(val, "snm")) {
			o->mgid_snm = true;
		} else if (parse_gid(val, r->mgid) < 0) {
			return -1;
		}
		o->mgid_given = true;
		o->setmask |= BIT(f);
		return 0;
	}
	if (f == C_PGID) {
		if (!strcmp(val, "self"))
			o->pgid_self = true;	/* filled at send time */
		else if (parse_gid(val, r->pgid) < 0)
			return -1;
		o->pgid_given = !o->pgid_self;
		o->setmask |= BIT(f);
		return 0;
	}
	if (parse_num(val, max[f], &v) < 0)
		return -1;
	switch (f) {
	case C_QKEY: r->qkey = v; break;
	case C_MLID: r->mlid = v; break;
	case C_MTUSEL: r->mtusel = v; break;
	case C_MTU: r->mtu = v; break;
	case C_TCLASS: r->tclass = v; break;
	case C_PKEY: r->pkey = v; o->pkey_given = true; break;
	case C_RATESEL: r->ratesel = v; break;
	case C_RATE: r->rate = v; break;
	case C_PLTSEL: r->pltsel = v; break;
	case C_PLT: r->plt = v; break;
	case C_SL: r->sl = v; break;
	case C_FLOW: r->flow = v; break;
	case C_HOP: r->hop = v; break;
	case C_SCOPE: r->scope = v; break;
	case C_JS: r->js = v; o->js_given = true; break;
	case C_PROXY: r->proxy = v; break;
	}
	o->setmask |= BIT(f);
	return 0;
}

static int parse_verb(const char *w, enum verb *v)
{
	unsigned i;

	for (i = 0; i < sizeof(verb_name) / sizeof(verb_name[0]); i++)
		if (!strcmp(w, verb_name[i])) {
			*v = i;
			return 0;
		}
	return -1;
}

/* One operation from words argv[0..argc-1]: VERB key=value... */
static struct op *parse_op(int argc, char **argv)
{
	struct op *o = calloc(1, sizeof(*o));
	uint64_t v;
	int i, f;

	if (!o)
		exit(3);
	if (parse_verb(argv[0], &o->verb) < 0) {
		fprintf(stderr, "mcclient: unknown verb '%s'\n", argv[0]);
		goto bad;
	}
	o->scan_from = 0xc000;
	o->scan_to = o->verb == V_MFT ? 0xc3ff : 0xfffe;
	for (i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		char key[64];
		const char *val;

		if (!strcmp(argv[i], "sendonly")) {
			o->sendonly = true;
			continue;
		}
		if (!strcmp(argv[i], "oldkernel")) {
			o->oldkernel = true;
			continue;
		}
		if (!eq || eq - argv[i] >= (int)sizeof(key)) {
			fprintf(stderr, "mcclient: expected key=value, got '%s'\n", argv[i]);
			goto bad;
		}
		memcpy(key, argv[i], eq - argv[i]);
		key[eq - argv[i]] = 0;
		val = eq + 1;
		if (!strcmp(key, "mask")) {
			if (parse_num(val, UINT64_MAX, &v) < 0 && mask_from_names(val, &v) < 0)
				goto badval;
			o->mask = v;
			o->mask_explicit = true;
		} else if (!strcmp(key, "clear")) {
			if (mask_from_names(val, &v) < 0)
				goto badval;
			o->clearmask |= v;
		} else if (!strcmp(key, "smkey")) {
			if (parse_num(val, UINT64_MAX, &o->smkey) < 0)
				goto badval;
		} else if (!strcmp(key, "lid")) {
			if (parse_num(val, 0xbfff, &v) < 0)
				goto badval;
			o->lid = v;
		} else if (!strcmp(key, "attr")) {
			if (parse_num(val, 0xffff, &v) < 0)
				goto badval;
			o->attr = v;
		} else if (!strcmp(key, "from") || !strcmp(key, "to")) {
			if (parse_num(val, 0xffff, &v) < 0)
				goto badval;
			if (key[0] == 'f')
				o->scan_from = v;
			else
				o->scan_to = v;
		} else if ((f = field_index(key)) >= 0) {
			if (set_field(o, f, val) < 0)
				goto badval;
		} else {
			fprintf(stderr, "mcclient: unknown key '%s'\n", key);
			goto bad;
		}
		continue;
badval:
		fprintf(stderr, "mcclient: bad value in '%s'\n", argv[i]);
		goto bad;
	}
	return o;
bad:
	free(o);
	return NULL;
}

/* A sequence from words separated by ";" */
static struct seq *parse_seq(int argc, char **argv, int id)
{
	struct seq *s = calloc(1, sizeof(*s));
	struct op **tail = &s->head;
	int i, start = 0;

	if (!s)
		exit(3);
	s->id = id;
	for (i = 0; i <= argc; i++) {
		if (i < argc && strcmp(argv[i], ";"))
			continue;
		if (i > start) {
			struct op *o = parse_op(i - start, argv + start);

			if (!o)
				return NULL;
			*tail = o;
			tail = &o->next;
		}
		start = i + 1;
	}
	if (!s->head)
		return NULL;
	s->cur = s->head;
	return s;
}

/* ------------------------------------------------------------ requests */
/* The IPoIB broadcast MGID of a P_Key: ff12:401b:PPPP::ffff:ffff (RFC 4391) */
static void ipoib_bcast_mgid(uint16_t pkey, uint8_t *g)
{
	memset(g, 0, 16);
	g[0] = 0xff;
	g[1] = 0x12;
	g[2] = 0x40;
	g[3] = 0x1b;
	put16(g + 4, pkey | 0x8000);
	memset(g + 12, 0xff, 4);
}

static uint16_t default_pkey(void)
{
	return (port.npkeys ? port.pkeys[0] : 0xffff) | 0x8000;
}

static void build_header(uint8_t *m, int method, unsigned attr, uint32_t tid,
			 uint64_t smkey, uint64_t mask)
{
	memset(m, 0, MAD_SIZE);
	/* IBA 13.4.2: BaseVersion 1, MgmtClass, ClassVersion, R|Method */
	m[0] = 1;
	m[1] = CLASS_SA;
	m[2] = SA_CLASS_VER;
	m[3] = method;
	/* TransactionID: the MAD layer owns the high 32 bits */
	put64(m + 8, tid);
	put16(m + 16, attr);
	/* RMPP header stays 0: a request is a single MAD (IBA 13.6.2.1) */
	put64(m + 36, smkey);	/* IBA 15.2.1.1: SM_Key */
	put64(m + 48, mask);	/* ComponentMask */
}

/* Fill the op's record and mask for sending; returns the method */
static int op_prepare(struct seq *s, struct op *o, struct mcr *r, uint64_t *mask)
{
	*r = o->rec;
	if (o->mgid_from_prev && s->have_last)
		memcpy(r->mgid, s->last.mgid, 16);
	if (o->mgid_snm) {
		/* ff12:601b:PPPP::1:ffXX:XXXX, XX:XXXX the low 24 bits of the
		 * IPv6 address, whose interface ID IPoIB derives from the
		 * port GUID (RFC 4391/4291; the kernel's ipv6_ib_mc_map) */
		ipoib_bcast_mgid(o->pkey_given ? o->rec.pkey : default_pkey(), r->mgid);
		r->mgid[3] = 0x1b;
		r->mgid[2] = 0x60;
		memset(r->mgid + 6, 0, 10);
		r->mgid[11] = 1;
		r->mgid[12] = 0xff;
		r->mgid[13] = port.guid >> 16;
		r->mgid[14] = port.guid >> 8;
		r->mgid[15] = port.guid;
	}
	if (o->pgid_self || (!o->pgid_given && o->verb != V_GET && o->verb != V_GETTABLE))
		memcpy(r->pgid, port.gid, 16);
	*mask = o->setmask;
	switch (o->verb) {
	case V_JOIN:
	case V_LEAVE:
		/* like every real client: PortGID (own) and JoinState (full) */
		*mask |= BIT(C_PGID) | BIT(C_JS);
		if (!o->js_given)
			r->js = JS_FULL;
		break;
	case V_IPOIB:
		/* ipoib_mcast_join(): MGID, PortGID, P_Key, JoinState; for
		 * every group but the broadcast group also the broadcast
		 * group's Q_Key, MTU (=), TClass, Rate (=), SL, FlowLabel,
		 * HopLimit (RFC 4391 via the kernel) */
		if (!o->pkey_given)
			r->pkey = default_pkey();
		if (!o->mgid_given)
			ipoib_bcast_mgid(r->pkey, r->mgid);
		*mask = BIT(C_MGID) | BIT(C_PGID) | BIT(C_PKEY) | BIT(C_JS);
		r->js = JS_FULL;
		{
			uint8_t bg[16];

			ipoib_bcast_mgid(r->pkey, bg);
			if (memcmp(bg, r->mgid, 16)) {
				if (!have_bcast)
					return -1;
				*mask |= BIT(C_QKEY) | BIT(C_MTUSEL) | BIT(C_MTU) |
					 BIT(C_TCLASS) | BIT(C_RATESEL) | BIT(C_RATE) |
					 BIT(C_SL) | BIT(C_FLOW) | BIT(C_HOP);
				r->qkey = bcast.qkey;
				r->mtusel = 2;	/* IB_SA_EQ */
				r->mtu = bcast.mtu;
				r->tclass = bcast.tclass;
				r->ratesel = 2;
				r->rate = bcast.rate;
				r->sl = bcast.sl;
				r->flow = bcast.flow;
				r->hop = bcast.hop;
				/* kernels 4.13-5.11 sent a send-only join as
				 * SendOnlyFullMember only when the SA's
				 * ClassPortInfo said it supports it, else as
				 * a full member (ib_sa_sendonly_fullmem_support) */
				if (o->sendonly)
					r->js = o->oldkernel && s->cpi_no_sofull ? JS_FULL :
						JS_SO_FULL;
			}
		}
		break;
	case V_IPOIB_LEAVE:
		/* the kernel's send_leave(): the group's record as the SA
		 * answered the join, JoinState = the bits to leave, mask
		 * MGID | PortGID | JoinState */
		if (s->have_joined && !memcmp(s->joined.mgid, r->mgid, 16)) {
			uint8_t js = o->js_given ? r->js : s->joined.js;

			*r = s->joined;
			r->js = js;
		} else if (!o->js_given) {
			r->js = JS_FULL;
		}
		if (!o->pgid_given)
			memcpy(r->pgid, port.gid, 16);
		*mask = BIT(C_MGID) | BIT(C_PGID) | BIT(C_JS);
		break;
	default:
		break;
	}
	if (o->mask_explicit)
		*mask = o->mask;
	*mask &= ~o->clearmask;
	switch (o->verb) {
	case V_JOIN:
	case V_IPOIB:
		return METHOD_SET;
	case V_LEAVE:
	case V_IPOIB_LEAVE:
		return METHOD_DELETE;
	case V_GETTABLE:
		return METHOD_GETTABLE;
	default:
		return METHOD_GET;
	}
}

/* To the SA (QP1), or, with smp_lid, a LID-routed SMP to QP0 of smp_lid */
static int send_mad(const uint8_t *mad, unsigned smp_lid)
{
	uint8_t buf[sizeof(struct ib_user_mad) + MAD_SIZE];
	struct ib_user_mad *u = (void *)buf;
	bool smp = smp_lid != 0;

	memset(buf, 0, sizeof(struct ib_user_mad));
	memcpy(umad_get_mad(u), mad, MAD_SIZE);
	if (smp)
		umad_set_addr(u, smp_lid, 0, 0, 0);
	else
		umad_set_addr(u, opt.sa_lid, 1, 0, SA_QKEY);
	if (umad_send(port.portid, smp ? port.smp_agent : port.agent, u, MAD_SIZE, 0,
		      0) < 0) {
		fprintf(stderr, "mcclient: umad_send failed\n");
		return -1;
	}
	return 0;
}

/*
 * The driver joins the broadcast group before any other (ipoib_mcast_join_task)
 * and, in the kernels that checked, knew the SA's ClassPortInfo before a
 * send-only join: insert those steps when a sequence lacks them.
 */
static bool insert_prerequisite(struct seq *s)
{
	struct op *o = s->cur, *pre;
	uint8_t bg[16];
	uint16_t pkey = o->pkey_given ? o->rec.pkey : default_pkey();

	ipoib_bcast_mgid(pkey, bg);
	if (o->sendonly && o->oldkernel && !s->cpi_done) {
		pre = calloc(1, sizeof(*pre));
		if (!pre)
			exit(3);
		pre->verb = V_CPI;
	} else if (o->mgid_given && memcmp(bg, o->rec.mgid, 16) && !have_bcast &&
		   !s->bcast_tried) {
		pre = calloc(1, sizeof(*pre));
		if (!pre)
			exit(3);
		pre->verb = V_IPOIB;
		pre->rec.pkey = pkey;
		pre->pkey_given = true;
		s->bcast_tried = true;
	} else {
		return false;
	}
	/* into the sequence's list, where free_seq() finds it */
	pre->next = o;
	if (s->head == o) {
		s->head = pre;
	} else {
		struct op *q = s->head;

		while (q->next != o)
			q = q->next;
		q->next = pre;
	}
	s->cur = pre;
	return true;
}

static void seq_send_current(struct seq *s)
{
	struct op *o = s->cur;
	struct mcr r;
	uint64_t mask;
	int method;

	if (o->verb == V_IPOIB && insert_prerequisite(s))
		o = s->cur;
	s->tid = ++port.next_tid;
	s->tries = 0;
	s->rmpp = false;
	s->truncated = false;
	s->len = 0;
	s->next_seg = 1;
	s->total = 0;
	s->last_pay = 0;
	s->bad_paylen = false;
	s->nseg = 0;
	if (o->verb == V_CPI) {
		build_header(s->req, METHOD_GET, ATTR_CPI, s->tid, 0, 0);
	} else if (o->verb == V_MFT) {
		/* IBA 14.2.1.1 LID-routed SMP; MFT attribute modifier (IBA
		 * 14.2.5.12): bits 31-28 the 16-port position, 8-0 the block
		 * of 32 MLIDs counted from 0xC000 */
		memset(s->req, 0, MAD_SIZE);
		s->req[0] = 1;
		s->req[1] = CLASS_SMP_LID;
		s->req[2] = 1;
		s->req[3] = METHOD_GET;
		put64(s->req + 8, s->tid);
		if (!s->mft_have_ni) {
			put16(s->req + 16, ATTR_NODEINFO);
		} else {
			put16(s->req + 16, ATTR_MFT);
			put32(s->req + 20, (uint32_t)s->mft_pos << 28 | s->mft_block);
		}
	} else if (o->verb == V_RAWTABLE) {
		build_header(s->req, METHOD_GETTABLE, o->attr, s->tid, o->smkey,
			     o->mask_explicit ? o->mask : 0);
	} else if (o->verb == V_SCAN) {
		memset(&r, 0, sizeof(r));
		r.mlid = s->scan_next;
		build_header(s->req, METHOD_GET, ATTR_MCR, s->tid, o->smkey, BIT(C_MLID));
		mcr_encode(s->req + SA_DATA_OFF, &r);
	} else {
		method = op_prepare(s, o, &r, &mask);
		if (method < 0) {
			emit(s, "op=%s status=nobcast statusname=NO_BROADCAST_GROUP_JOINED",
			     verb_name[o->verb]);
			failures++;
			s->busy = false;
			return;
		}
		o->method = method;
		build_header(s->req, method, ATTR_MCR, s->tid, o->smkey, mask);
		mcr_encode(s->req + SA_DATA_OFF, &r);
	}
	if (!(o->verb == V_MFT && s->mft_have_ni) && !(o->verb == V_SCAN &&
	    s->scan_next != o->scan_from))
		s->t_first = now_ms();
	s->deadline = now_ms() + opt.timeout_ms;
	s->busy = true;
	if (send_mad(s->req, s->cur->verb == V_MFT ? s->cur->lid : 0) < 0)
		s->deadline = s->t_first;	/* handled as a timeout */
}

/* ------------------------------------------------------------ answers */
static void seq_advance(struct seq *s);

static void finish_record_op(struct seq *s, const uint8_t *mad)
{
	struct op *o = s->cur;
	unsigned st = get16(mad + 4);
	char buf[1024];
	struct mcr r;
	uint64_t mask = get64(mad + 48);

	struct mcr q;
	char qg[INET6_ADDRSTRLEN], qm[INET6_ADDRSTRLEN];

	/* what was asked (for membership bookkeeping), then what the SA answered */
	mcr_decode(s->req + SA_DATA_OFF, &q);
	gid_str(q.pgid, qg);
	gid_str(q.mgid, qm);
	mcr_decode(mad + SA_DATA_OFF, &r);
	rec_str(&r, buf, sizeof(buf));
	emit(s, "op=%s status=0x%04x statusname=%s method=0x%02x mask=0x%05" PRIx64
	     " req_mask=0x%05" PRIx64 " req_mgid=%s req_pgid=%s req_js=0x%x ms=%.3f tries=%d %s",
	     verb_name[o->verb], st, sa_status_name(st), mad[3], mask, get64(s->req + 48), qm,
	     qg, q.js, now_ms() - s->t_first, s->tries + 1, buf);
	if (st == 0) {
		s->last = r;
		s->have_last = true;
		if (o->verb == V_IPOIB || o->verb == V_JOIN) {
			s->joined = r;
			s->have_joined = true;
		}
		if (o->verb == V_IPOIB) {
			uint8_t bg[16];

			ipoib_bcast_mgid(r.pkey, bg);
			if (!memcmp(bg, r.mgid, 16)) {
				bcast = r;
				have_bcast = true;
			}
		}
	}
}

static void finish_cpi(struct seq *s, const uint8_t *mad)
{
	const uint8_t *d = mad + SA_DATA_OFF;
	unsigned st = get16(mad + 4);
	uint32_t w = get32(d + 4);

	/* IBA 13.4.8.1: CapabilityMask2 is the high 27 bits of word 1,
	 * RespTimeValue the low 5; SA CapabilityMask2 bit 12 is
	 * IsSendOnlyFullMemberSupported (the kernel's
	 * IB_SA_CAP_MASK2_SENDONLY_FULL_MEM_SUPPORT) */
	emit(s, "op=cpi status=0x%04x statusname=%s base_version=%u class_version=%u "
	     "capmask=0x%04x capmask2=0x%07x resp_time=%u sendonly_full=%u ms=%.3f",
	     st, sa_status_name(st), d[0], d[1], get16(d + 2), w >> 5, w & 0x1f,
	     (w >> 5 >> 12) & 1, now_ms() - s->t_first);
	s->cpi_done = true;
	s->cpi_no_sofull = st != 0 || !((w >> 5 >> 12) & 1);
}

/*
 * Under umad2sim, every MAD a client reads has lost its tail: the
 * receiver thread queues it in a buffer sized sizeof(struct sim_request)
 * and copies only that minus umad_size() bytes (umad2sim.c, umad2sim_read).
 * SA data bytes from (opt.sim_lost_from - 56) on are zero in every
 * segment; records that overlap them are reported damaged.
 */
static int lost_from_data(void)
{
	if (opt.sim_lost_from < 0 || opt.sim_lost_from >= MAD_SIZE)
		return SA_DATA_LEN;
	return opt.sim_lost_from - SA_DATA_OFF;
}

static size_t table_rsize(const struct seq *s)
{
	return s->attr_off ? s->attr_off * 8 : MCR_PADDED;
}

/* Is any byte of record i in [from, to) lost to umad2sim? */
static bool rec_lost(const struct seq *s, size_t i, size_t from, size_t to)
{
	size_t x, a = i * table_rsize(s);
	int lost = lost_from_data();

	for (x = a + from; x < a + to; x++)
		if ((int)(x % SA_DATA_LEN) >= lost)
			return true;
	return false;
}

static size_t rec_len(const struct seq *s)
{
	return s->cur->verb == V_GETTABLE ? MCR_LEN : table_rsize(s);
}

static void table_report(struct seq *s)
{
	struct op *o = s->cur;
	size_t n = s->len / table_rsize(s), i;
	unsigned damaged = 0, unrecovered = 0;
	char buf[1024];

	for (i = 0; i < n; i++) {
		bool bad = rec_lost(s, i, 0, rec_len(s)) && !s->repaired[i];
		struct mcr r;

		damaged += rec_lost(s, i, 0, rec_len(s));
		unrecovered += bad;
		if (opt.quiet_records || o->verb != V_GETTABLE)
			continue;
		mcr_decode(s->data + i * table_rsize(s), &r);
		rec_str(&r, buf, sizeof(buf));
		emit(s, "rec=%zu damaged=%d repaired=%d %s", i, bad, s->repaired[i], buf);
	}
	emit(s, "op=%s status=0x%04x statusname=%s records=%zu segments=%u damaged=%u "
	     "unrecovered=%u truncated=%d first_paylen=%u last_paylen=%u%s%s ms=%.3f",
	     verb_name[o->verb], s->table_status, sa_status_name(s->table_status), n, s->nseg,
	     damaged, unrecovered, s->truncated, s->total, s->last_pay,
	     s->why ? " incomplete=1 reason=" : "", s->why ? s->why : "",
	     now_ms() - s->t_first);
	if (s->why || unrecovered)
		failures++;
	free(s->repaired);
	s->repaired = NULL;
	seq_advance(s);
}

/*
 * Fetch again, one Get each, the records umad2sim damaged: by MGID when
 * it survived, else by MLID (the group's record when untrusted); with the
 * PortGID too when it survived and the query is trusted (IBA 15.2.5.17:
 * only trusted answers carry PortGID).
 */
static void repair_next(struct seq *s)
{
	size_t n = s->len / table_rsize(s);
	struct op *o = s->cur;

	while (s->rep_pos < n) {
		size_t i = s->rep_pos;
		uint64_t mask = 0;
		struct mcr r;

		if (o->verb != V_GETTABLE || !rec_lost(s, i, 0, MCR_LEN)) {
			s->rep_pos++;
			continue;
		}
		mcr_decode(s->data + i * table_rsize(s), &r);
		if (!rec_lost(s, i, 0, 16))
			mask = BIT(C_MGID);
		else if (!rec_lost(s, i, 36, 38))
			mask = BIT(C_MLID);
		if (mask && o->smkey && !rec_lost(s, i, 16, 32))
			mask |= BIT(C_PGID);
		if (!mask) {
			s->rep_pos++;
			continue;
		}
		s->repairing = true;
		s->tid = ++port.next_tid;
		s->tries = 0;
		build_header(s->req, METHOD_GET, ATTR_MCR, s->tid, o->smkey, mask);
		mcr_encode(s->req + SA_DATA_OFF, &r);
		s->deadline = now_ms() + opt.timeout_ms;
		send_mad(s->req, 0);
		return;
	}
	s->repairing = false;
	table_report(s);
}

static void repair_answer(struct seq *s, const uint8_t *mad, bool ok)
{
	size_t i = s->rep_pos++;

	if (ok && get16(mad + 4) == 0) {
		memcpy(s->data + i * table_rsize(s), mad + SA_DATA_OFF, MCR_LEN);
		s->repaired[i] = 1;
	}
	repair_next(s);
}

/* The table is in (or given up on): repair what umad2sim damaged, report */
static void finish_table(struct seq *s, unsigned st, const char *why)
{
	size_t n = s->len / table_rsize(s);

	s->table_status = st;
	s->why = why;
	s->repaired = calloc(n + 1, 1);
	if (!s->repaired)
		exit(3);
	s->rep_pos = 0;
	s->rmpp = false;
	if (why || opt.no_repair)
		table_report(s);
	else
		repair_next(s);
}

static void send_ack(struct seq *s, uint32_t seg)
{
	uint8_t ack[MAD_SIZE];

	/* IBA 13.6.3.3 (and the kernel's format_ack()): the DATA's headers
	 * with the response bit cleared, RMPPType ACK, Active, SegmentNumber
	 * = last segment received in order, NewWindowLast */
	memset(ack, 0, sizeof(ack));
	memcpy(ack, s->first_hdr, SA_DATA_OFF);
	ack[3] &= ~METHOD_RESP;
	put16(ack + 4, 0);
	ack[24] = 1;
	ack[25] = RMPP_ACK;
	ack[26] = (ack[26] & 0xf8) | RMPP_ACTIVE;
	ack[27] = 0;
	put32(ack + 28, seg);
	put32(ack + 32, seg + RMPP_WINDOW);
	send_mad(ack, 0);
}

static void handle_rmpp(struct seq *s, const uint8_t *mad)
{
	unsigned type = mad[25], flags = mad[26] & 7;
	uint32_t seg = get32(mad + 28), pay = get32(mad + 32);
	size_t n = SA_DATA_LEN;

	if (type == RMPP_STOP || type == RMPP_ABORT) {
		char why[64];

		snprintf(why, sizeof(why), "rmpp_%s_status_%u",
			 type == RMPP_STOP ? "stop" : "abort", mad[27]);
		finish_table(s, get16(mad + 4), why);
		return;
	}
	if (type != RMPP_DATA)
		return;
	if (seg != s->next_seg) {
		/* a duplicate or a gap: tell the sender where we are */
		if (s->next_seg > 1)
			send_ack(s, s->next_seg - 1);
		return;
	}
	if (seg == 1) {
		memcpy(s->first_hdr, mad, SA_DATA_OFF);
		s->attr_off = get16(mad + 44);
		/* IBA 13.6.2.3 PayloadLength of the first segment: the
		 * kernel's sender (send_next_seg) and smd count the SA header
		 * of every segment (220 bytes each, minus the pad); only
		 * reported: the length comes from the last, as the kernel's
		 * receiver takes it (get_mad_len) */
		s->total = (flags & RMPP_FIRST) ? pay : 0;
	}
	if (s->len + SA_DATA_LEN > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16 * SA_DATA_LEN;
		s->data = realloc(s->data, s->cap);
		if (!s->data)
			exit(3);
	}
	memcpy(s->data + s->len, mad + SA_DATA_OFF, n);
	s->len += n;
	s->nseg = seg;
	s->next_seg = seg + 1;
	s->deadline = now_ms() + opt.timeout_ms;
	s->tries = 0;
	send_ack(s, seg);
	if (flags & RMPP_LAST) {
		/* the last segment's PayloadLength: its SA header and data,
		 * as the kernel's receiver reads it (get_mad_len()) */
		s->last_pay = pay;
		if (pay >= SA_HDR && pay - SA_HDR <= SA_DATA_LEN)
			s->len -= SA_DATA_LEN - (pay - SA_HDR);
		else
			s->bad_paylen = true;
		finish_table(s, get16(mad + 4), s->bad_paylen ? "bad_last_paylen" : NULL);
	}
}

static unsigned scan_found_total, scan_err_total, scan_parts;

static void scan_done(struct seq *s)
{
	struct op *o = s->cur;

	emit(s, "op=scan-part from=0x%04x to=0x%04x found=%u errors=%u",
	     o->scan_from, o->scan_to, s->scan_found, s->scan_err);
	scan_found_total += s->scan_found;
	scan_err_total += s->scan_err;
	scan_parts++;
	if (s->scan_err)
		failures++;
	seq_advance(s);
}

static void mft_answer(struct seq *s, const uint8_t *mad)
{
	struct op *o = s->cur;
	const uint8_t *d = mad + SMP_DATA_OFF;
	unsigned st = get16(mad + 4) & 0x7fff, npos, i, nm = o->scan_to - o->scan_from + 1;

	if (st) {
		emit(s, "op=mft lid=%u status=0x%04x statusname=%s", o->lid, st,
		     sa_status_name(st));
		failures++;
		goto done;
	}
	if (!s->mft_have_ni) {
		s->mft_have_ni = true;
		s->mft_nports = d[3];	/* NodeInfo.NumPorts */
		s->mft_block = (o->scan_from - 0xc000) / MLIDS_PER_BLOCK;
		s->mft_pos = 0;
		free(s->masks);
		s->masks = calloc(nm, sizeof(*s->masks));
		if (!s->masks)
			exit(3);
		seq_send_current(s);
		return;
	}
	for (i = 0; i < MLIDS_PER_BLOCK; i++) {
		unsigned mlid = 0xc000 + s->mft_block * MLIDS_PER_BLOCK + i;

		if (mlid >= o->scan_from && mlid <= o->scan_to)
			s->masks[mlid - o->scan_from][s->mft_pos] = get16(d + 2 * i);
	}
	npos = (s->mft_nports + 1 + 15) / 16;
	if (++s->mft_pos >= npos) {
		s->mft_pos = 0;
		s->mft_block++;
	}
	if (0xc000 + s->mft_block * MLIDS_PER_BLOCK <= o->scan_to) {
		seq_send_current(s);
		return;
	}
	/* like "ibroute -M -n": one 16-bit mask per position, port 0 first */
	for (i = 0; i < nm; i++) {
		char hex[16 * 4 + 1];
		unsigned k, any = 0;

		for (k = 0; k < npos; k++) {
			snprintf(hex + 4 * k, 5, "%04x", s->masks[i][k]);
			any |= s->masks[i][k];
		}
		if (any && !opt.quiet_records)
			emit(s, "op=mft-entry lid=%u mlid=0x%04x mask=%s", o->lid,
			     o->scan_from + i, hex);
	}
	emit(s, "op=mft lid=%u status=0x0000 nports=%u from=0x%04x to=0x%04x ms=%.3f", o->lid,
	     s->mft_nports, o->scan_from, o->scan_to, now_ms() - s->t_first);
done:
	free(s->masks);
	s->masks = NULL;
	s->mft_have_ni = false;
	seq_advance(s);
}

static void handle_answer(struct seq *s, const uint8_t *mad, int len)
{
	struct op *o = s->cur;
	unsigned st = get16(mad + 4);

	if (o->verb == V_MFT) {
		mft_answer(s, mad);
		return;
	}

	if (s->repairing) {
		repair_answer(s, mad, true);
		return;
	}
	if (o->verb == V_CPI) {
		finish_cpi(s, mad);
		seq_advance(s);
		return;
	}
	if (o->verb == V_SCAN) {
		if (st == 0) {
			char buf[1024];
			struct mcr r;

			mcr_decode(mad + SA_DATA_OFF, &r);
			rec_str(&r, buf, sizeof(buf));
			s->scan_found++;
			if (!opt.quiet_records)
				emit(s, "op=scan-rec %s", buf);
		} else if ((st >> 8) != 3) {	/* ERR_NO_RECORDS is the normal miss */
			s->scan_err++;
			emit(s, "op=scan-err mlid=0x%04x status=0x%04x statusname=%s",
			     s->scan_next, st, sa_status_name(st));
		}
		if (s->scan_next < o->scan_to) {
			s->scan_next++;
			seq_send_current(s);
		} else {
			scan_done(s);
		}
		return;
	}
	if (o->verb == V_GETTABLE || o->verb == V_RAWTABLE) {
		if (((mad[26] & RMPP_ACTIVE) && mad[25] == RMPP_DATA) || s->rmpp) {
			s->rmpp = true;
			handle_rmpp(s, mad);
			return;
		}
		/*
		 * One MAD without RMPP DATA: an error, or the whole table in
		 * one MAD.  A sender that leaves segmentation to the kernel's
		 * MAD layer (opensm) marks it Active with RMPPType 0; with no
		 * kernel (umad2sim) only its first 256 bytes travel, so a full
		 * MAD may be a truncated table: reported as such.
		 */
		s->attr_off = get16(mad + 44);
		s->nseg = 1;
		if (st == 0 && len > SA_DATA_OFF) {
			size_t n = len - SA_DATA_OFF;

			if (n > SA_DATA_LEN)
				n = SA_DATA_LEN;
			s->data = realloc(s->data, SA_DATA_LEN);
			if (!s->data)
				exit(3);
			memcpy(s->data, mad + SA_DATA_OFF, n);
			s->len = s->attr_off ? n - n % (s->attr_off * 8) : 0;
		}
		s->truncated = (mad[26] & RMPP_ACTIVE) && len >= MAD_SIZE;
		finish_table(s, st, NULL);
		return;
	}
	finish_record_op(s, mad);
	seq_advance(s);
}

static unsigned ops_done;
static double t_run_start, t_last_done;

static void seq_advance(struct seq *s)
{
	s->busy = false;
	if (!s->cur)
		return;
	ops_done++;
	t_last_done = now_ms();
	s->cur = s->cur->next;
	if (s->cur && !stop_flag)
		seq_send_current(s);
}

static void seq_start(struct seq *s)
{
	if (s->cur->verb == V_SCAN)
		s->scan_next = s->cur->scan_from;
	if (s->cur->verb == V_INFO) {
		emit(s, "op=info lid=%u sm_lid=%u sa_lid=%d prefix=0x%016" PRIx64
		     " guid=0x%016" PRIx64 " pkey0=0x%04x", port.lid, port.sm_lid, opt.sa_lid,
		     port.prefix, port.guid, port.npkeys ? port.pkeys[0] : 0);
		s->busy = true;
		seq_advance(s);
		return;
	}
	seq_send_current(s);
}

static void seq_timeout(struct seq *s)
{
	struct op *o = s->cur;

	if (++s->tries <= opt.retries) {
		s->deadline = now_ms() + opt.timeout_ms;
		if (s->rmpp && s->next_seg > 1)
			send_ack(s, s->next_seg - 1);	/* nudge the sender */
		else
			send_mad(s->req, o->verb == V_MFT ? o->lid : 0);	/* same TID */
		return;
	}
	if (s->repairing) {
		repair_answer(s, NULL, false);
		return;
	}
	if ((o->verb == V_GETTABLE || o->verb == V_RAWTABLE) && s->rmpp) {
		finish_table(s, 0, "timeout");
		return;
	} else if (o->verb == V_SCAN) {
		s->scan_err++;
		emit(s, "op=scan-err mlid=0x%04x status=timeout", s->scan_next);
		if (s->scan_next < o->scan_to) {
			s->scan_next++;
			seq_send_current(s);
			return;
		}
		scan_done(s);
		return;
	} else {
		emit(s, "op=%s status=timeout statusname=TIMEOUT ms=%.3f tries=%d",
		     verb_name[o->verb], now_ms() - s->t_first, s->tries);
		failures++;
	}
	seq_advance(s);
}

/* ------------------------------------------------------------ engine */
static int run_seqs(struct seq **seqs, int n)
{
	uint8_t buf[sizeof(struct ib_user_mad) + MAD_SIZE];
	int started = 0, active = 0, i;

	for (;;) {
		double next = 0, t;
		int len, rc, tmo;

		active = 0;
		for (i = 0; i < n && i < started; i++)
			if (seqs[i]->busy)
				active++;
		while (!stop_flag && started < n && active < opt.inflight) {
			if (seqs[started]->barrier) {
				if (active)
					break;
				started++;
				continue;
			}
			seq_start(seqs[started++]);
			if (seqs[started - 1]->busy)
				active++;
		}
		if (!active && (started >= n || stop_flag))
			break;
		t = now_ms();
		for (i = 0; i < started; i++) {
			struct seq *s = seqs[i];

			if (!s->busy)
				continue;
			if (s->deadline <= t)
				seq_timeout(s);
			else if (!next || s->deadline < next)
				next = s->deadline;
		}
		tmo = next ? (int)(next - t) + 1 : 10;
		if (tmo > 100)
			tmo = 100;
		len = MAD_SIZE;
		memset(buf, 0, sizeof(buf));	/* what umad2sim drops reads as 0 */
		rc = umad_recv(port.portid, buf, &len, tmo);
		if (rc < 0)
			continue;
		{
			struct ib_user_mad *u = (void *)buf;
			const uint8_t *mad = umad_get_mad(u);
			uint32_t tid = (uint32_t)get64(mad + 8);

			if (opt.verbose > 1) {
				int k;

				fprintf(stderr, "mcclient: recv status %u len %d:", u->status, len);
				for (k = 0; k < MAD_SIZE; k++)
					fprintf(stderr, "%s%02x", k % 16 ? " " : "\n  ", mad[k]);
				fputc('\n', stderr);
			}
			if ((mad[1] != CLASS_SA && mad[1] != CLASS_SMP_LID) ||
			    !(mad[3] & METHOD_RESP)) {
				if (opt.verbose)
					fprintf(stderr, "mcclient: ignored MAD class 0x%02x "
						"method 0x%02x\n", mad[1], mad[3]);
				continue;
			}
			for (i = 0; i < started; i++)
				if (seqs[i]->busy && seqs[i]->tid == tid)
					break;
			if (i == started) {
				if (opt.verbose)
					fprintf(stderr, "mcclient: stale answer tid 0x%08x\n", tid);
				continue;
			}
			if (u->status) {
				/* ibsim bounced the request (status 110): let the
				 * timeout resend it rather than spin */
				continue;
			}
			handle_answer(seqs[i], mad, len);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ batch input */
static int split_words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	while (*p && n < max) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = 0;
		if (!*p || *p == '#')
			break;
		if (*p == ';') {
			w[n++] = ";";
			*p++ = 0;
			continue;
		}
		w[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != ';' && *p != '\r')
			p++;
		if (*p && *p != ';')
			*p++ = 0;
	}
	return n;
}

static struct seq **read_batch(const char *path, int *count)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct seq **v = NULL;
	size_t cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	int n = 0, lineno = 0;

	if (!f) {
		perror(path);
		return NULL;
	}
	while (getline(&line, &lcap, f) > 0) {
		char *w[256];
		int nw;

		lineno++;
		nw = split_words(line, w, 256);
		if (!nw)
			continue;
		if ((size_t)n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				exit(3);
		}
		if (nw == 1 && !strcmp(w[0], "barrier")) {
			/* every sequence before it ends before any after it starts */
			v[n] = calloc(1, sizeof(**v));
			if (!v[n])
				exit(3);
			v[n++]->barrier = true;
			continue;
		}
		/* parse_seq copies what it needs out of the line */
		v[n] = parse_seq(nw, w, n + 1);
		if (!v[n]) {
			fprintf(stderr, "mcclient: %s:%d: bad line\n", path, lineno);
			return NULL;
		}
		n++;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	*count = n;
	return v;
}

/* ------------------------------------------------------------ main */
static void usage(void)
{
	fputs("usage: mcclient [options] VERB [key=value...] [';' VERB ...]\n"
	      "       mcclient [options] --batch FILE|-\n"
	      "       mcclient [options] --fanout HOSTFILE VERB ...   (or --batch)\n"
	      "options: --timeout MS (1000) --retries N (3) --inflight K (32) --jobs N (4)\n"
	      "         --sa-lid LID --sim-lost auto|none|BYTE --quiet-records --no-repair\n"
	      "         --summary (ops/s from the first request to the last answer) -v -vv\n"
	      "         --sysfs-dir DIR (where --fanout children attach; /dev/shm, '' = cwd)\n"
	      "verbs:   info | cpi | join | leave | get | gettable | scan [from= to=]\n"
	      "         ipoib [mgid=] [pkey=] [sendonly] [oldkernel] | ipoib-leave mgid= [js=]\n"
	      "         rawtable attr=ID (any SA table, to test RMPP)\n"
	      "         mft lid=SWITCH [from= to=] (MulticastForwardingTable by SMP)\n"
	      "batch:   one sequence a line, operations separated by ';', 'barrier' lines\n"
	      "keys:    mgid (GID, 0, @=last answer, snm=own solicited-node) pgid (GID|self)\n"
	      "         qkey mlid mtusel mtu\n"
	      "         tclass pkey ratesel rate pltsel plt sl flow hop scope js proxy\n"
	      "         mask=HEX|name,name (replaces the mask) clear=name,.. smkey=N\n"
	      "Every key given sets its component mask bit; join/leave add pgid (own GID\n"
	      "unless given) and js (1 unless given).  ipoib sends exactly what the Linux\n"
	      "IPoIB driver sends.  Output: one key=value line per operation.\n", stderr);
}

static void free_seq(struct seq *s)
{
	struct op *o, *next;

	if (!s)
		return;
	for (o = s->head; o; o = next) {
		next = o->next;
		free(o);
	}
	free(s->data);
	free(s->masks);
	free(s->repaired);
	free(s);
}

static void free_seqs(struct seq **seqs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free_seq(seqs[i]);
	free(seqs);
}

/* A sequence that is one scan becomes --inflight scans of parts of its range
 * (new sequences, marked split: run_here frees them) */
static struct seq **split_scans(struct seq **seqs, int *n)
{
	struct seq **v;
	int i, k, m = 0, parts = opt.inflight;

	v = calloc((size_t)*n * parts, sizeof(*v));
	if (!v)
		exit(3);
	for (i = 0; i < *n; i++) {
		struct op *o = seqs[i]->head;
		unsigned from, span;

		if (!o || o->verb != V_SCAN || o->next || o->scan_to < o->scan_from) {
			v[m++] = seqs[i];
			continue;
		}
		from = o->scan_from;
		span = o->scan_to - o->scan_from + 1;
		for (k = 0; k < parts && (unsigned)k < span; k++) {
			struct seq *s = calloc(1, sizeof(*s));
			struct op *p = calloc(1, sizeof(*p));

			if (!s || !p)
				exit(3);
			*p = *o;
			p->scan_from = from + span * k / parts;
			p->scan_to = from + span * (k + 1) / parts - 1;
			if (p->scan_to < p->scan_from)
				continue;
			p->next = NULL;
			s->head = s->cur = p;
			s->id = seqs[i]->id;
			s->split = true;
			v[m++] = s;
		}
	}
	*n = m;
	return v;
}

static int run_here(struct seq **seqs, int n)
{
	const char *pre = getenv("LD_PRELOAD");

	struct seq **run;
	int i, nrun = n;

	if (opt.sim_lost_from == -2)
		opt.sim_lost_from = pre && strstr(pre, "umad2sim") ? SIM_LOST_FROM : -1;
	if (port_open() < 0)
		return 2;
	run = split_scans(seqs, &nrun);
	t_run_start = now_ms();
	run_seqs(run, nrun);
	for (i = 0; i < nrun; i++)
		if (run[i]->split)
			free_seq(run[i]);
	free(run);
	if (opt.summary && ops_done)
		emit(NULL, "op=summary ops=%u failures=%d seconds=%.6f per_second=%.0f inflight=%d",
		     ops_done, failures, (t_last_done - t_run_start) / 1e3,
		     ops_done / ((t_last_done - t_run_start) / 1e3), opt.inflight);
	if (scan_parts)
		emit(NULL, "op=scan status=0x0000 found=%u errors=%u", scan_found_total,
		     scan_err_total);
	return failures ? 1 : 0;
}

/* --fanout: one child per host, SIM_HOST set before its first umad call */
static int fanout(const char *hostfile, struct seq **seqs, int n)
{
	FILE *f = fopen(hostfile, "r");
	char **hosts = NULL, *line = NULL;
	size_t cap = 0, lcap = 0, nh = 0, next = 0;
	int running = 0, bad = 0, status;
	char tmpdir[PATH_MAX], oldcwd[PATH_MAX];
	bool moved = false;
	pid_t pid;

	if (!f) {
		perror(hostfile);
		return 2;
	}
	while (getline(&line, &lcap, f) > 0) {
		char *w[2];

		if (split_words(line, w, 1) < 1)
			continue;
		if (nh == cap) {
			cap = cap ? cap * 2 : 1024;
			hosts = realloc(hosts, cap * sizeof(*hosts));
			if (!hosts)
				exit(3);
		}
		hosts[nh++] = strdup(w[0]);
	}
	fclose(f);
	fflush(stdout);
	/*
	 * umad2sim builds a fake sysfs tree in the cwd of every client it
	 * attaches (./sys-<pid>, ~100 files): on a disk-backed /tmp that was
	 * 6-7x slower than on tmpfs here (648 hosts: 4-7 s against 1 s).  The
	 * children attach in a private directory on /dev/shm when there is
	 * one; the parent has made no umad call, so it may still chdir.
	 */
	if (opt.sysfs_dir && *opt.sysfs_dir) {
		snprintf(tmpdir, sizeof(tmpdir), "%s/mcclient.XXXXXX", opt.sysfs_dir);
		if (mkdtemp(tmpdir) && getcwd(oldcwd, sizeof(oldcwd)) && !chdir(tmpdir))
			moved = true;
	}
	while (next < nh || running) {
		if (!stop_flag && next < nh && running < opt.jobs) {
			pid = fork();
			if (pid < 0) {
				perror("fork");
				bad++;
				stop_flag = 1;
				continue;
			}
			if (pid == 0) {
				int rc;

				setenv("SIM_HOST", hosts[next], 1);
				opt.host = hosts[next];
				rc = run_here(seqs, n);
				free_seqs(seqs, n);
				while (nh)
					free(hosts[--nh]);
				free(hosts);
				free(line);
				exit(rc);
			}
			next++;
			running++;
			continue;
		}
		if (stop_flag && next < nh)
			next = nh;
		pid = wait(&status);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	fprintf(stderr, "mcclient: fanout: %zu hosts, %d failed\n", nh, bad);
	if (moved) {
		/* sys-<pid> of children that died by a signal stay behind */
		char cmd[PATH_MAX + 32];

		if (chdir(oldcwd) < 0)
			perror(oldcwd);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "mcclient: cannot remove %s\n", tmpdir);
	}
	while (nh)
		free(hosts[--nh]);
	free(hosts);
	free(line);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *batch = NULL, *hosts = NULL;
	struct seq **seqs = NULL;
	int i, n = 0, rc;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	opt.host = getenv("SIM_HOST");

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help")) {
			usage();
			return 0;
		} else if (!strcmp(a, "--quiet-records")) {
			opt.quiet_records = true;
			continue;
		} else if (!strcmp(a, "--no-repair")) {
			opt.no_repair = true;
			continue;
		} else if (!strcmp(a, "--summary")) {
			opt.summary = true;
			continue;
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!v) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(a, "--timeout"))
			opt.timeout_ms = atoi(v);
		else if (!strcmp(a, "--retries"))
			opt.retries = atoi(v);
		else if (!strcmp(a, "--inflight"))
			opt.inflight = atoi(v);
		else if (!strcmp(a, "--jobs"))
			opt.jobs = atoi(v);
		else if (!strcmp(a, "--sa-lid"))
			opt.sa_lid = strtol(v, NULL, 0);
		else if (!strcmp(a, "--batch"))
			batch = v;
		else if (!strcmp(a, "--fanout"))
			hosts = v;
		else if (!strcmp(a, "--sysfs-dir"))
			opt.sysfs_dir = v;
		else if (!strcmp(a, "--sim-lost"))
			opt.sim_lost_from = !strcmp(v, "auto") ? -2 :
					    !strcmp(v, "none") ? -1 : atoi(v);
		else {
			usage();
			return 2;
		}
	}
	while (i < argc && (!strcmp(argv[i], "-v") || !strcmp(argv[i], "-vv"))) {
		opt.verbose = strlen(argv[i]);
		i++;
	}
	if (opt.inflight < 1 || opt.jobs < 1 || opt.timeout_ms < 1 || opt.retries < 0) {
		usage();
		return 2;
	}
	if (batch) {
		seqs = read_batch(batch, &n);
		if (!seqs)
			return 2;
	} else if (i < argc) {
		seqs = calloc(1, sizeof(*seqs));
		if (!seqs)
			return 3;
		seqs[0] = parse_seq(argc - i, argv + i, 1);
		if (!seqs[0])
			return 2;
		n = 1;
	} else {
		usage();
		return 2;
	}
	rc = hosts ? fanout(hosts, seqs, n) : run_here(seqs, n);
	free_seqs(seqs, n);
	return rc;
}
