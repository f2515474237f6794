// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/log.h"
#include "util/macros.h"

static const char *log_ident = "smd";
static int log_level = LOG_LVL_INFO;
static int log_journal;		/* stderr is journald's: <N> prefixes, no time stamps */
static struct log_record *log_rec;

/*
 * systemd sets JOURNAL_STREAM=DEV:INODE for a service whose stderr goes to
 * the journal; a child of such a service with stderr elsewhere inherits it,
 * hence the check that stderr is still that stream (systemd.exec(5)).
 */
static int stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident, int level)
{
	log_ident = ident;
	log_level = level;
	log_journal = stderr_is_journal();
}

void log_record(struct log_record *rec)
{
	log_rec = rec;
	if (rec)
		rec->n = rec->total = 0;
}

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

static const struct {
	const char *name;
	int level;
} levels[] = {
	{ "error", LOG_LVL_ERR }, { "warning", LOG_LVL_WARNING },
	{ "notice", LOG_LVL_NOTICE },	{ "info", LOG_LVL_INFO }, { "debug", LOG_LVL_DEBUG },
};

int log_parse_level(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
		if (!strcasecmp(s, levels[i].name))
			return levels[i].level;
	if (!strcasecmp(s, "warn"))
		return LOG_LVL_WARNING;
	return -1;
}

const char *log_level_name(int level)
{
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
		if (levels[i].level == level)
			return levels[i].name;
	return "info";
}

/* err: 0, or an errno value (either sign) whose text ends the message */
static void log_vmsg(int level, int err, const char *fmt, va_list ap)
{
	char buf[1024];

	/* Problems are recorded even when log_level hides them */
	if (level > log_level && !(log_rec && level <= LOG_LVL_WARNING))
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (err) {
		size_t len = strlen(buf);

		snprintf(buf + len, sizeof(buf) - len, ": %s", strerror(err < 0 ? -err : err));
	}
	if (log_rec && level <= LOG_LVL_WARNING) {
		if (log_rec->n < LOG_RECORD_MAX) {
			char *m = log_rec->msg[log_rec->n++];
			size_t len = strnlen(buf, LOG_RECORD_LEN - 1);

			memcpy(m, buf, len);	/* cut, not an error */
			m[len] = 0;
		}
		log_rec->total++;
	}
	if (level > log_level)
		return;
	if (log_journal) {
		fprintf(stderr, "<%d>%s\n", level, buf);
	} else {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld %s[%s]: %s\n", when, ts.tv_nsec / 1000000, log_ident,
			level == LOG_LVL_ERR ? "error" : level == LOG_LVL_WARNING ? "warning" :
			level == LOG_LVL_NOTICE ? "notice" :
			level == LOG_LVL_INFO ? "info" : "debug", buf);
	}
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, 0, fmt, ap);
	va_end(ap);
}

int log_msg_errno(int level, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, err, fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}
