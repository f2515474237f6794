/* SPDX-License-Identifier: MIT */
/*
 * A configuration file read whole (smd's cabling plan, smctl plan check):
 * a regular file of at most a given size, so that a wrong path (a device,
 * a FIFO, a huge log) is refused instead of read forever.
 */
#ifndef SMD_UTIL_FILE_H
#define SMD_UTIL_FILE_H

#include <stddef.h>

/*
 * 0 with *text (malloc'd, NUL-terminated; it may hold NULs of its own:
 * *len counts every byte), or -errno with "path: reason" in err.
 */
int file_read_all(const char *path, size_t max, char **text, size_t *len, char *err,
		  size_t errlen);

/*
 * The path a configuration key names: file as it is when absolute or when
 * there is no configuration file, else relative to conf_path's directory.
 * 0, or -ENAMETOOLONG when it does not fit out.
 */
int file_path_near(const char *file, const char *conf_path, char *out, size_t len);

#endif
