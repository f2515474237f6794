/*
 * kernel_shim.c - LD_PRELOAD shim for an SM under the simulator: its umad
 * device behaves as the Linux kernel's does where umad2sim's does not
 * (written from drivers/infiniband/core/user_mad.c and
 * Documentation/infiniband/user_mad.rst). Each behaviour is switched on by
 * an environment variable:
 *
 *   KSHIM_LOG=FILE      one line per event (below), flushed at once
 *   KSHIM_POLLABLE=1    the umad descriptor the SM gets is a real one (a
 *                       SOCK_SEQPACKET socket that a thread of the shim fills
 *                       from umad2sim's fake descriptor, which epoll refuses):
 *                       poll, select and epoll take it, as the kernel's
 *   KSHIM_GONE=FILE     once FILE exists, the device has gone away (HCA
 *                       reset, driver unloaded): the kernel marks the agents
 *                       dead; poll() says POLLERR (epoll EPOLLERR), read()
 *                       and write() fail with EIO, for ever (ib_umad_poll,
 *                       ib_umad_read, ib_umad_write)
 *   KSHIM_DUP=0         do not refuse duplicate TIDs (default: refuse them):
 *                       a request (ib_response_mad false, not an RMPP-active
 *                       MAD of a user-RMPP agent) whose class and TID equal
 *                       those of a request of the same agent still waiting
 *                       for its response fails with EINVAL (is_duplicate).
 *                       A request waits from its write() until its response
 *                       (or the simulator's loss report) is read, or until
 *                       timeout_ms * (retries + 1) + KSHIM_SLACK_MS (default
 *                       50) have passed: the kernel starts its timer when the
 *                       send completes and expires it from a work queue, so
 *                       a retry sent exactly at the timeout races it and
 *                       often loses; the shim makes it lose every time
 *   KSHIM_MARK=1        every request the SM reads is given an address as a
 *                       kernel would hand it over with a real path: an SL
 *                       and a P_Key index, and for the SA's class (QP1) a
 *                       GRH or none (GID, traffic class, flow label, hop
 *                       limit, GID index), derived from its source LID and
 *                       TID (all MADs of one transaction alike, RMPP ACKs
 *                       and segments included; about half of them with a GRH)
 *   KSHIM_ISSM=eagain|ebusy|eperm   another SM holds issm: open() with
 *                       O_NONBLOCK fails with that errno (the kernel says
 *                       EAGAIN), without it blocks for ever (ib_umad_sm_open)
 *   KSHIM_SMDISABLED=1  sysfs cap_mask of every port shows IsSMDisabled
 *                       (PortInfo.CapabilityMask bit 10)
 * Always: a request reaches the SM only when one of its agents registered
 * its class, class version and method (find_mad_agent in mad.c; the kernel
 * answers an unmatched Get or Set itself, drops the rest); umad2sim hands
 * over whatever the class's agent is. Dropped ones are logged.
 *
 * Log lines (key=value):
 *   recv class= method= attr= tid= rmpp= slid= qpn= sl= pkey= grh= [gid=
 *        tclass= flow= hop= gidx=]          a request, as the SM got it
 *   send class= method= attr= tid= rmpp= agent= dlid= qpn= sl= pkey= grh= [gid=
 *        tclass= flow= hop= gidx=] tmo= res=ok|EINVAL|EIO
 *                                           every MAD the SM writes but its
 *                                           SMP requests (SMP answers and
 *                                           TrapRepress are logged)
 *   dup-refused class= method= attr= tid= agent=   a write refused (is_duplicate)
 *   gone ms=                                the device went away (CLOCK_REALTIME)
 *   issm-refused errno= / issm-blocked      an open of issm
 *   smdisabled path=                        a cap_mask read, changed
 *   unmatched class= method= attr= tid= slid=  a request no agent registered for
 *   pollable fd=                            the descriptor handed out
 *   agent id= class= version= methods=      an agent registered (method bits,
 *                                           127..0)
 * What is not simulated: the kernel's own ETIMEDOUT receives for requests
 * that time out, RMPP done by the kernel, P_Key checks of the index.
 *
 * Build:  cc -shared -fPIC -O2 -o kernel_shim.so kernel_shim.c -ldl -lpthread
 * Use:    LD_PRELOAD=./kernel_shim.so:libumad2sim.so smd ...  (before umad2sim:
 *         both wrap these calls, and umad2sim never passes them on)
 * Not umad_shim.h's core: that one watches and edits MADs; this one
 * changes what the calls return and which descriptor the SM holds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <infiniband/umad.h>

#define UMAD_HDR	offsetof(struct ib_user_mad, data)
#define MAX_DEVS	8
#define MAX_OUT		8192
#define BUF_SIZE	2048

/* MAD header offsets (IBA 13.4.2) and the RMPP header (13.6.2.1) */
#define M_CLASS		1
#define M_METHOD	3
#define M_TID		8
#define M_ATTR		16
#define M_AMOD		20
#define M_RMPP_TYPE	25
#define M_RMPP_FLAGS	26

