// SPDX-License-Identifier: MIT
/*
 * umad2sim_guard.c - preloaded before libumad2sim.so into every simulator
 * client (tests/sim/simlib.sh builds it in sim_start).
 *
 * umad2sim 0.10 starts its receiver thread as soon as a client connects to
 * ibsim. A MAD that arrives before the client has registered an agent for
 * its class has no queue: the thread then locks the mutex of a NULL queue
 * (an address of a few dozen bytes) and the client dies of SIGSEGV before
 * its main() has sent anything. Such MADs are ordinary on a real fabric: an
 * RMPP sender retransmits the last segment when the receiver's final ACK
 * was lost (and ibsim loses the last MAD a client writes before it exits),
 * and the retransmission reaches whatever process next opens that port. The
 * kernel drops a MAD for an unregistered agent; here we make umad2sim do the
 * same: the lock of such an impossible address fails, the thread finds no
 * queue, logs and frees the MAD, and the unlock fails too.
 *
 * Nothing else changes: every other lock goes to glibc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

typedef int (*lock_fn)(pthread_mutex_t *);

/*
 * glibc's own functions, from libc.so.6 itself: RTLD_NEXT would find
 * AddressSanitizer's interceptors, which cannot be called while ASan is
 * still initialising (its own first locks come here too).
 */
static lock_fn libc_fn(const char *name)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	return libc ? (lock_fn)(uintptr_t)dlsym(libc, name) : 0;
}

/* No object lives in the first page: a pointer there is a NULL struct's member */
static int bogus(const void *p)
{
	return (uintptr_t)p < 4096;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	static lock_fn real;

	if (bogus(m))
		return EINVAL;
	if (!real)
		real = libc_fn("pthread_mutex_lock");
	return real ? real(m) : EINVAL;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	static lock_fn real;

	if (bogus(m))
		return EINVAL;
	if (!real)
		real = libc_fn("pthread_mutex_unlock");
	return real ? real(m) : EINVAL;
}
