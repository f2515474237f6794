// SPDX-License-Identifier: MIT
/*
 * The SA's input, fair among requesting ports. The daemon hands every SA
 * MAD to sa_submit() as it reads it and lets sa_drain() answer them: one
 * MAD of each port that has any, in turn, for as long as its time slice
 * lasts. A port's own MADs keep their order. A request is not free to
 * answer (a NodeRecord Get by GUID on 8,192 hosts costs about 1 ms), so
 * answering in arrival order let one host that sends fast enough take the
 * whole SA: every other client waited behind its queue, and on a real HCA
 * lost MADs from the full receive queue. Now such a host gets its share
 * and the MADs it sends past SA_QUEUE_PER_PORT waiting ones are dropped as
 * they are read (it retries, as after any loss); a lone client still gets
 * all of the SA's time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"

#define SA_QUEUE_MAX		4096	/* MADs waiting, all ports */
#define SA_QUEUE_PER_PORT	SA_QUEUE_PER_PORT_MAX	/* ... from one port */
#define SA_Q_NONE		UINT16_MAX

struct sa_qent {
	uint8_t mad[MAD_SIZE];
	uint16_t len;
	uint16_t next;			/* the port's next, or the free list's */
	struct mad_addr from;
};

struct sa_queue {
	struct sa_qent ent[SA_QUEUE_MAX];
	uint16_t free;			/* free list head */
	unsigned int fresh;		/* entries never used yet: ent[fresh..] */
	unsigned int used;
	/* Ports with MADs waiting, served in turn from turn */
	uint16_t active[SA_QUEUE_MAX];
	unsigned int nactive, turn;
	/* Per port (its base LID): first and last waiting, how many */
	struct {
		uint16_t head, tail;
		uint8_t n;
	} *port;
};

static struct sa_queue *queue_of(struct sa *sa)
{
	struct sa_queue *q = sa->queue;

	if (q)
		return q;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->port = calloc(LID_UCAST_MAX + 1, sizeof(*q->port));
	if (!q->port) {
		free(q);
		return NULL;
	}
	/* (entries are taken from ent[fresh..] first: pages not touched until needed) */
	q->free = SA_Q_NONE;
	sa->queue = q;
	return q;
}

void sa_queue_free(struct sa *sa)
{
	if (!sa->queue)
		return;
	free(sa->queue->port);
	free(sa->queue);
	sa->queue = NULL;
}

int sa_submit(struct sa *sa, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	struct sa_queue *q = queue_of(sa);
	uint16_t owner = sa_owner_of(sa, from->slid), k;
	struct sa_qent *e;

	if (!q) {
		/* No memory for the queue: answer now, as without one */
		sa_handle(sa, mad, len, from);
		return 0;
	}
	if (len > MAD_SIZE || q->port[owner].n >= SA_QUEUE_PER_PORT ||
	    (q->free == SA_Q_NONE && q->fresh == SA_QUEUE_MAX)) {
		sa->stats.shed++;
		sa->stats.shed_lid = from->slid;
		return -ENOBUFS;
	}
	if (q->free != SA_Q_NONE) {
		k = q->free;
		q->free = q->ent[k].next;
	} else {
		k = (uint16_t)q->fresh++;
	}
	e = &q->ent[k];
	memcpy(e->mad, mad, len);
	e->len = (uint16_t)len;
	e->from = *from;
	e->next = SA_Q_NONE;
	if (q->port[owner].n++) {
		q->ent[q->port[owner].tail].next = k;
	} else {
		q->port[owner].head = k;
		q->active[q->nactive++] = owner;
	}
	q->port[owner].tail = k;
	q->used++;
	return 0;
}

size_t sa_drain(struct sa *sa, uint64_t slice_us)
{
	struct sa_queue *q = sa->queue;
	uint64_t t0 = sa_clock(sa);

	while (q && q->nactive) {
		uint16_t owner, k;
		struct sa_qent e;

		if (q->turn >= q->nactive)
			q->turn = 0;
		owner = q->active[q->turn];
		k = q->port[owner].head;
		/* Off the queue before it is answered: answering may submit more */
		e = q->ent[k];
		q->port[owner].head = e.next;
		q->ent[k].next = q->free;
		q->free = k;
		q->used--;
		if (--q->port[owner].n)
			q->turn++;
		else
			q->active[q->turn] = q->active[--q->nactive];
		sa_handle(sa, e.mad, e.len, &e.from);
		/* At least one answered per call, then as many as the slice takes */
		if (sa_clock(sa) - t0 >= slice_us)
			break;
	}
	return q ? q->used : 0;
}
