/* SPDX-License-Identifier: MIT */
/* Small helpers every file may use */
#ifndef SMD_UTIL_MACROS_H
#define SMD_UTIL_MACROS_H

/* The number of elements of an array (not of a pointer: the compiler says so) */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]) + \
			 0 * sizeof(struct { int _[1 - 2 * __builtin_types_compatible_p( \
				 __typeof__(a), __typeof__(&(a)[0]))]; }))

#endif
