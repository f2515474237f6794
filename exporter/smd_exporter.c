// SPDX-License-Identifier: MIT
/*
 * smd_exporter: serves smd's metrics to Prometheus over HTTP, so that smd
 * itself never holds a TCP socket (its sandbox allows unix sockets only).
 * Every scrape of /metrics asks smd `metrics` on its control socket (the
 * protocol of util/ctl_proto.h), within a timeout and a size bound, and
 * relays the text; when smd cannot be asked, or answers garbage, the
 * scrape still gets the exporter's own series, smd_up 0 among them.
 *
 * HTTP is libmicrohttpd's: one internal thread polls every connection, and
 * the handler of a scrape waits for smd (at most the timeout), so scrapes
 * are answered one at a time; slow or idle clients cost a connection slot
 * until MHD's timeout, never the thread.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "autoconfig.h"
#include "util/ctl_proto.h"
#include "util/log.h"
#include "util/metrics.h"

#define DEFAULT_LISTEN		":10150"
#define DEFAULT_TIMEOUT_MS	5000
/*
 * smd's answer is bounded: far above what the largest fabric's per-port
 * series need (some 100 bytes a sample), far below what would hurt
 * the host when smd (or whatever listens on the socket) sends garbage
 */
#define ANSWER_MAX		(256u << 20)
#define HTTP_CONNECTIONS_MAX	32
#define HTTP_IDLE_S		30
#define EXIT_USAGE		2

struct exporter {
	const char *socket;
	int timeout_ms;
	bool smd_was_up;		/* what the last scrape found, to log changes only */
	char last_err[256];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void __attribute__((format(printf, 3, 4))) seterr(char *err, size_t len,
							  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* poll fd for events until deadline; 1 ready, 0 timed out, -1 error (errno) */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		long long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n > 0)
			return 1;
	}
}

/* The start of the last line of buf[0..len) (which ends with '\n') */
static size_t last_line(const char *buf, size_t len)
{
	size_t i = len - 1;

	while (i > 0 && buf[i - 1] != '\n')
		i--;
	return i;
}

/* name[0..n) is the family, or a sample of it: name{... or name value */
static bool is_family(const char *name, size_t n, const char *family)
{
	size_t f = strlen(family);

	return n >= f && !memcmp(name, family, f) && (n == f || name[f] == ' ' || name[f] == '{');
}

/*
 * Relay only what looks like the format: text without NULs, every line a
 * comment or a sample, none of the exporter's own families (they would be
 * there twice)
 */