static int (*real_open)(const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ioctl)(int, unsigned long, ...);

/* A registered agent (IB_USER_MAD_REGISTER_AGENT): what requests it takes */
struct agent {
	bool used;
	uint8_t mclass, version;
	uint8_t methods[16];	/* bit m: byte m / 8, bit m % 8 (a long[2] on little endian) */
};

/* The kernel's struct ib_user_mad_reg_req (include/uapi/rdma/ib_user_mad.h) */
struct reg_req {
	uint32_t id;
	uint8_t method_mask[16];
	uint8_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint8_t oui[3];
	uint8_t rmpp_version;
};
#define UMAD_IOCTL_TYPE		0x1b	/* IB_IOCTL_MAGIC */
#define UMAD_IOCTL_REGISTER	1
#define UMAD_IOCTL_UNREGISTER	2

/* One umad descriptor the SM holds: its own, and umad2sim's behind it */
struct dev {
	struct agent agents[32];	/* IB_UMAD_MAX_AGENTS */
	int fd;			/* what the SM uses */
	int sim;		/* umad2sim's fake descriptor */
	int peer;		/* pollable: the shim's end of the socket pair; else -1 */
	pthread_t pump;
	pthread_mutex_t mu;	/* the pump's end: the device gone, or closed */
	atomic_bool stop;
	bool used;
};

