/*
 * madcount.c - LD_PRELOAD shim that counts the MADs a process sends.
 *
 * Build:  cc -shared -fPIC -O2 -o madcount.so madcount.c -ldl
 * Use:    MADCOUNT_FILE=/tmp/counts LD_PRELOAD=./madcount.so:libumad2sim.so prog
 *
 * Counts every MAD handed to umad_send() and, for programs that bypass
 * libibumad, every write() to a file descriptor that was opened on
 * /dev/infiniband/umad* (writes made inside umad_send() are not counted
 * twice).  At exit, if the process sent anything, one line of key=value
 * counters is written to "$MADCOUNT_FILE.<pid>" (so forked children and
 * helper processes such as /usr/bin/time do not overwrite each other).
 *
 * Order in LD_PRELOAD: put madcount.so BEFORE libumad2sim.so.  Both wrap
 * open() and write(); umad2sim serves its fake umad file descriptors itself
 * and never passes those calls on, so a shim listed after it would only see
 * umad_send() (which umad2sim does not wrap).  Listed first, madcount sees
 * the calls and forwards them (dlsym(RTLD_NEXT)) to umad2sim.
 */
/* open(), read() and write() on umad descriptors: the shims' common core */
#include "../sim/umad_shim.h"
#include <stdio.h>
#include <stdlib.h>

enum {
	C_SMP_GET, C_SMP_SET, C_SMP_OTHER_REQ, C_SMP_RESP,	/* classes 0x01, 0x81 */
	C_SMP_DR, C_SMP_LID,
	C_SA, C_OTHER, C_TOTAL, C_NCOUNTERS
};
static const char *const names[C_NCOUNTERS] = {
	"smp_get", "smp_set", "smp_other_req", "smp_resp",
	"smp_dr", "smp_lid", "sa", "other", "total"
};

static unsigned long counters[C_NCOUNTERS];
static __thread int in_umad_send;

static int (*real_umad_send)(int, int, void *, int, int, int);

static void add(int which)
{
	__atomic_fetch_add(&counters[which], 1, __ATOMIC_RELAXED);
}

/* Classify one MAD (the 256-byte MAD, not the umad header). */
static void count_mad(const uint8_t *mad, size_t len)
{
	uint8_t mclass, method;

	if (len < 4)
		return;
	mclass = mad[1];
	method = mad[3];
	add(C_TOTAL);
	if (mclass == 0x01 || mclass == 0x81) {
		add(mclass == 0x81 ? C_SMP_DR : C_SMP_LID);
		if (method & 0x80)
			add(C_SMP_RESP);
		else if (method == 0x01)
			add(C_SMP_GET);
		else if (method == 0x02)
			add(C_SMP_SET);
		else
			add(C_SMP_OTHER_REQ);
	} else if (mclass == 0x03) {
		add(C_SA);
	} else {
		add(C_OTHER);
	}
}

int umad_send(int fd, int agentid, void *umad, int length, int timeout_ms,
	      int retries)
{
	int ret;

	if (!real_umad_send)
		real_umad_send = (int (*)(int, int, void *, int, int, int))
			dlsym(RTLD_NEXT, "umad_send");
	if (!real_umad_send)
		return -1;
	if (umad && length > 0)
		count_mad((const uint8_t *)((struct ib_user_mad *)umad)->data,
			  (size_t)length);
	in_umad_send++;
	ret = real_umad_send(fd, agentid, umad, length, timeout_ms, retries);
	in_umad_send--;
	return ret;
}

/* write() to a umad descriptor, for programs that bypass umad_send() */
static void shim_sent(const uint8_t *mad, size_t len)
{
	if (!in_umad_send)
		count_mad(mad, len);
}

static void shim_received(uint8_t *mad, size_t len)
{
	(void)mad;
	(void)len;
}

__attribute__((destructor)) static void madcount_report(void)
{
	const char *base = getenv("MADCOUNT_FILE");
	char path[4096];
	FILE *f;
	int i;

	if (!base || !*base || !counters[C_TOTAL])
		return;
	snprintf(path, sizeof(path), "%s.%ld", base, (long)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	for (i = 0; i < C_NCOUNTERS; i++)
		fprintf(f, "%s%s=%lu", i ? " " : "", names[i], counters[i]);
	fprintf(f, "\n");
	fclose(f);
}