static bool answer_ok(const char *t, size_t len, char *err, size_t errlen)
{
	size_t i = 0;

	if (memchr(t, 0, len)) {
		seterr(err, errlen, "smd's answer holds a NUL byte");
		return false;
	}
	while (i < len) {
		const char *line = t + i, *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		const char *name = line;
		size_t nn = n;
		char c = line[0];

		if (!n || !(c == '#' || c == '_' || c == ':' || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z'))) {
			seterr(err, errlen, "smd's answer is not in the metrics format "
			       "(at byte %zu)", i);
			return false;
		}
		if (n >= 7 && (!memcmp(line, "# HELP ", 7) || !memcmp(line, "# TYPE ", 7))) {
			name += 7;
			nn -= 7;
		}
		if ((c != '#' || name != line) && (is_family(name, nn, "smd_up") ||
		    (nn >= 13 && !memcmp(name, "smd_exporter_", 13)))) {
			seterr(err, errlen, "smd's answer holds the exporter's own series");
			return false;
		}
		i += n + 1;
	}
	return true;
}

/*
 * Ask smd `metrics`: 0 with the exposition text in *text (malloc'd, *len
 * bytes), or -1 with the reason in err. Bounded in time (timeout_ms for
 * the whole exchange) and size (ANSWER_MAX).
 */
static int ask_smd(const struct exporter *ex, char **text, size_t *len, char *err,
		   size_t errlen)
{
	static const char req[] = "metrics\n";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long deadline = now_ms() + ex->timeout_ms;
	size_t off = 0, n = 0, cap = 0;
	char *buf = NULL;
	int fd, r;

	*text = NULL;
	*len = 0;
	if (strlen(ex->socket) >= sizeof(sa.sun_path)) {
		seterr(err, errlen, "%s: path too long", ex->socket);
		return -1;
	}
	memcpy(sa.sun_path, ex->socket, strlen(ex->socket) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		seterr(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		seterr(err, errlen, "cannot connect to smd on %s: %s%s", ex->socket, strerror(e),
		       e == EACCES ? " (see smd_exporter(8), ACCESS)" :
		       e == ENOENT || e == ECONNREFUSED ? " (smd is not running)" : "");
		goto fail;
	}
	while (off < sizeof(req) - 1) {
		ssize_t k;

		r = wait_fd(fd, POLLOUT, deadline);
		if (r <= 0) {
			if (r)
				seterr(err, errlen, "poll: %s", strerror(errno));
			else
				seterr(err, errlen, "smd took no request for %d ms", ex->timeout_ms);
			goto fail;
		}
		k = send(fd, req + off, sizeof(req) - 1 - off, MSG_NOSIGNAL);
		if (k < 0 && errno != EAGAIN && errno != EINTR) {
			seterr(err, errlen, "sending to smd: %s", strerror(errno));
			goto fail;
		}
		if (k > 0)
			off += (size_t)k;
	}
	/* The answer ends with a line "OK" or "ERROR: ..." (util/ctl_proto.h) */
	for (;;) {
		ssize_t k;
		size_t ll;

		if (n + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *p;

			if (cap >= ANSWER_MAX) {
				seterr(err, errlen, "smd's answer is over %u bytes", ANSWER_MAX);
				goto fail;
			}
			if (ncap > ANSWER_MAX)
				ncap = ANSWER_MAX;
			p = realloc(buf, ncap);
			if (!p) {
				seterr(err, errlen, "out of memory");
				goto fail;
			}
			buf = p;
			cap = ncap;
		}
		r = wait_fd(fd, POLLIN, deadline);
		if (r <= 0) {
			if (r)
				seterr(err, errlen, "poll: %s", strerror(errno));
			else
				seterr(err, errlen, "no whole answer from smd within %d ms",
				       ex->timeout_ms);
			goto fail;
		}
		k = recv(fd, buf + n, cap - n - 1, 0);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k < 0) {
			seterr(err, errlen, "reading from smd: %s", strerror(errno));
			goto fail;
		}
		if (k == 0) {
			seterr(err, errlen, "smd closed the connection before its answer ended");
			goto fail;
		}
		n += (size_t)k;
		if (buf[n - 1] != '\n')
			continue;
		ll = last_line(buf, n);
		if (n - ll == 3 && !memcmp(buf + ll, "OK\n", 3))
			break;
		if (n - ll >= 7 && !memcmp(buf + ll, "ERROR: ", 7)) {
			buf[n - 1] = 0;
			seterr(err, errlen, "smd: %.200s", buf + ll + 7);
			goto fail;
		}
	}
	close(fd);
	/* Drop "OK", then the status line (the protocol's, not the format's) */
	n = last_line(buf, n);
	if (!n || buf[n - 1] != '\n') {
		seterr(err, errlen, "smd's answer has no status line");
		goto fail_closed;
	}
	n = last_line(buf, n);
	if (strncmp(buf + n, "status: ", 8)) {
		seterr(err, errlen, "smd's answer has no status line");
		goto fail_closed;
	}
	if (!answer_ok(buf, n, err, errlen))
		goto fail_closed;
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
fail:
	close(fd);
fail_closed:
	free(buf);
	return -1;
}

/* One scrape's body: smd's text, then the exporter's own series */
static char *scrape(struct exporter *ex, size_t *len)
{
	long long t0 = now_ms();
	char err[256], *text, *body;
	size_t tlen = 0, olen;
	struct metrics m;
	bool up;

	up = ask_smd(ex, &text, &tlen, err, sizeof(err)) == 0;
	if (!up && (ex->smd_was_up || strcmp(err, ex->last_err)))
		log_warn("%s", err);
	else if (up && !ex->smd_was_up)
		log_info("smd answers on %s", ex->socket);
	if (!up)
		snprintf(ex->last_err, sizeof(ex->last_err), "%s", err);
	else
		ex->last_err[0] = 0;
	ex->smd_was_up = up;

	metrics_init(&m);
	metrics_family(&m, "smd_up", METRICS_GAUGE,
		       "1 when smd answered this scrape on its control socket, else 0");
	metrics_u64(&m, NULL, 0, up);
	metrics_family(&m, "smd_exporter_scrape_duration_seconds", METRICS_GAUGE,
		       "How long asking smd took for this scrape");
	metrics_double(&m, NULL, 0, (double)(now_ms() - t0) / 1000);
	olen = metrics_len(&m);
	body = metrics_text(&m) ? malloc(tlen + olen + 1) : NULL;
	if (body) {
		if (tlen)
			memcpy(body, text, tlen);
		memcpy(body + tlen, metrics_text(&m), olen + 1);
		*len = tlen + olen;
	}
	metrics_free(&m);
	free(text);
	return body;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int code, const char *type,
			       char *body, size_t len, bool must_free)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = MHD_create_response_from_buffer(len, body, must_free ? MHD_RESPMEM_MUST_FREE :
					       MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	r = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	static char landing[] =
		"<!DOCTYPE html>\n<html><head><title>smd exporter</title></head>\n"
		"<body><h1>smd exporter</h1>\n"
		"<p>The InfiniBand subnet manager smd's metrics: <a href=\"metrics\">/metrics</a>"
		"</p>\n</body></html>\n";
	static char not_found[] = "404 page not found: smd_exporter serves /metrics\n";
	static char not_allowed[] = "405 method not allowed: GET or HEAD\n";
	struct exporter *ex = cls;
	char *body;
	size_t len = 0;

	/* A request body is never read: the answer goes out at once */
	*upload_data_size = 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			       not_allowed, sizeof(not_allowed) - 1, false);
	if (!strcmp(url, "/"))
		return respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", landing,
			       sizeof(landing) - 1, false);
	if (strcmp(url, "/metrics"))
		return respond(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
			       sizeof(not_found) - 1, false);
	body = scrape(ex, &len);
	if (!body)
		return MHD_NO;	/* out of memory: MHD closes the connection */
	return respond(c, MHD_HTTP_OK, METRICS_CONTENT_TYPE, body, len, true);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	/* MHD says so about every client that misbehaves: not the operator's business */
	log_debug("http: %s", buf);
}

