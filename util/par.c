// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "util/par.h"

static atomic_uint par_set;	/* 0: not set */

static unsigned int cpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : (unsigned int)n;
}

unsigned int par_threads(void)
{
	unsigned int n = atomic_load(&par_set);

	if (!n)
		n = cpus();
	return n > PAR_MAX ? PAR_MAX : n;
}

void par_set_threads(unsigned int n)
{
	atomic_store(&par_set, n);
}

unsigned int par_workers(size_t n, size_t chunk)
{
	size_t chunks = chunk ? (n + chunk - 1) / chunk : 0;
	unsigned int t = par_threads();

	if (chunks < t)
		t = (unsigned int)chunks;
	return t ? t : 1;
}

struct par_job {
	size_t n, chunk;
	void (*fn)(void *arg, unsigned int worker, size_t begin, size_t end);
	void *arg;
	atomic_size_t next;		/* the next chunk's first item */
};

struct par_worker {
	struct par_job *job;
	unsigned int id;
	pthread_t thread;
};

static void par_take(struct par_job *job, unsigned int id)
{
	for (;;) {
		size_t b = atomic_fetch_add(&job->next, job->chunk), e;

		if (b >= job->n)
			return;
		e = job->n - b < job->chunk ? job->n : b + job->chunk;
		job->fn(job->arg, id, b, e);
	}
}

static void *par_main(void *arg)
{
	struct par_worker *w = arg;

	par_take(w->job, w->id);
	return NULL;
}

void par_for(size_t n, size_t chunk, void (*fn)(void *arg, unsigned int worker, size_t begin,
						 size_t end),
	     void *arg)
{
	struct par_job job = { .n = n, .chunk = chunk ? chunk : 1, .fn = fn, .arg = arg };
	struct par_worker w[PAR_MAX];
	unsigned int nw = par_workers(n, job.chunk), started = 0;

	atomic_init(&job.next, 0);
	/* Helpers 1 .. nw - 1; one that cannot start leaves its share to the others */
	for (unsigned int i = 1; i < nw; i++) {
		w[started] = (struct par_worker){ .job = &job, .id = i };
		if (pthread_create(&w[started].thread, NULL, par_main, &w[started]) == 0)
			started++;
	}
	par_take(&job, 0);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
}