/* A request the kernel would still be waiting for */
struct out {
	uint32_t agent, tid;
	uint8_t mclass;
	uint64_t until_ns;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev devs[MAX_DEVS];
static struct out outs[MAX_OUT];
static unsigned int nouts;
static FILE *logf;
static atomic_bool gone;
static bool pollable, dup_rule = true, mark, smdisabled;
static const char *gone_file, *issm_mode;
static uint64_t slack_ns = 50000000;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void logln(const char *fmt, ...)
{
	va_list ap;

	if (!logf)
		return;
	pthread_mutex_lock(&lock);
	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fputc('\n', logf);
	fflush(logf);
	pthread_mutex_unlock(&lock);
}

static void *watch_gone(void *arg);

static void init(void)
{
	const char *v;

	for (int i = 0; i < MAX_DEVS; i++)
		pthread_mutex_init(&devs[i].mu, NULL);
	real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	v = getenv("KSHIM_LOG");
	if (v && *v) {
		logf = fopen(v, "a");
		if (logf)
			setvbuf(logf, NULL, _IOLBF, 0);
	}
	pollable = (v = getenv("KSHIM_POLLABLE")) && atoi(v);
	dup_rule = !(v = getenv("KSHIM_DUP")) || atoi(v);
	mark = (v = getenv("KSHIM_MARK")) && atoi(v);
	smdisabled = (v = getenv("KSHIM_SMDISABLED")) && atoi(v);
	if ((v = getenv("KSHIM_SLACK_MS")))
		slack_ns = strtoull(v, NULL, 0) * 1000000u;
	issm_mode = getenv("KSHIM_ISSM");
	gone_file = getenv("KSHIM_GONE");
	if (gone_file && *gone_file) {
		pthread_t t;

		if (pthread_create(&t, NULL, watch_gone, NULL) == 0)
			pthread_detach(t);
	}
}

static struct dev *dev_of(int fd)
{
	for (int i = 0; i < MAX_DEVS; i++)
		if (devs[i].used && devs[i].fd == fd)
			return &devs[i];
	return NULL;
}

/*
 * The device went away: a pollable descriptor gets a pending socket error
 * (EPOLLERR, and HUP) that nothing clears, since reads never reach the
 * socket again; the fake one's poll() is answered POLLERR by the shim
 */
static void kill_dev(struct dev *d)
{
	pthread_mutex_lock(&d->mu);
	if (d->peer >= 0) {
		atomic_store(&d->stop, true);
		pthread_join(d->pump, NULL);
		/* Unread data in the closed end: the other gets ECONNRESET as sk_err */
		send(d->fd, "x", 1, MSG_DONTWAIT);
		real_close(d->peer);
		d->peer = -1;
	}
	pthread_mutex_unlock(&d->mu);
}

static void *watch_gone(void *arg)
{
	struct timespec ts;

	(void)arg;
	while (access(gone_file, F_OK) != 0)
		usleep(10000);
	clock_gettime(CLOCK_REALTIME, &ts);
	atomic_store(&gone, true);
	for (int i = 0; i < MAX_DEVS; i++)
		if (devs[i].used)
			kill_dev(&devs[i]);
	logln("gone ms=%llu", (unsigned long long)ts.tv_sec * 1000u +
	      (unsigned long long)ts.tv_nsec / 1000000u);
	return NULL;
}

/* umad2sim's descriptor into the socket: one MAD per datagram */
static void *pump(void *arg)
{
	struct dev *d = arg;
	uint8_t buf[BUF_SIZE];

	while (!atomic_load(&d->stop)) {
		struct pollfd p = { .fd = d->sim, .events = POLLIN };
		ssize_t n;

		if (real_poll(&p, 1, 20) <= 0)
			continue;
		/* umad2sim returns -EWOULDBLOCK itself when its queue is empty */
		while (!atomic_load(&d->stop) && (n = real_read(d->sim, buf, sizeof(buf))) > 0) {
			while (send(d->peer, buf, (size_t)n, MSG_DONTWAIT) < 0 && errno == EAGAIN &&
			       !atomic_load(&d->stop))
				usleep(1000);
		}
	}
	return NULL;
}

/* ib_response_mad(): the kernel's own test */
static bool is_response(const uint8_t *mad)
{
	return (mad[M_METHOD] & 0x80) || mad[M_METHOD] == 0x07 ||
	       (mad[M_CLASS] == 0x05 && (get32(mad + M_AMOD) & 1));
}

/* RMPP classes (ib_is_mad_class_rmpp): SA, DevMgt, DevAdm, BIS, vendor range 2 */
static bool rmpp_active(const uint8_t *mad)
{
	uint8_t c = mad[M_CLASS];
	bool rmpp_class = c == 0x03 || c == 0x06 || c == 0x10 || c == 0x12 ||
			  (c >= 0x30 && c <= 0x4f);

	return rmpp_class && (mad[M_RMPP_FLAGS] & 1);
}

static void gid_text(const uint8_t *g, char *out)
{
	inet_ntop(AF_INET6, g, out, 64);
}

static int addr_text(const ib_mad_addr_t *a, char *out, size_t len)
{
	char gid[64];

	if (!a->grh_present)
		return snprintf(out, len, "sl=%u pkey=%u grh=0", a->sl, a->pkey_index);
	gid_text(a->gid, gid);
	return snprintf(out, len, "sl=%u pkey=%u grh=1 gid=%s tclass=%u flow=0x%x hop=%u gidx=%u",
			a->sl, a->pkey_index, gid, a->traffic_class,
			ntohl(a->flow_label) & 0xfffff, a->hop_limit, a->gid_index);
}

/* The request ended: its response (or the simulator's loss report) came */
static void out_done(uint8_t mclass, uint32_t tid)
{
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nouts; i++)
		if (outs[i].mclass == mclass && outs[i].tid == tid) {
			outs[i] = outs[--nouts];
			break;
		}
	pthread_mutex_unlock(&lock);
}

