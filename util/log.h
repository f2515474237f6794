/* SPDX-License-Identifier: MIT */
/*
 * Log-level policy (smd.8 repeats it for operators):
 *   error   - considerable fallout: the subnet or part of it is not usable
 *   warning - something is wrong but smd repairs or routes around it
 *   notice  - a change of role: the SM state (master, standby) changed
 *   info    - a state change an operator could also see with smctl
 *   debug   - per-node and per-MAD detail, off by default
 * Only smd/ logs above debug; mad/, topo/ and db/ return -errno and let
 * the caller decide.
 */
#ifndef SMD_UTIL_LOG_H
#define SMD_UTIL_LOG_H

#include <stdarg.h>
#include <stdlib.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARNING = 4, LOG_LVL_NOTICE = 5,
		 LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

void log_init(const char *ident, int level);
void log_set_level(int level);
int log_get_level(void);
int log_parse_level(const char *s);
const char *log_level_name(int level);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * As log_msg, with ": <strerror(err)>" appended; err is an errno value of
 * either sign (r from a -errno function, or errno). Returns -|err|, so that
 * "return log_error_errno(r, ...);" logs and fails in one line.
 */
int log_msg_errno(int level, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The warnings and errors logged while recording, kept for smctl status
 * (the problems of the last sweep): the first LOG_RECORD_MAX, each cut to
 * LOG_RECORD_LEN bytes; total counts them all.
 */
#define LOG_RECORD_MAX	16
#define LOG_RECORD_LEN	200
struct log_record {
	unsigned int n, total;
	char msg[LOG_RECORD_MAX][LOG_RECORD_LEN];
};

/* Record into rec from now on (emptied first); NULL stops recording */
void log_record(struct log_record *rec);

#define log_error(...)	log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_notice(...)	log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)	do { if (log_get_level() >= LOG_LVL_DEBUG) \
				log_msg(LOG_LVL_DEBUG, __VA_ARGS__); } while (0)

#define log_error_errno(err, ...)	log_msg_errno(LOG_LVL_ERR, (err), __VA_ARGS__)
#define log_warn_errno(err, ...)	log_msg_errno(LOG_LVL_WARNING, (err), __VA_ARGS__)
#define log_notice_errno(err, ...)	log_msg_errno(LOG_LVL_NOTICE, (err), __VA_ARGS__)
#define log_info_errno(err, ...)	log_msg_errno(LOG_LVL_INFO, (err), __VA_ARGS__)
#define log_debug_errno(err, ...)	(log_get_level() >= LOG_LVL_DEBUG ?		\
					 log_msg_errno(LOG_LVL_DEBUG, (err), __VA_ARGS__) :	\
					 -abs(err))

#endif
