/*
 * umad_shim.h - the core the LD_PRELOAD shims for an SM under test share
 * (pkey_shim.c, rereg_shim.c, tests/bench/madcount.c): open(), read() and
 * write() are wrapped so that every MAD the SM exchanges through
 * /dev/infiniband/umad* passes the shim's two hooks, which the including
 * file defines:
 *
 *   static void shim_sent(const uint8_t *mad, size_t len);
 *	a MAD the SM writes, before it goes
 *   static void shim_received(uint8_t *mad, size_t len);
 *	a MAD the SM reads, which the hook may change
 *
 * (mad: the MAD after the ib_user_mad header; len: its bytes, at least 1).
 * A shim that defines UMAD_SHIM_DROP before including this also defines
 *
 *   static bool shim_drop(const uint8_t *mad, size_t len);
 *	asked after shim_sent(): true discards the MAD, and write() says it
 *	went (an HCA cannot tell either when a switch drops what it sent)
 *
 * Include it once per shim, first in its .c. A shim goes before libumad2sim.so in
 * LD_PRELOAD: both wrap these calls, and umad2sim never passes them on.
 */
#ifndef SMD_TESTS_UMAD_SHIM_H
#define SMD_TESTS_UMAD_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define MAX_TRACKED_FD	65536
#define UMAD_HDR	offsetof(struct ib_user_mad, data)
/* MAD offsets (IBA 13.4.2, 14.2.1.2): class, method, hop count, attribute, DR paths, data */
#define M_CLASS		1
#define M_METHOD	3
#define M_HOPCNT	7
#define M_ATTR		16
#define M_AMOD		20
#define M_DATA		64
#define M_PATH		128

static void shim_sent(const uint8_t *mad, size_t len);
static void shim_received(uint8_t *mad, size_t len);
#ifdef UMAD_SHIM_DROP
#include <stdbool.h>
static bool shim_drop(const uint8_t *mad, size_t len);
#endif

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static unsigned char umad_fd[MAX_TRACKED_FD];
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static int (*real_open)(const char *, int, ...);

static int is_umad_fd(int fd)
{
	return fd >= 0 && fd < MAX_TRACKED_FD && umad_fd[fd];
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
	if (fd >= 0 && fd < MAX_TRACKED_FD && !strncmp(path, "/dev/infiniband/umad", 20))
		umad_fd[fd] = 1;
	return fd;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (is_umad_fd(fd) && count > UMAD_HDR) {
		shim_sent((const uint8_t *)buf + UMAD_HDR, count - UMAD_HDR);
#ifdef UMAD_SHIM_DROP
		if (shim_drop((const uint8_t *)buf + UMAD_HDR, count - UMAD_HDR))
			return (ssize_t)count;
#endif
	}
	return real_write(fd, buf, count);
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t n;

	if (!real_read)
		real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	n = real_read(fd, buf, count);
	if (n > (ssize_t)UMAD_HDR && is_umad_fd(fd))
		shim_received((uint8_t *)buf + UMAD_HDR, (size_t)n - UMAD_HDR);
	return n;
}

#endif