/* is_duplicate(): true when refused; else remembered while the kernel would wait */
static bool out_check(const struct ib_user_mad *u, const uint8_t *mad)
{
	uint32_t tid = get32(mad + M_TID + 4);
	uint64_t now = now_ns();
	bool dup = false;

	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nouts;) {
		if (outs[i].until_ns <= now) {
			outs[i] = outs[--nouts];
			continue;
		}
		if (outs[i].agent == u->agent_id && outs[i].mclass == mad[M_CLASS] &&
		    outs[i].tid == tid)
			dup = true;
		i++;
	}
	if (!dup && u->timeout_ms > 0 && nouts < MAX_OUT)
		outs[nouts++] = (struct out){
			.agent = u->agent_id, .tid = tid, .mclass = mad[M_CLASS],
			.until_ns = now + (uint64_t)u->timeout_ms * 1000000u *
				    ((uint64_t)u->retries + 1) + slack_ns,
		};
	pthread_mutex_unlock(&lock);
	return dup;
}

/* A path a kernel could hand over: the same for every MAD of one transaction */
static void mark_addr(ib_mad_addr_t *a, const uint8_t *mad)
{
	uint32_t h = (uint32_t)ntohs(a->lid) * 2654435761u ^ get32(mad + M_TID + 4) * 40503u;

	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	a->sl = (uint8_t)(1 + h % 15);
	a->pkey_index = (uint16_t)(1 + (h >> 4) % 7);
	a->grh_present = 0;
	memset(a->gid, 0, sizeof(a->gid));
	a->flow_label = 0;
	a->hop_limit = a->traffic_class = a->gid_index = 0;
	/* A GRH only on QP1: SMPs have none (IBA 14.2.2) */
	if (mad[M_CLASS] == 0x01 || mad[M_CLASS] == 0x81 || !((h >> 8) & 1))
		return;
	a->grh_present = 1;
	a->gid_index = (uint8_t)((h >> 9) % 4);
	a->hop_limit = (uint8_t)(0xff - ((h >> 11) & 0x3f));
	a->traffic_class = (uint8_t)(h >> 17);
	a->flow_label = htonl((h >> 5) & 0xfffff);
	/* The sender's GID: fe80::/64, its interface ID from the LID and hash */
	a->gid[0] = 0xfe;
	a->gid[1] = 0x80;
	a->gid[8] = 0x02;
	a->gid[9] = (uint8_t)(h >> 24);
	a->gid[10] = (uint8_t)(h >> 16);
	a->gid[11] = (uint8_t)(h >> 8);
	a->gid[14] = (uint8_t)(ntohs(a->lid) >> 8);
	a->gid[15] = (uint8_t)ntohs(a->lid);
}

/* find_mad_agent(): an agent of this descriptor registered for the request */
static bool wanted(const struct dev *d, const uint8_t *mad)
{
	uint8_t m = mad[M_METHOD];

	for (int i = 0; i < 32; i++) {
		const struct agent *a = &d->agents[i];

		if (a->used && a->mclass == mad[M_CLASS] && a->version == mad[2] &&
		    (a->methods[m / 8] & (1u << (m % 8))))
			return true;
	}
	return false;
}

/*
 * A MAD the SM is about to read: end what it answers, give it an address,
 * log it. false: the kernel would not have handed it over (no agent for it)
 */
