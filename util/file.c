// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"

int file_read_all(const char *path, size_t max, char **text, size_t *len, char *err,
		  size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int fd, r = 0;

	*text = NULL;
	*len = 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((unsigned long long)st.st_size > max) {
		r = -EFBIG;
		snprintf(err, errlen, "%s: larger than %zu MiB (%lld bytes)", path, max >> 20,
			 (long long)st.st_size);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* The file may change under us: never past what was allocated */
	while (n < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = 0;
out:
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*text = buf;
	*len = n;
	return 0;
}

int file_path_near(const char *file, const char *conf_path, char *out, size_t len)
{
	const char *slash = conf_path ? strrchr(conf_path, '/') : NULL;
	int n;

	if (file[0] == '/' || !slash)
		n = snprintf(out, len, "%s", file);
	else
		n = snprintf(out, len, "%.*s/%s", (int)(slash - conf_path), conf_path, file);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
