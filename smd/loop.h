/* SPDX-License-Identifier: MIT */
/*
 * The daemon's event loop (smd/loop.c): the one place smd waits. Every
 * input is an sd-event source and no handler computes for long; what does
 * (routing, saving, indexing a big model) runs on one worker thread.
 */
#ifndef SMD_LOOP_H
#define SMD_LOOP_H

#include <stdbool.h>

struct smd;
struct loop;
struct sweep_result;

struct loop_ops {
	/* SIGHUP: read the configuration again (main.c); the loop then sweeps */
	void (*reload)(struct smd *smd);
};

/*
 * Run until SIGTERM or SIGINT: the daemon. With smd->once, one heavy sweep
 * instead (no control socket, no signals of its own), its result in *res.
 * 0, or -errno when the loop could not be set up or failed; with once, the
 * sweep's own error.
 */
int loop_run(struct smd *smd, const struct loop_ops *ops, struct sweep_result *res);
/*
 * Run fn(arg) on the worker thread, then done(arg) on the loop, which then
 * moves the running sweep on. One job at a time: -EBUSY while one runs.
 * fn must not log, do I/O, or touch what the loop uses meanwhile.
 */
int loop_work(struct loop *lp, void (*fn)(void *arg), void (*done)(void *arg), void *arg);
/* Move the running sweep on again soon, after the loop served what waits */
void loop_kick(struct loop *lp);

#endif
