// SPDX-License-Identifier: MIT
#include "util/text.h"

const char *text_printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = 0;
	return buf;
}
