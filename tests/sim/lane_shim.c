// SPDX-License-Identifier: MIT
/*
 * lane_shim.c - LD_PRELOAD shim for ibsim: links that lost lanes.
 *
 * ibsim trains every link at the widest width both ends enable
 * (sim_net.c, get_active_linkwidth()), so a link up below what both ends
 * support and enable, the degraded link of a bad lane or cable, cannot
 * happen in it: a topology line "# lid 0 1xQDR" enables 1x only on both
 * ends, and 1x is then all they may do. On real hardware such a port
 * still enables 4x (or "all supported") and trains at 1x.
 *
 * This shim makes those ports say so: every PortInfo answer ibsim writes
 * back to a client (GetResp of class 0x01 or 0x81, attribute 0x15) whose
 * LinkWidthEnabled is 1x alone and LinkWidthActive 1x gets
 * LinkWidthEnabled 1x or 4x (3): a 4x port that trained at 1x. Nothing
 * else changes; links of other widths are left alone. smd, smpquery and
 * every client see the same answers.
 *
 * Environment: LANE_SHIM=1 switches it on (else ibsim is untouched),
 * LANE_SHIM_LOG a file that gets one line per answer rewritten.
 *
 * Build:  cc -shared -fPIC -O2 -o lane_shim.so lane_shim.c -ldl
 * Use:    LANE_SHIM=1 LD_PRELOAD=./lane_shim.so ibsim -s net
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ibsim's wire struct (ibsim/include/ibsim.h, 0.10): one MAD per request */
struct sim_request {
	uint32_t dlid;
	uint32_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status;
	uint64_t length;
	char mad[256];
};

#define MAX_FDS		64
/* PortInfo in an SMP: data at byte 64; LinkWidthEnabled bits 232-239, Active 248-255 */
#define PI_WIDTH_ENABLED	(64 + 29)
#define PI_WIDTH_ACTIVE		(64 + 31)

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static bool on;
static FILE *logf;
static int client_fd[MAX_FDS];
static int nclient;

__attribute__((constructor)) static void init(void)
{
	const char *lp = getenv("LANE_SHIM_LOG");

	real_write = dlsym(RTLD_NEXT, "write");
	real_bind = dlsym(RTLD_NEXT, "bind");
	on = getenv("LANE_SHIM") && !strcmp(getenv("LANE_SHIM"), "1");
	if (on && lp)
		logf = fopen(lp, "ae");
}

/* ibsim's per-client sockets are bound to abstract names "<base>:out<i>" */
int bind(int fd, const struct sockaddr *a, socklen_t len)
{
	const struct sockaddr_un *u = (const void *)a;
	int r = real_bind(fd, a, len);

	if (r == 0 && on && a && a->sa_family == AF_UNIX && nclient < MAX_FDS &&
	    len > (socklen_t)offsetof(struct sockaddr_un, sun_path) + 1) {
		size_t n = len - offsetof(struct sockaddr_un, sun_path) - 1;
		char name[108] = "";
		const char *c;

		memcpy(name, u->sun_path + 1, n < sizeof(name) - 1 ? n : sizeof(name) - 1);
		c = strrchr(name, ':');
		if (c && !strncmp(c, ":out", 4))
			client_fd[nclient++] = fd;
	}
	return r;
}

static bool is_client(int fd)
{
	for (int i = 0; i < nclient; i++)
		if (client_fd[i] == fd)
			return true;
	return false;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct sim_request r;
	const uint8_t *m;

	if (!on || len != sizeof(r) || !is_client(fd))
		return real_write(fd, buf, len);
	memcpy(&r, buf, sizeof(r));
	m = (const uint8_t *)r.mad;
	/* A GetResp of PortInfo, LID routed or directed route (IBA 13.4.3, 14.2.5.6) */
	if (m[0] == 1 && (m[1] == 0x01 || m[1] == 0x81) && m[3] == 0x81 && m[16] == 0 &&
	    m[17] == 0x15 && (m[PI_WIDTH_ENABLED] == 1) && m[PI_WIDTH_ACTIVE] == 1) {
		r.mad[PI_WIDTH_ENABLED] = 3;
		if (logf) {
			fprintf(logf, "lane-shim: PortInfo of port %u (modifier) says 1x or 4x "
				"enabled, 1x active\n", (unsigned int)m[23]);
			fflush(logf);
		}
	}
	return real_write(fd, &r, len);
}
