/*
 * vl15_shim.c - LD_PRELOAD shim for an SM under test: switches whose VL15
 * buffers overflow, as real ones do when an SM keeps too many SMPs on the
 * wire.
 *
 * SMPs travel on VL15, which is not subject to link-level flow control: a
 * port whose VL15 receive buffer is full discards the SMP that arrives
 * (IBA vol. 1, 7.6.3 and 7.9.4; the minimum buffer is one packet), and
 * nobody is told. Every directed-route SMP and its answer cross the switches
 * on the route, the SM's first switch above all; ibsim forwards everything
 * and never drops for want of buffers, so an SM tested there never learns
 * how many SMPs a fabric holds. This shim makes every switch hold at most
 * VL15_SHIM_DEPTH SMPs at a time: an SMP the SM sends occupies one place in
 * every switch on its route from the moment it is written until its answer
 * (or ibsim's undeliverable report) is read back; an SMP that would find
 * any switch on its route full is discarded instead of sent (write() says
 * it went, as the HCA would), never answered and never reported, so the SM
 * learns of it only by its own timeout, as on a real fabric.
 *
 * The route is walked in the topology file ibsim runs (VL15_SHIM_NET), from
 * the SM's node (SIM_HOST, else the file's first node): the node at the end
 * of each hop (initial path, IBA 14.2.2) that is a switch is on it. A
 * LID-routed SMP is charged to the SM's first switch only (the one every
 * SMP crosses; the LFTs beyond are not followed). An SMP whose answer never
 * comes (a route into nowhere that ibsim swallows) frees its places after
 * VL15_SHIM_HOLD_MS (default 1000).
 *
 * Environment:
 *   VL15_SHIM_NET    the topology file (required; without it nothing drops)
 *   VL15_SHIM_DEPTH  SMPs a switch holds at once (default 4)
 *   VL15_SHIM_LOG    file: one line per dropped SMP when VL15_SHIM_VERBOSE=1,
 *                    and a summary line at exit:
 *       vl15-shim: depth=D smps=S dropped=X switches=K first_switch=F max_held=M worst=NAME:N
 *   SIM_HOST         the node the SM runs on (as for umad2sim)
 *
 * Build:  cc -shared -fPIC -O2 -o vl15_shim.so vl15_shim.c -ldl -lpthread
 * Use:    VL15_SHIM_NET=fabric.net LD_PRELOAD=./vl15_shim.so:libumad2sim.so smd ...
 *         (SIM_PRELOAD_BEFORE=./vl15_shim.so with simlib.sh's sim_run)
 */
#define UMAD_SHIM_DROP
#include "umad_shim.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_HOPS	64
#define TRACK_MAX	16384		/* SMPs in flight the shim follows (power of 2) */
#define NO_SWITCH	0xffff

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The topology: nodes, and for each port the node and port at the other end */
struct node {
	char name[64];
	int nports;
	int base;			/* its first in links[]: switch port 0, CA port 1 */
	bool sw;
	uint16_t swidx;			/* index among switches */
};
struct link {
	int node, port;
};

static struct node *nodes;
static int nnodes, nslots, nswitches;
static struct link *links;
static int sm_node = -1;

/* Per switch: SMPs held now, SMPs it dropped */
static unsigned int *held;
static uint64_t *dropped_at;

/* SMPs in flight, in the order sent (a ring) with a TID index (linear probing) */
struct flight {
	uint32_t tid;
	uint8_t method;
	bool live;
	uint8_t nsw;
	uint64_t t_us;
	uint16_t sw[MAX_HOPS];
};
static struct flight ring[TRACK_MAX];
static unsigned int ring_head, ring_len;
static int32_t tid_index[2 * TRACK_MAX];	/* ring position + 1, 0 = empty */

static unsigned int depth = 4;
static uint64_t hold_us = 1000000;
static bool enabled, verbose;
static FILE *logf;
static uint64_t n_smps, n_dropped, n_first_switch;
static unsigned int max_held;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- the topology file (ibnetdiscover format, as ibsim reads it) ---- */

static int quoted(const char *s, char *out, size_t len)
{
	const char *a = strchr(s, '"'), *b = a ? strchr(a + 1, '"') : NULL;

	if (!b || (size_t)(b - a - 1) >= len)
		return -1;
	memcpy(out, a + 1, (size_t)(b - a - 1));
	out[b - a - 1] = 0;
	return (int)(b - s + 1);
}

