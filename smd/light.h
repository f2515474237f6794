/* SPDX-License-Identifier: MIT */
/*
 * Light sweep: one SwitchInfo Get per known switch, to learn whether the
 * fabric changed since the last heavy sweep (IBA 14.2.5.4 PortStateChange)
 * without rediscovering it. It clears every PortStateChange it finds, so
 * a heavy sweep that follows sees every change made after that.
 */
#ifndef SMD_LIGHT_H
#define SMD_LIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "smd/smd.h"
#include "smd/sweep.h"

struct light_result {
	unsigned int switches;		/* asked */
	unsigned int changed;		/* PortStateChange set */
	unsigned int silent;		/* no answer */
	unsigned int differ;		/* answer not what smd programmed (reset) */
	unsigned int sets;		/* SwitchInfo Sets sent (to clear PortStateChange) */
	uint64_t smps;
	double seconds;
	char reason[200];		/* the first change found; "" = none */
};

/*
 * A light sweep without waiting: light_start submits its SMPs (res is filled
 * as they are answered), light_done says when every answer is in (or was
 * cancelled), light_end frees it and returns 0 or -errno (ENOMEM, or the
 * transport refused). light_start fails only when nothing was submitted.
 */
struct light;
struct sweep_progress;
int light_start(struct smd *smd, struct light_result *res, struct light **out);
bool light_done(const struct light *l);
int light_end(struct light *l);
/* What smctl status and STATUS= show while it runs */
void light_progress(const struct light *l, struct sweep_progress *p);

static inline bool light_changed(const struct light_result *r)
{
	return r->changed || r->silent || r->differ;
}

#endif
