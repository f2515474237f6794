// SPDX-License-Identifier: MIT
/*
 * smctl commands the running daemon answers over its control socket
 * (protocol in smd/control.h): status, resweep, check-routes, sm-enable.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/ctl_proto.h"
#include "util/json.h"
#include "ctl/smctl.h"

#define ANSWER_MAX	(4u << 20)

/* The last failure said on stderr, for the JSON answer's "error" */
static char last_error[512];

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	fprintf(stderr, "smctl: %s\n", last_error);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_smd(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fail("%s: socket path too long", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fail("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	e = errno;
	close(fd);
	if (e == ENOENT)
		fail("smd is not running: no control socket %s "
			"(start smd, or give its socket with --socket PATH)", path);
	else if (e == ECONNREFUSED)
		fail("smd is not running: nobody answers on %s", path);
	else if (e == EACCES || e == EPERM)
		fail("%s: %s (the control socket is for root and "
			"control_group)", path, strerror(e));
	else if (e == EAGAIN)
		fail("smd on %s is busy, try again", path);
	else
		fail("cannot connect to smd on %s: %s", path, strerror(e));
	return -1;
}

/*
 * Send one request and read its answer up to the OK or ERROR line.
 * Returns 0 with the data lines in *out (malloc'd, NUL-terminated), 1 when
 * smd answered ERROR (said on stderr), -1 on any other failure (said too).
 */
static int request(const char *path, const char *req, int timeout_s, char **out)
{
	size_t len = 0, cap = 4096, off = 0, reqlen = strlen(req);
	long long deadline = now_ms() + (long long)timeout_s * 1000;
	char *buf = NULL;
	int fd, r = -1;

	*out = NULL;
	fd = connect_smd(path);
	if (fd < 0)
		return -1;
	buf = malloc(cap);
	if (!buf) {
		fail("out of memory");
		goto out;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = off < reqlen ? POLLOUT : POLLIN };
		long long left = deadline - now_ms();
		char *line, *end;
		ssize_t n;

		if (left <= 0) {
			fail("no answer from smd within %d s", timeout_s);
			goto out;
		}
		n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (n < 0 && errno != EINTR) {
			fail("poll: %s", strerror(errno));
			goto out;
		}
		if (n <= 0)
			continue;
		if (off < reqlen) {
			n = send(fd, req + off, reqlen - off, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				fail("sending to smd: %s", strerror(errno));
				goto out;
			}
			if (n > 0)
				off += (size_t)n;
			continue;
		}
		if (len + 1 >= cap) {
			char *p;

			if (cap >= ANSWER_MAX) {
				fail("the answer is too long");
				goto out;
			}
			p = realloc(buf, cap * 2);
			if (!p) {
				fail("out of memory");
				goto out;
			}
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fail("reading from smd: %s", strerror(errno));
			goto out;
		}
		if (n == 0) {
			fail("smd closed the connection before it answered");
			goto out;
		}
		len += (size_t)n;
		buf[len] = 0;
		/* The answer ends with a line "OK" or "ERROR: ..." */
		if (len == 0 || buf[len - 1] != '\n')
			continue;
		buf[len - 1] = 0;
		end = strrchr(buf, '\n');
		line = end ? end + 1 : buf;
		if (!strcmp(line, "OK")) {
			*line = 0;
			*out = buf;
			buf = NULL;
			r = 0;
			goto out;
		}
		if (!strncmp(line, "ERROR: ", 7)) {
			fail("smd: %s", line + 7);
			r = 1;
			goto out;
		}
		buf[len - 1] = '\n';
	}
out:
	free(buf);
	close(fd);
	return r;
}

/* Options of the daemon commands: --socket PATH, --timeout SECONDS, [--heavy] */
static int parse_opts(struct smctl_ctx *ctx, int argc, char **argv, const char *use,
		      bool *heavy, int *timeout_s)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "heavy", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:t:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			ctx->json = true;
			break;
		case 's':
			ctx->socket = optarg;
			break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > 86400) {
				fprintf(stderr, "smctl %s: bad timeout '%s' (1-86400 s)\n",
					argv[0], optarg);
				return -1;
			}
			*timeout_s = (int)v;
			break;
		case 'H':
			if (!heavy)
				goto usage;
			*heavy = true;
			break;
		case 'h':
			printf("Usage: smctl %s %s\n", argv[0], use);
			return 1;
		default:
			goto usage;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smctl %s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -1;
	}
	return 0;
usage:
	fprintf(stderr, "Usage: smctl %s %s\n", argv[0], use);
	return -1;
}

/*
 * The answer's status ("ok", "down", "problems"): the line "status: X" of a
 * text answer, the first member of a JSON one. Its exit status: 0 for ok.
 */
static int answer_exit(const char *answer, bool json)
{
	static const char jkey[] = "{\"status\":\"" CONTROL_STATUS_OK "\"",
			  tline[] = "status: " CONTROL_STATUS_OK;

	if (json)
		return strncmp(answer, jkey, sizeof(jkey) - 1) ? 1 : 0;
	for (const char *p = answer; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, tline, sizeof(tline) - 1) &&
		    (p[sizeof(tline) - 1] == '\n' || !p[sizeof(tline) - 1]))
			return 0;
	return 1;
}

