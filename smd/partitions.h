/* SPDX-License-Identifier: MIT */
/*
 * Partitions in the daemon: the partitions.conf file smd.conf names
 * (partition_config), read at start, on SIGHUP and on smctl resweep
 * --heavy, checked whole before anything is applied; what smd -nv prints;
 * the smctl partitions view. The syntax and the rules are topo/part.h's.
 */
#ifndef SMD_PARTITIONS_H
#define SMD_PARTITIONS_H

#include <stddef.h>
#include <stdio.h>

#include "smd/config.h"
#include "topo/part.h"

struct smd;

/*
 * The partitions cfg asks for: its partition_config file (a relative path
 * is taken from the directory of conf_path, smd.conf), or without one
 * OpenSM's default (Default=0x7fff,ipoib : ALL=full, the group as ipoib*
 * say). 0, or -errno with "file:line: reason" in err.
 */
int partitions_load(const struct smd_config *cfg, const char *conf_path, struct part_conf **out,
		    char *err, size_t errlen);
/* c in partitions.conf syntax, every line after prefix (smd -nv: "# ") */
void partitions_print(const struct part_conf *c, FILE *out, const char *prefix);
/*
 * Read the partitions again (why: "SIGHUP", ...). A file with an error
 * changes nothing (logged); otherwise the new partitions are in force for
 * the next sweep and their multicast groups exist. 0 or -errno.
 */
int partitions_reload(struct smd *smd, const char *why);
struct json;

/*
 * smctl partitions: one line per partition with its ports, or with which
 * (a P_Key or a name) the members of that one. emit prints one line; with
 * j, the same goes into j's open object as members ("file", "partitions",
 * "members") instead. 0, -ENOENT (no such partition) or -ENOMEM.
 */
int partitions_show(const struct smd *smd, const char *which,
		    void (*emit)(void *ctx, const char *fmt, ...), void *ctx, struct json *j);

#endif
