/* SPDX-License-Identifier: MIT */
/*
 * Lists of transaction slots kept in an array and linked by index (no
 * allocation per request), for txn.c and gmp.c. The owner has an array
 * "slots" of structs with uint32_t prev and next; a list is a struct with
 * uint32_t head and tail; SLOT_NONE ends them.
 */
#ifndef SMD_MAD_SLOT_LIST_H
#define SMD_MAD_SLOT_LIST_H

#include <stdint.h>

#define SLOT_NONE	UINT32_MAX

/* Defines list_unlink() and list_append() for OWNER (struct) and LIST (struct) */
#define SLOT_LIST_DEFINE(owner, list)						\
static void list_unlink(struct owner *t, struct list *l, uint32_t i)		\
{										\
	if (t->slots[i].prev != SLOT_NONE)					\
		t->slots[t->slots[i].prev].next = t->slots[i].next;		\
	else									\
		l->head = t->slots[i].next;					\
	if (t->slots[i].next != SLOT_NONE)					\
		t->slots[t->slots[i].next].prev = t->slots[i].prev;		\
	else									\
		l->tail = t->slots[i].prev;					\
	t->slots[i].prev = t->slots[i].next = SLOT_NONE;			\
}										\
										\
static void list_append(struct owner *t, struct list *l, uint32_t i)		\
{										\
	t->slots[i].prev = l->tail;						\
	t->slots[i].next = SLOT_NONE;						\
	if (l->tail != SLOT_NONE)						\
		t->slots[l->tail].next = i;					\
	else									\
		l->head = i;							\
	l->tail = i;								\
}

#endif
