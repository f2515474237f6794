/* SPDX-License-Identifier: MIT */
/*
 * UTF-8, as the strings the IBA carries are (NodeDescription, IBA 14.2.5.2)
 * and as JSON wants them: the length of the valid sequence at s (at most n
 * bytes, n >= 1), 0 if there is none (overlong forms, surrogates, past
 * U+10FFFF); *cp gets its code point.
 */
#ifndef SMD_UTIL_UTF8_H
#define SMD_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

size_t utf8_len(const uint8_t *s, size_t n, uint32_t *cp);

#endif