static bool received(const struct dev *d, uint8_t *buf, size_t n)
{
	struct ib_user_mad *u = (struct ib_user_mad *)buf;
	const uint8_t *mad = buf + UMAD_HDR;
	char addr[256];

	if (n < UMAD_HDR + 24)
		return true;
	if (is_response(mad) || u->status) {
		out_done(mad[M_CLASS], get32(mad + M_TID + 4));
		return true;
	}
	if (!wanted(d, mad)) {
		logln("unmatched class=0x%02x method=0x%02x attr=0x%04x tid=0x%08x slid=%u",
		      mad[M_CLASS], mad[M_METHOD], get16(mad + M_ATTR), get32(mad + M_TID + 4),
		      ntohs(u->addr.lid));
		return false;
	}
	if (mark)
		mark_addr(&u->addr, mad);
	addr_text(&u->addr, addr, sizeof(addr));
	logln("recv class=0x%02x method=0x%02x attr=0x%04x tid=0x%08x rmpp=%u slid=%u qpn=%u %s",
	      mad[M_CLASS], mad[M_METHOD], get16(mad + M_ATTR), get32(mad + M_TID + 4),
	      (mad[M_RMPP_FLAGS] & 1) ? mad[M_RMPP_TYPE] : 0, ntohs(u->addr.lid),
	      ntohl(u->addr.qpn), addr);
	return true;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	pthread_once(&once, init);
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (issm_mode && *issm_mode && !strncmp(path, "/dev/infiniband/issm", 20)) {
		/* ib_umad_sm_open(): down_trylock under O_NONBLOCK, else down_interruptible */
		if (flags & O_NONBLOCK) {
			int e = !strcmp(issm_mode, "ebusy") ? EBUSY :
				!strcmp(issm_mode, "eperm") ? EPERM : EAGAIN;

			logln("issm-refused errno=%d", e);
			errno = e;
			return -1;
		}
		logln("issm-blocked");
		for (;;)
			pause();
	}
	fd = real_open(path, flags, mode);
	if (fd < 0)
		return fd;
	if (smdisabled && strstr(path, "/ports/") && strstr(path, "/cap_mask")) {
		char text[64] = { 0 };
		ssize_t n = real_read(fd, text, sizeof(text) - 1);
		unsigned long cap = n > 0 ? strtoul(text, NULL, 0) : 0;
		int mfd = memfd_create("cap_mask", MFD_CLOEXEC);

		real_close(fd);
		if (mfd < 0)
			return -1;
		n = snprintf(text, sizeof(text), "0x%08lx\n", cap | 0x400);
		real_write(mfd, text, (size_t)n);
		lseek(mfd, 0, SEEK_SET);
		logln("smdisabled path=%s", path);
		return mfd;
	}
	if (strncmp(path, "/dev/infiniband/umad", 20))
		return fd;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_DEVS; i++) {
		struct dev *d = &devs[i];
		int sv[2];

		if (d->used)
			continue;
		d->sim = d->fd = fd;
		d->peer = -1;
		memset(d->agents, 0, sizeof(d->agents));
		atomic_store(&d->stop, false);
		if (pollable && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
			if (flags & O_NONBLOCK)
				fcntl(sv[0], F_SETFL, O_NONBLOCK);
			d->fd = sv[0];
			d->peer = sv[1];
			if (pthread_create(&d->pump, NULL, pump, d) != 0) {
				real_close(sv[0]);
				real_close(sv[1]);
				d->fd = fd;
				d->peer = -1;
			}
		}
		d->used = true;
		fd = d->fd;
		break;
	}
	pthread_mutex_unlock(&lock);
	if (pollable)
		logln("pollable fd=%d", fd);
	return fd;
}

int close(int fd)
{
	struct dev *d;
	int sim;

	pthread_once(&once, init);
	pthread_mutex_lock(&lock);
	d = dev_of(fd);
	pthread_mutex_unlock(&lock);
	if (!d)
		return real_close(fd);
	pthread_mutex_lock(&d->mu);
	if (d->peer >= 0) {
		atomic_store(&d->stop, true);
		pthread_join(d->pump, NULL);
		real_close(d->peer);
		d->peer = -1;
	}
	pthread_mutex_unlock(&d->mu);
	sim = d->sim;
	pthread_mutex_lock(&lock);
	d->used = false;
	pthread_mutex_unlock(&lock);
	if (sim != fd)
		real_close(sim);
	return real_close(fd);
}

