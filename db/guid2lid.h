/* SPDX-License-Identifier: MIT */
/*
 * OpenSM's LID cache, the "guid2lid" file in its cache directory
 * (/var/cache/opensm): one "0xPORTGUID 0xMINLID 0xMAXLID" line per endport
 * OpenSM gave LIDs to (blank lines between them). smd imports it as
 * remembered LIDs (store_lid_import()), so that a fabric whose ports lost
 * their LIDs comes back with the LIDs OpenSM gave it.
 *
 * The file is read whole and checked before anything uses it: every line,
 * every LID range (unicast, a power-of-two block aligned to its size, as
 * LMC makes it, IBA 7.11.1), no GUID twice, no LID given twice. One bad
 * line refuses the file, with its line number: nothing is half-imported.
 */
#ifndef SMD_DB_GUID2LID_H
#define SMD_DB_GUID2LID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topo/lid.h"

/* More entries than unicast LIDs cannot be a valid file */
#define GUID2LID_MAX_ENTRIES	LID_UCAST_MAX
/* OpenSM writes lines of some 40 bytes; its reader stops at 1024 */
#define GUID2LID_MAX_LINE	1024

struct guid2lid {
	struct lid_reservation *e;	/* in file order: guid, base LID, LMC */
	unsigned int *line;		/* the line each entry came from */
	size_t n;
};

/*
 * Read f (named name in messages): 0 and *out (free it with guid2lid_free),
 * or -errno with "name:line: reason" in err and *out empty.
 */
int guid2lid_read(FILE *f, const char *name, struct guid2lid *out, char *err, size_t errlen);
/* The same, from a file path */
int guid2lid_load(const char *path, struct guid2lid *out, char *err, size_t errlen);
void guid2lid_free(struct guid2lid *g);

#endif