/* The JSON answer when smd could not be asked or said ERROR */
static void json_error(void)
{
	struct json j;
	const char *t;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "error");
	json_str(&j, "error", last_error);
	json_obj_end(&j);
	t = json_text(&j);
	if (t)
		printf("%s\n", t);
	json_free(&j);
}

/* Ask smd (cmd without its newline), print the answer, return the exit status */
static int ask(struct smctl_ctx *ctx, const char *cmd, int timeout_s)
{
	char req[128], *answer;
	int r;

	snprintf(req, sizeof(req), "%s%s\n", cmd, ctx->json ? " --json" : "");
	r = request(ctx->socket, req, timeout_s, &answer);
	if (r) {
		if (ctx->json)
			json_error();
		return 1;
	}
	fputs(answer, stdout);
	r = answer_exit(answer, ctx->json);
	free(answer);
	return r;
}

int smctl_status(struct smctl_ctx *ctx, int argc, char **argv)
{
	int timeout_s = 30, r;

	/* With a database named, the last sweep it holds: no daemon needed */
	if (ctx->db_given)
		return smctl_status_db(ctx, argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--db") || !strcmp(argv[i], "-d") ||
		    !strncmp(argv[i], "--db=", 5))
			return smctl_status_db(ctx, argc, argv);
	r = parse_opts(ctx, argc, argv, "[--json] [--socket PATH] [--timeout S] | --db FILE",
		       NULL, &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	return ask(ctx, "status", timeout_s);
}

int smctl_resweep(struct smctl_ctx *ctx, int argc, char **argv)
{
	int timeout_s = 600, r;
	bool heavy = false;

	r = parse_opts(ctx, argc, argv, "[--heavy] [--json] [--socket PATH] [--timeout S]",
		       &heavy, &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	return ask(ctx, heavy ? "resweep --heavy" : "resweep", timeout_s);
}

int smctl_sm_enable(struct smctl_ctx *ctx, int argc, char **argv)
{
	int timeout_s = 30, r;

	r = parse_opts(ctx, argc, argv, "[--json] [--socket PATH] [--timeout S]", NULL,
		       &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	return ask(ctx, "sm-enable", timeout_s);
}

int smctl_check_routes(struct smctl_ctx *ctx, int argc, char **argv)
{
	int timeout_s = 30, r;

	r = parse_opts(ctx, argc, argv, "[--json] [--socket PATH] [--timeout S]", NULL,
		       &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	return ask(ctx, "check-routes", timeout_s);
}

int smctl_partitions(struct smctl_ctx *ctx, int argc, char **argv)
{
	const char *which = NULL;
	int timeout_s = 30, r;
	char cmd[96];

	/* One P_Key or name may follow the options */
	if (argc >= 2 && argv[argc - 1][0] != '-' &&
	    (argc == 2 || (strcmp(argv[argc - 2], "--socket") && strcmp(argv[argc - 2], "-s") &&
			   strcmp(argv[argc - 2], "--timeout") && strcmp(argv[argc - 2], "-t")))) {
		which = argv[argc - 1];
		argc--;
	}
	r = parse_opts(ctx, argc, argv, "[--json] [--socket PATH] [--timeout S] [P_KEY|NAME]",
		       NULL, &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	if (which && (strlen(which) > 64 || strpbrk(which, " \t\r\n"))) {
		fprintf(stderr, "smctl partitions: bad partition '%s'\n", which);
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "partitions%s%s", which ? " " : "", which ? which : "");
	return ask(ctx, cmd, timeout_s);
}

int smctl_cabling(struct smctl_ctx *ctx, int argc, char **argv)
{
	int timeout_s = 30, r;

	r = parse_opts(ctx, argc, argv, "[--json] [--socket PATH] [--timeout S]", NULL,
		       &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	return ask(ctx, "cabling", timeout_s);
}

int smctl_health(struct smctl_ctx *ctx, int argc, char **argv)
{
	int timeout_s = 30, r;

	r = parse_opts(ctx, argc, argv, "[--json] [--socket PATH] [--timeout S]", NULL,
		       &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	return ask(ctx, "health", timeout_s);
}

/* port enable GUID PORT: the answer comes when the sweep that routes with the link ended */
int smctl_port(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const char use[] = "enable GUID PORT [--json] [--socket PATH] [--timeout S]";
	unsigned long long guid;
	unsigned long port;
	int timeout_s = 600, r;
	char cmd[96], *end;

	if (argc < 4 || strcmp(argv[1], "enable")) {
		fprintf(stderr, "Usage: smctl port %s\n", use);
		return 2;
	}
	errno = 0;
	guid = strtoull(argv[2], &end, 0);
	if (errno || *end || end == argv[2] || !guid) {
		fprintf(stderr, "smctl port enable: bad GUID '%s'\n", argv[2]);
		return 2;
	}
	errno = 0;
	port = strtoul(argv[3], &end, 0);
	if (errno || *end || end == argv[3] || port < 1 || port > 254) {
		fprintf(stderr, "smctl port enable: bad port '%s' (1-254)\n", argv[3]);
		return 2;
	}
	/* The options after GUID and PORT, parsed as the other commands' */
	argv[3] = argv[0];
	r = parse_opts(ctx, argc - 3, argv + 3, use, NULL, &timeout_s);
	if (r)
		return r < 0 ? 2 : 0;
	snprintf(cmd, sizeof(cmd), "port enable 0x%016llx %lu", guid, port);
	return ask(ctx, cmd, timeout_s);
}