ssize_t read(int fd, void *buf, size_t count)
{
	struct dev *d;
	ssize_t n;

	pthread_once(&once, init);
	d = dev_of(fd);
	if (!d)
		return real_read(fd, buf, count);
	if (atomic_load(&gone)) {
		errno = EIO;
		return -1;
	}
	/* What no agent took is not there: the next one, or nothing */
	while ((n = real_read(fd, buf, count)) > 0 && !received(d, buf, (size_t)n))
		;
	return n;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const struct ib_user_mad *u = buf;
	const uint8_t *mad = (const uint8_t *)buf + UMAD_HDR;
	const char *res = "ok";
	struct dev *d;
	ssize_t n = (ssize_t)count;
	int e = 0;

	pthread_once(&once, init);
	d = dev_of(fd);
	if (!d)
		return real_write(fd, buf, count);
	if (count < UMAD_HDR + 24)
		return real_write(d->sim, buf, count);
	if (atomic_load(&gone)) {
		e = EIO;
		res = "EIO";
	} else if (dup_rule && !is_response(mad) && !rmpp_active(mad) && out_check(u, mad)) {
		e = EINVAL;
		res = "EINVAL";
		logln("dup-refused class=0x%02x method=0x%02x attr=0x%04x tid=0x%08x agent=%u",
		      mad[M_CLASS], mad[M_METHOD], get16(mad + M_ATTR), get32(mad + M_TID + 4),
		      u->agent_id);
	} else {
		n = real_write(d->sim, buf, count);
		if (n < 0)
			res = "EIO";
	}
	if (is_response(mad) || (mad[M_CLASS] != 0x01 && mad[M_CLASS] != 0x81)) {
		char addr[256];

		addr_text(&u->addr, addr, sizeof(addr));
		logln("send class=0x%02x method=0x%02x attr=0x%04x tid=0x%08x rmpp=%u agent=%u "
		      "dlid=%u qpn=%u %s tmo=%u res=%s", mad[M_CLASS], mad[M_METHOD],
		      get16(mad + M_ATTR), get32(mad + M_TID + 4),
		      (mad[M_RMPP_FLAGS] & 1) ? mad[M_RMPP_TYPE] : 0, u->agent_id,
		      ntohs(u->addr.lid), ntohl(u->addr.qpn), addr, u->timeout_ms, res);
	}
	if (e) {
		errno = e;
		return -1;
	}
	return n;
}

int ioctl(int fd, unsigned long request, ...)
{
	struct dev *d;
	va_list ap;
	void *arg;
	int r;

	pthread_once(&once, init);
	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	d = dev_of(fd);
	if (!d)
		return real_ioctl(fd, request, arg);
	r = real_ioctl(d->sim, request, arg);
	if (r == 0 && _IOC_TYPE(request) == UMAD_IOCTL_TYPE && arg) {
		if (_IOC_NR(request) == UMAD_IOCTL_REGISTER) {
			const struct reg_req *q = arg;

			if (q->id < 32) {
				struct agent *a = &d->agents[q->id];

				a->used = true;
				a->mclass = q->mgmt_class;
				a->version = q->mgmt_class_version;
				memcpy(a->methods, q->method_mask, sizeof(a->methods));
				logln("agent id=%u class=0x%02x version=%u methods=%016llx%016llx",
				      q->id, q->mgmt_class, q->mgmt_class_version,
				      (unsigned long long)le64toh(*(const uint64_t *)(q->method_mask + 8)),
				      (unsigned long long)le64toh(*(const uint64_t *)q->method_mask));
			}
		} else if (_IOC_NR(request) == UMAD_IOCTL_UNREGISTER) {
			uint32_t id = *(const uint32_t *)arg;

			if (id < 32)
				d->agents[id].used = false;
		}
	}
	return r;
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	int n = 0;

	pthread_once(&once, init);
	if (!atomic_load(&gone))
		return real_poll(fds, nfds, timeout);
	/* ib_umad_poll() of a dead file: EPOLLERR, and nothing else, at once */
	for (nfds_t i = 0; i < nfds; i++) {
		fds[i].revents = dev_of(fds[i].fd) ? POLLERR : 0;
		n += fds[i].revents != 0;
	}
	return n ? n : real_poll(fds, nfds, timeout);
}
