/* SPDX-License-Identifier: MIT */
/*
 * Text from the fabric (node descriptions, ServiceNames, messages that
 * quote them) may hold any byte: what a terminal or a log line gets of it.
 */
#ifndef SMD_UTIL_TEXT_H
#define SMD_UTIL_TEXT_H

#include <stddef.h>

/* s with every byte outside printable ASCII as '?', cut to fit buf (len >= 1); returns buf */
const char *text_printable(const char *s, char *buf, size_t len);

#endif
