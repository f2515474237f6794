/* SPDX-License-Identifier: MIT */
/*
 * The daemon's side of the SA (smd/sa_owner.c): the SMPs the SA sends,
 * services kept in the database, Reports to subscribers.
 */
#ifndef SMD_SA_OWNER_H
#define SMD_SA_OWNER_H

#include "smd/smd.h"

/* Fill smd->sa_env's callbacks and load what the database keeps (after open_store) */
int sa_owner_init(struct smd *smd);

#endif