/* A listening socket on a, or -1 (errno) */
static int try_listen(const struct addrinfo *a, bool dual)
{
	int fd, one = 1, off = 0, e;

	fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::] takes IPv4 too (as ::ffff:a.b.c.d), whatever the sysctl's default */
	if (dual && a->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0)
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/*
 * HOST:PORT, [V6]:PORT or :PORT (every address: IPv6's any, which takes
 * IPv4 too, or IPv4's where there is no IPv6); port 0: one the kernel
 * picks (the log says which). Returns a listening socket, or -1.
 */
static int listen_on(const char *spec, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	static const char *const any[] = { "::", "0.0.0.0" };
	const char *colon = strrchr(spec, ':'), *h = spec;
	char host[256], port[8];
	int fd = -1, e = EADDRNOTAVAIL;
	size_t hl;
	char *end;
	long pn;

	if (!colon) {
		seterr(err, errlen, "'%s' is not HOST:PORT", spec);
		return -1;
	}
	errno = 0;
	pn = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || pn < 0 || pn > 65535) {
		seterr(err, errlen, "'%s': the port is not a number 0-65535", spec);
		return -1;
	}
	snprintf(port, sizeof(port), "%ld", pn);
	hl = (size_t)(colon - spec);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	} else if (memchr(h, ':', hl)) {
		seterr(err, errlen, "'%s': an IPv6 address goes in brackets, [ADDR]:PORT", spec);
		return -1;
	}
	if (hl >= sizeof(host)) {
		seterr(err, errlen, "'%s': host name too long", spec);
		return -1;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	/* A name may stand for several addresses: the first that binds serves */
	for (size_t i = 0; fd < 0 && i < (hl ? 1 : 2); i++) {
		struct addrinfo *res = NULL;
		int r = getaddrinfo(hl ? host : any[i], port, &hints, &res);

		if (r) {
			if (hl) {
				seterr(err, errlen, "'%s': %s", host, gai_strerror(r));
				return -1;
			}
			continue;
		}
		for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
			fd = try_listen(a, !hl);
			if (fd < 0)
				e = errno;
		}
		freeaddrinfo(res);
	}
	if (fd < 0)
		seterr(err, errlen, "cannot listen on %s: %s", spec, strerror(e));
	return fd;
}

