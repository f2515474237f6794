/* SPDX-License-Identifier: MIT */
/*
 * Migrating from OpenSM (README: Migrating from OpenSM).
 *
 * import_opensm_conf(): an opensm.conf (what "opensm -c" writes, or a
 * hand-written one) into the equivalent smd.conf. Every OpenSM option with
 * a counterpart becomes its smd key, by meaning (routing engines, log
 * flags, QoS tables); every option without one is listed, with its value
 * and what smd does instead, in a comment at the top. Each value is checked
 * by smd's own key table (config_set), so the output passes `smd -n`.
 *
 * import_guid2lid_start(): opensm_guid2lid = FILE in smd.conf. While the
 * database has recorded no sweep (smd's first start on it), OpenSM's LID
 * cache becomes remembered LIDs for every GUID the database has none for.
 */
#ifndef SMD_IMPORT_OPENSM_H
#define SMD_IMPORT_OPENSM_H

#include <stddef.h>
#include <stdio.h>

struct smd;
struct smd_config;

/*
 * Translate the opensm.conf at path to out; unknown and malformed lines
 * are reported on err as "path:line: reason" (and in out's header).
 * 0: every line understood; 1: some were not (out is still complete);
 * -errno: the file could not be read (a message on err, nothing on out).
 */
int import_opensm_conf(const char *path, FILE *out, FILE *err);

/*
 * smd -n: the opensm_guid2lid file, when the key is set, exists and is
 * valid; 0, or -errno with "file:line: reason" in err
 */
int import_guid2lid_check(const struct smd_config *cfg, const char *config_path, char *err,
			  size_t errlen);
/*
 * At start, after the database is open: 0 (imported, or nothing to do),
 * or -errno after logging why smd must not start (the file is missing or
 * refused, or its LIDs clash with the database's): a subnet renumbered
 * by accident is what the key is there to prevent.
 */
int import_guid2lid_start(struct smd *smd);

#endif