/* Names hashed for the second pass: k=16 has 1344 nodes and 6144 port lines */
static int *name_hash;
static unsigned int name_hash_size;

static unsigned int hash_name(const char *s)
{
	unsigned int h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int node_by_name(const char *name)
{
	unsigned int i = hash_name(name) & (name_hash_size - 1);

	for (; name_hash[i] >= 0; i = (i + 1) & (name_hash_size - 1))
		if (!strcmp(nodes[name_hash[i]].name, name))
			return name_hash[i];
	return -1;
}

static int slot_of(int n, int p)
{
	if (n < 0 || p < (nodes[n].sw ? 0 : 1) || p > nodes[n].nports)
		return -1;
	return nodes[n].base + p - (nodes[n].sw ? 0 : 1);
}

static int load_net(const char *path)
{
	char line[512], name[64], rname[64];
	int cur, pass;
	FILE *f;

	for (pass = 0; pass < 2; pass++) {
		f = fopen(path, "re");
		if (!f)
			return -1;
		cur = -1;
		while (fgets(line, sizeof(line), f)) {
			char *s = line;

			while (isspace((unsigned char)*s))
				s++;
			if (!strncmp(s, "Switch", 6) || !strncmp(s, "Hca", 3) ||
			    !strncmp(s, "Ca", 2)) {
				char *e = s;
				struct node *nn;

				while (*e && !isspace((unsigned char)*e))
					e++;
				if (quoted(s, name, sizeof(name)) < 0) {
					cur = -1;
					continue;
				}
				if (pass == 1) {
					cur = node_by_name(name);
					continue;
				}
				nn = realloc(nodes, (size_t)(nnodes + 1) * sizeof(*nodes));
				if (!nn) {
					fclose(f);
					return -1;
				}
				nodes = nn;
				memset(&nodes[nnodes], 0, sizeof(*nodes));
				snprintf(nodes[nnodes].name, sizeof(nodes[0].name), "%s", name);
				nodes[nnodes].sw = s[0] == 'S';
				nodes[nnodes].nports = atoi(e);
				nnodes++;
			} else if (pass == 1 && s[0] == '[' && cur >= 0) {
				int port = atoi(s + 1), rn, k;
				char *q = strchr(s, ']');

				if (!q || (k = quoted(q, rname, sizeof(rname))) < 0)
					continue;
				q += k;
				if (*q != '[')
					continue;
				rn = node_by_name(rname);
				if (rn < 0 || slot_of(cur, port) < 0)
					continue;
				links[slot_of(cur, port)] = (struct link){ rn, atoi(q + 1) };
			}
		}
		fclose(f);
		if (pass == 1)
			break;
		for (name_hash_size = 16; name_hash_size < 2u * (unsigned int)nnodes;)
			name_hash_size *= 2;
		name_hash = malloc(name_hash_size * sizeof(*name_hash));
		if (!name_hash)
			return -1;
		memset(name_hash, 0xff, name_hash_size * sizeof(*name_hash));
		for (int i = 0; i < nnodes; i++) {
			unsigned int h = hash_name(nodes[i].name) & (name_hash_size - 1);

			while (name_hash[h] >= 0)
				h = (h + 1) & (name_hash_size - 1);
			name_hash[h] = i;
			nodes[i].base = nslots;
			nslots += nodes[i].nports + nodes[i].sw;
			nodes[i].swidx = NO_SWITCH;
			if (nodes[i].sw && nswitches < NO_SWITCH)
				nodes[i].swidx = (uint16_t)nswitches++;
		}
		links = malloc(((size_t)nslots + 1) * sizeof(*links));
		held = calloc((size_t)nswitches + 1, sizeof(*held));
		dropped_at = calloc((size_t)nswitches + 1, sizeof(*dropped_at));
		if (!links || !held || !dropped_at)
			return -1;
		for (int i = 0; i < nslots; i++)
			links[i] = (struct link){ -1, -1 };
	}
	return 0;
}

static const char *switch_name(uint16_t swidx)
{
	for (int i = 0; i < nnodes; i++)
		if (nodes[i].swidx == swidx)
			return nodes[i].name;
	return "?";
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *net = getenv("VL15_SHIM_NET"), *host = getenv("SIM_HOST");
	const char *v;

	if ((v = getenv("VL15_SHIM_DEPTH")) && atoi(v) > 0)
		depth = (unsigned int)atoi(v);
	if ((v = getenv("VL15_SHIM_HOLD_MS")) && atoi(v) > 0)
		hold_us = (uint64_t)atoi(v) * 1000u;
	verbose = (v = getenv("VL15_SHIM_VERBOSE")) && *v == '1';
	if ((v = getenv("VL15_SHIM_LOG")))
		logf = fopen(v, "ae");
	if (!net || load_net(net) < 0 || !nnodes) {
		if (logf)
			fprintf(logf, "vl15-shim: no topology (VL15_SHIM_NET=%s): not dropping\n",
				net ? net : "");
		return;
	}
	sm_node = host && *host ? node_by_name(host) : 0;
	if (sm_node < 0) {
		if (logf)
			fprintf(logf, "vl15-shim: SIM_HOST %s is not in %s: not dropping\n", host,
				net);
		return;
	}
	memset(tid_index, 0, sizeof(tid_index));
	enabled = true;
}

__attribute__((destructor)) static void shim_fini(void)
{
	unsigned int worst = 0, nsw = 0;

	if (!logf)
		return;
	if (enabled) {
		for (int i = 0; i < nswitches; i++) {
			nsw += dropped_at[i] != 0;
			if (dropped_at[i] > dropped_at[worst])
				worst = (unsigned int)i;
		}
		fprintf(logf, "vl15-shim: depth=%u smps=%" PRIu64 " dropped=%" PRIu64
			" switches=%u first_switch=%" PRIu64 " max_held=%u worst=%s:%" PRIu64 "\n",
			depth, n_smps, n_dropped, nsw, n_first_switch, max_held,
			nswitches ? switch_name((uint16_t)worst) : "-",
			nswitches ? dropped_at[worst] : 0);
	}
	fclose(logf);
	logf = NULL;
}

/* ---- SMPs in flight ---- */

static unsigned int tid_slot(uint32_t tid)
{
	return (tid * 2654435761u) & (2 * TRACK_MAX - 1);
}

static int tid_find(uint32_t tid)
{
	for (unsigned int i = tid_slot(tid); tid_index[i]; i = (i + 1) & (2 * TRACK_MAX - 1))
		if (ring[tid_index[i] - 1].tid == tid && ring[tid_index[i] - 1].live)
			return (int)i;
	return -1;
}

/* Remove index entry i, moving later ones of its cluster back (no tombstones) */
static void tid_erase(unsigned int i)
{
	unsigned int j = i, mask = 2 * TRACK_MAX - 1;

	tid_index[i] = 0;
	for (;;) {
		unsigned int k;

		j = (j + 1) & mask;
		if (!tid_index[j])
			return;
		k = tid_slot(ring[tid_index[j] - 1].tid);
		/* Entry j may fill the hole at i when its home k is not in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		tid_index[i] = tid_index[j];
		tid_index[j] = 0;
		i = j;
	}
}

static void release(struct flight *fl)
{
	for (unsigned int k = 0; k < fl->nsw; k++)
		if (held[fl->sw[k]])
			held[fl->sw[k]]--;
	fl->live = false;
}

/*
 * Forget what is answered at the ring's head, and what never will be (held
 * past hold_us, or the oldest when the ring is full)
 */
static void expire(uint64_t now)
{
	while (ring_len) {
		struct flight *fl = &ring[ring_head];

		if (fl->live) {
			int i;

			if (ring_len < TRACK_MAX && now - fl->t_us < hold_us)
				return;
			i = tid_find(fl->tid);
			if (i >= 0)
				tid_erase((unsigned int)i);
			release(fl);
		}
		ring_head = (ring_head + 1) % TRACK_MAX;
		ring_len--;
	}
}

/* The switches an SMP crosses, in order; 0 when it reaches none */
static unsigned int route_switches(const uint8_t *mad, size_t len, uint16_t *sw)
{
	unsigned int n = 0;
	int node = sm_node, port;

	if (mad[M_CLASS] == 0x81 && len >= M_PATH + MAX_HOPS && get16(mad + 32) == 0xffff) {
		unsigned int hops = mad[M_HOPCNT];

		/* initial_path[i] is the port node i-1 sends it out of (IBA 14.2.2.2) */
		for (unsigned int h = 1; h <= hops && h < MAX_HOPS; h++) {
			port = mad[M_PATH + h];
			if (slot_of(node, port) < 0 || links[slot_of(node, port)].node < 0)
				break;		/* ibsim gives it back as undeliverable */
			node = links[slot_of(node, port)].node;
			if (nodes[node].sw)
				sw[n++] = nodes[node].swidx;
		}
		return n;
	}
	/* LID routed (or from a LID): charged to the SM's first switch only */
	port = slot_of(sm_node, 1);
	if (port >= 0 && links[port].node >= 0 && nodes[links[port].node].sw)
		sw[n++] = nodes[links[port].node].swidx;
	return n;
}

/* ---- the hooks: decide at write(), free at read() ---- */

static bool is_smp_request(const uint8_t *mad, size_t len)
{
	uint8_t method;

	if (len < M_DATA || (mad[M_CLASS] != 0x01 && mad[M_CLASS] != 0x81))
		return false;
	method = mad[M_METHOD];
	/* Get, Set: answered; Trap, TrapRepress and responses are not ours to follow */
	return method == 0x01 || method == 0x02;
}

static bool shim_drop(const uint8_t *mad, size_t len)
{
	uint16_t sw[MAX_HOPS];
	unsigned int n, full = MAX_HOPS, pos, i;
	uint32_t tid;
	struct flight *fl;
	bool drop = false;

	if (!enabled || !is_smp_request(mad, len))
		return false;
	pthread_mutex_lock(&lock);
	expire(now_us());
	n = route_switches(mad, len, sw);
	n_smps++;
	/* A route through a switch twice (up and back down) takes two places */
	for (i = 0; i < n; i++) {
		if (held[sw[i]] >= depth) {
			full = i;
			break;
		}
		held[sw[i]]++;
	}
	if (full < MAX_HOPS) {
		while (i--)
			held[sw[i]]--;
		/* The first full switch on the way sheds it */
		n_dropped++;
		n_first_switch += full == 0;
		dropped_at[sw[full]]++;
		drop = true;
		if (verbose && logf)
			fprintf(logf, "drop tid=0x%08x attr=0x%04x hops=%u at=%s held=%u\n",
				get32(mad + 12), get16(mad + M_ATTR), mad[M_HOPCNT],
				switch_name(sw[full]), held[sw[full]]);
	} else if (n) {
		tid = get32(mad + 12);
		i = (unsigned int)tid_find(tid);
		if (i < 2 * TRACK_MAX) {
			/* A TID sent again while held: the old one is gone */
			release(&ring[tid_index[i] - 1]);
			tid_erase(i);
		}
		pos = (ring_head + ring_len++) % TRACK_MAX;
		fl = &ring[pos];
		fl->tid = tid;
		fl->method = mad[M_METHOD];
		fl->live = true;
		fl->nsw = (uint8_t)n;
		fl->t_us = now_us();
		memcpy(fl->sw, sw, n * sizeof(*sw));
		for (i = 0; i < n; i++)
			if (held[sw[i]] > max_held)
				max_held = held[sw[i]];
		for (i = tid_slot(tid); tid_index[i]; i = (i + 1) & (2 * TRACK_MAX - 1))
			;
		tid_index[i] = (int32_t)pos + 1;
	}
	pthread_mutex_unlock(&lock);
	return drop;
}

static void shim_sent(const uint8_t *mad, size_t len)
{
	(void)mad;
	(void)len;
}

static void shim_received(uint8_t *mad, size_t len)
{
	int i;

	if (!enabled || len < M_DATA || (mad[M_CLASS] != 0x01 && mad[M_CLASS] != 0x81))
		return;
	pthread_mutex_lock(&lock);
	i = tid_find(get32(mad + 12));
	/* An answer, or our own request given back undeliverable */
	if (i >= 0 && ((mad[M_METHOD] & 0x80) ||
		       mad[M_METHOD] == ring[tid_index[i] - 1].method)) {
		struct flight *fl = &ring[tid_index[i] - 1];

		tid_erase((unsigned int)i);
		release(fl);
	}
	expire(now_us());
	pthread_mutex_unlock(&lock);
}