/* "ADDR:PORT" of the socket, as bound */
static void sock_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[NI_MAXHOST], p[NI_MAXSERV];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: smd_exporter [OPTIONS]\n"
		"Serves smd's metrics to Prometheus at /metrics, asking smd on its control socket.\n\n"
		"  --web.listen-address=HOST:PORT  where to serve HTTP (default " DEFAULT_LISTEN
		": every\n"
		"                                  address; [ADDR]:PORT for IPv6; port 0: any free)\n"
		"  --control-socket=PATH           smd's control socket (default "
		CONTROL_DEFAULT_PATH ")\n"
		"  --control-timeout=SECONDS       how long a scrape waits for smd (default %d,\n"
		"                                  0.1-60)\n"
		"  --log.level=LEVEL               error, warning, notice, info (default), debug\n"
		"  -h, --help                      this text\n"
		"  -V, --version                   print the version\n",
		DEFAULT_TIMEOUT_MS / 1000);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "web.listen-address", required_argument, NULL, 'l' },
		{ "control-socket", required_argument, NULL, 's' },
		{ "control-timeout", required_argument, NULL, 't' },
		{ "log.level", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct exporter ex = { .socket = CONTROL_DEFAULT_PATH, .timeout_ms = DEFAULT_TIMEOUT_MS,
			       .smd_was_up = true };
	const char *listen_spec = DEFAULT_LISTEN;
	struct MHD_Daemon *d;
	char err[512], name[NI_MAXHOST + NI_MAXSERV + 4];
	sigset_t sigs;
	int c, fd, sig, level;
	double t;
	char *end;

	log_init("smd_exporter", LOG_LVL_INFO);
	while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_spec = optarg;
			break;
		case 's':
			if (!*optarg) {
				fprintf(stderr, "smd_exporter: --control-socket: empty path\n");
				return EXIT_USAGE;
			}
			ex.socket = optarg;
			break;
		case 't':
			errno = 0;
			t = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(t >= 0.1 && t <= 60)) {
				fprintf(stderr, "smd_exporter: --control-timeout: '%s' is not a "
					"number of seconds, 0.1 to 60\n", optarg);
				return EXIT_USAGE;
			}
			ex.timeout_ms = (int)(t * 1000);
			break;
		case 'L':
			level = log_parse_level(optarg);
			if (level < 0) {
				fprintf(stderr, "smd_exporter: --log.level: unknown level '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			log_set_level(level);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("smd_exporter %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "smd_exporter: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strlen(ex.socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "smd_exporter: --control-socket: path too long\n");
		return EXIT_USAGE;
	}
	fd = listen_on(listen_spec, err, sizeof(err));
	if (fd < 0) {
		log_error("%s", err);
		return EXIT_FAILURE;
	}
	/* Blocked before MHD's thread starts, so that only sigwait() below takes them */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
			     on_request, &ex,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNECTIONS_MAX,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
			     MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
			     MHD_OPTION_END);
	if (!d) {
		log_error("cannot start the HTTP server on %s", listen_spec);
		close(fd);
		return EXIT_FAILURE;
	}
	sock_name(fd, name, sizeof(name));
	log_info("listening on %s, asking smd on %s", name, ex.socket);
	do {
		if (sigwait(&sigs, &sig))
			break;
		if (sig == SIGHUP)
			log_info("SIGHUP: nothing to reload (the exporter has no configuration file)");
	} while (sig == SIGHUP);
	log_info("stopping (signal %d)", sig);
	MHD_stop_daemon(d);	/* closes the listening socket too */
	return 0;
}
