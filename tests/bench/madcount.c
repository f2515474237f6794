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
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define MAX_TRACKED_FD 65536

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
static unsigned char umad_fd[MAX_TRACKED_FD];
static __thread int in_umad_send;

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_open)(const char *, int, ...);
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

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (!real_open)
		real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	fd = real_open(path, flags, mode);
	if (fd >= 0 && fd < MAX_TRACKED_FD &&
	    strncmp(path, "/dev/infiniband/umad", 20) == 0)
		umad_fd[fd] = 1;
	return fd;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))
			dlsym(RTLD_NEXT, "write");
	if (!in_umad_send && fd >= 0 && fd < MAX_TRACKED_FD && umad_fd[fd] &&
	    count > offsetof(struct ib_user_mad, data))
		count_mad((const uint8_t *)buf + offsetof(struct ib_user_mad, data),
			  count - offsetof(struct ib_user_mad, data));
	return real_write(fd, buf, count);
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
