/* SPDX-License-Identifier: MIT */
/*
 * The cabling plan in the daemon (issue 21): the file smd.conf names
 * (cabling_plan), read at start and on SIGHUP; a file that cannot be read
 * or parsed never stops smd: the plan in force stays (none at start), the
 * error is logged and shown. Each heavy sweep compares the fabric it found
 * with the plan before routing (its "cabling" phase, topo/plan.h) and, with
 * cabling_enforce, fences the wrong switch-to-switch links; the report of
 * the model in force is what smctl cabling, status and STATUS= show, and
 * the log says it once per change.
 */
#ifndef SMD_CABLING_H
#define SMD_CABLING_H

#include <stddef.h>
#include <stdint.h>

#include "smd/config.h"
#include "topo/plan.h"

struct smd;
struct json;
struct status_cabling;

/* At start: the plan cfg names, if any (errors are logged: smd runs without it) */
int cabling_init(struct smd *smd);
void cabling_free(struct smd *smd);
/* SIGHUP: the plan again (or none), or the one in force stays; why says who asked */
void cabling_reload(struct smd *smd, const char *why);
/*
 * smd -n: read and parse the plan cfg names (relative paths from the
 * directory of conf_path); 0 (also without a plan), or -errno with the
 * reason in err. Sets *nodes and *cables.
 */
int cabling_check(const struct smd_config *cfg, const char *conf_path, size_t *nodes,
		  size_t *cables, char *err, size_t errlen);

/*
 * The plan a sweep compares with, NULL when none is in force. It is not
 * replaced while a sweep runs (SIGHUP waits for the sweep), so the worker
 * may read it.
 */
const struct plan *cabling_plan(const struct smd *smd);
/*
 * The sweep's model is in force now: its report (NULL: it was not
 * compared) becomes the daemon's, and the log hears of it when the list
 * of mismatches changed. Takes r.
 */
void cabling_adopt(struct smd *smd, struct plan_report *r, uint64_t sweep, bool enforced);

void cabling_status_fill(const struct smd *smd, struct status_cabling *s);
/*
 * smctl cabling: the plan, its state and every mismatch listed, one line
 * each through emit, or into j's open object. The answer's status word
 * is returned (ok, problems, or status_word's while nothing is compared).
 */
const char *cabling_show(const struct smd *smd, void (*emit)(void *ctx, const char *fmt, ...),
			 void *ctx, struct json *j);

#endif
