/* SPDX-License-Identifier: MIT */
/*
 * The tables ports hold that the model does not know yet (issue 23): read
 * once a sweep's model is served, so that the SA answers SL2VLTableRecord,
 * VLArbitrationTableRecord and P_KeyTableRecord from the model, never with
 * an SMP at query time, and the subnet is not brought up later for it.
 */
#ifndef SMD_VLREAD_H
#define SMD_VLREAD_H

#include <stdbool.h>

#include "smd/smd.h"

/*
 * Read what smd->fabric does not know of its ports' SL-to-VL, VL
 * arbitration and P_Key tables (a new or reset node's that smd did not
 * write), a window of SMPs at a time; logs what it read when done. 0 or
 * -ENOMEM.
 */
int vlread_start(struct smd *smd);
/* The model is about to change (a sweep starts, the SA stops): read no more into it */
void vlread_stop(struct smd *smd);
/* Tables are being read: the SA answers BUSY for those not known yet */
bool vlread_busy(const struct smd *smd);
void vlread_free(struct smd *smd);

#endif
