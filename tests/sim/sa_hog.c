/*
 * sa_hog.c - a hostile SA client for tests: it opens many GetTables and
 * keeps every transfer alive by ACKing its first segment again and again,
 * never asking for more (IBA 13.6.3: an ACK of segment 1 with window 1).
 * An SA without per-client limits gives it every transfer slot it has.
 *
 *   sa_hog N SECONDS [ATTR]   (default attribute 0x0011, NodeRecord)
 *
 * Every byte of the requests is written here from IBA 13.4.2 (MAD header),
 * 13.6.2 (RMPP header) and 15.2.1.1 (SA header). Output, at the end, one
 * line: "sent=N first_segments=N no_resources=N other_status=N aborts=N
 * most_alive=N acks=N", most_alive being the most transfers it held open at
 * once (first segment seen, no ABORT since), acks the ACKs it sent.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/umad.h>

#define MAD_SIZE	256
#define CLASS_SA	0x03
#define GETTABLE	0x12
#define RMPP_ACK	2
#define RMPP_ABORT	4
#define RMPP_ACTIVE	0x01
#define MAX_HOG		4096

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int portid, agent;
static unsigned int sa_lid;

static int send_mad(const uint8_t mad[MAD_SIZE])
{
	uint8_t u[sizeof(struct ib_user_mad) + MAD_SIZE];

	memset(u, 0, sizeof(u));
	memcpy(umad_get_mad(u), mad, MAD_SIZE);
	/* QP1, the well-known GSI Q_Key (IBA 13.5.1) */
	umad_set_addr(u, (int)sa_lid, 1, 0, (int)0x80010000);
	return umad_send(portid, agent, u, MAD_SIZE, 0, 0);
}

/* MAD header (IBA 13.4.2): version 1, class SA, class version 2 */
static void header(uint8_t *m, uint8_t method, uint32_t tid, uint16_t attr)
{
	memset(m, 0, MAD_SIZE);
	m[0] = 1;
	m[1] = CLASS_SA;
	m[2] = 2;
	m[3] = method;
	put32(m + 12, tid);
	put16(m + 16, attr);
}

int main(int argc, char **argv)
{
	static uint32_t tids[MAX_HOG];
	static uint8_t alive[MAX_HOG];
	unsigned int n, secs, attr = 0x0011;
	unsigned long sent = 0, first = 0, nores = 0, other = 0, aborts = 0;
	unsigned long alive_now = 0, most_alive = 0, acks = 0;
	umad_port_t p;
	uint8_t mad[MAD_SIZE], buf[sizeof(struct ib_user_mad) + MAD_SIZE];
	double end, next_ack;

	if (argc < 3) {
		fprintf(stderr, "usage: sa_hog N SECONDS [ATTR]\n");
		return 2;
	}
	n = (unsigned int)strtoul(argv[1], NULL, 0);
	secs = (unsigned int)strtoul(argv[2], NULL, 0);
	if (argc > 3)
		attr = (unsigned int)strtoul(argv[3], NULL, 0);
	if (n > MAX_HOG)
		n = MAX_HOG;
	if (umad_init() < 0 || umad_get_port(NULL, 0, &p) < 0) {
		fprintf(stderr, "sa_hog: no port\n");
		return 1;
	}
	sa_lid = p.sm_lid;
	umad_release_port(&p);
	portid = umad_open_port(NULL, 0);
	agent = portid < 0 ? -1 : umad_register(portid, CLASS_SA, 2, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "sa_hog: cannot open the port\n");
		return 1;
	}
	end = now_s() + secs;
	next_ack = now_s() + 0.2;
	/*
	 * The requests go out 32 at a time between reads: a client that only
	 * writes can deadlock with the simulator (tests/sim/simlib.sh)
	 */
	for (unsigned int i = 0; i < n || now_s() < end;) {
		int len = (int)sizeof(buf) - (int)sizeof(struct ib_user_mad);
		const uint8_t *r = umad_get_mad(buf);

		for (unsigned int k = 0; k < 32 && i < n; k++, i++) {
			tids[i] = 0x70000000u + i;
			header(mad, GETTABLE, tids[i], (uint16_t)attr);
			if (send_mad(mad) == 0)
				sent++;
		}
		while (umad_recv(portid, buf, &len, i < n ? 5 : 50) >= 0) {
			if (len >= 56 && r[1] == CLASS_SA) {
				uint32_t tid = get32(r + 12) - 0x70000000u;
				uint16_t st = (uint16_t)(r[4] << 8 | r[5]);

				if (r[25] == RMPP_ABORT) {
					aborts++;
					if (tid < n && alive[tid]) {
						alive[tid] = 0;
						alive_now--;
					}
				} else if (st == 0x0100) {
					nores++;
				} else if (st) {
					other++;
				} else if (tid < n && get32(r + 28) == 1 && !alive[tid]) {
					alive[tid] = 1;
					first++;
					if (++alive_now > most_alive)
						most_alive = alive_now;
				}
			}
			len = (int)sizeof(buf) - (int)sizeof(struct ib_user_mad);
		}
		if (now_s() < next_ack)
			continue;
		next_ack = now_s() + 0.2;
		/* Every live transfer: ACK of segment 1, window still 1 (IBA 13.6.2.1) */
		for (unsigned int t = 0; t < n; t++) {
			if (!alive[t])
				continue;
			header(mad, GETTABLE, tids[t], (uint16_t)attr);
			mad[24] = 1;
			mad[25] = RMPP_ACK;
			mad[26] = RMPP_ACTIVE;
			put32(mad + 28, 1);
			put32(mad + 32, 1);
			send_mad(mad);
			acks++;
		}
	}
	printf("sent=%lu first_segments=%lu no_resources=%lu other_status=%lu aborts=%lu "
	       "most_alive=%lu acks=%lu\n", sent, first, nores, other, aborts, most_alive, acks);
	return 0;
}
