/* SPDX-License-Identifier: MIT */
/*
 * Work spread over threads: a loop over items cut in chunks that the
 * calling thread and up to par_threads() - 1 helpers take in turn. Callers
 * keep results independent of the spreading (each item's work writes only
 * its own outputs, merges are in item order or order-free), so that one
 * thread and many compute the same thing.
 */
#ifndef SMD_UTIL_PAR_H
#define SMD_UTIL_PAR_H

#include <stddef.h>

/* Most threads a loop uses */
#define PAR_MAX		64

/*
 * Threads a loop may use: set by par_set_threads (0: the CPUs this process
 * may run on, at most PAR_MAX), never below 1.
 */
unsigned int par_threads(void);
void par_set_threads(unsigned int n);

/*
 * How many workers par_for(n, chunk, ...) would start at most: the
 * callers' scratch per worker. At least 1.
 */
unsigned int par_workers(size_t n, size_t chunk);

/*
 * fn(arg, worker, begin, end) for every chunk [begin, end) of [0, n), chunk
 * items each (the last may be shorter), spread over up to par_workers(n,
 * chunk) workers numbered from 0 (the caller is worker 0); returns when
 * every chunk is done. A worker whose thread cannot be started is done by
 * the others. The helpers inherit the caller's signal mask.
 */
void par_for(size_t n, size_t chunk, void (*fn)(void *arg, unsigned int worker, size_t begin,
						 size_t end),
	     void *arg);

#endif
