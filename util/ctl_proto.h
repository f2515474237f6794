/* SPDX-License-Identifier: MIT */
/*
 * The control socket's protocol, what smd (smd/control.c) and smctl
 * (ctl/smctl_ctl.c) share; smctl(8) documents it for other clients.
 *
 * A request is one line of text, a command and its arguments separated by
 * blanks, at most CONTROL_LINE_MAX bytes with the newline. The answer is
 * zero or more data lines, each "key: value" or indented, the last
 * "status: ok|down|problems" (what smctl's exit status comes from), then
 * one line that is either "OK" or "ERROR: reason". With --json among the
 * arguments the data is one line, a JSON object whose first member is
 * "status". A connection may carry several requests, one after the other.
 */
#ifndef SMD_UTIL_CTL_PROTO_H
#define SMD_UTIL_CTL_PROTO_H

#define CONTROL_LINE_MAX	512
#define CONTROL_DEFAULT_PATH	"/run/smd/control"

/* The answer's status word: ok (smctl exits 0), down or problems (1) */
#define CONTROL_STATUS_OK		"ok"
#define CONTROL_STATUS_DOWN		"down"
#define CONTROL_STATUS_PROBLEMS		"problems"

#endif
