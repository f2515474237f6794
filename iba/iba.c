// SPDX-License-Identifier: MIT
/* The IBA's encodings and directed routes: pure functions, no byte order (iba.h) */
#include <errno.h>
#include <stdio.h>

#include "iba/iba.h"

int dr_path_extend(const struct dr_path *from, uint8_t port, struct dr_path *to)
{
	if (from->hops >= SMP_MAX_HOPS)
		return -E2BIG;
	if (to != from)
		*to = *from;
	to->hops = from->hops + 1;
	to->port[to->hops] = port;
	return 0;
}

int dr_path_format(const struct dr_path *p, char *buf, size_t len)
{
	size_t n = 0;
	int r;

	if (!len)
		return -EINVAL;
	buf[0] = 0;
	if (p->hops > SMP_MAX_HOPS)
		return -EINVAL;
	r = snprintf(buf, len, "0");
	n = r > 0 ? (size_t)r : 0;
	for (unsigned int i = 1; i <= p->hops && n < len; i++) {
		r = snprintf(buf + n, len - n, ",%u", p->port[i]);
		if (r < 0)
			return -EIO;
		n += (size_t)r;
	}
	return n < len ? 0 : -ENOSPC;
}

void gid_encode(uint64_t prefix, uint64_t guid, uint8_t gid[16])
{
	for (int i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
	}
}

void gid_decode(const uint8_t gid[16], uint64_t *prefix, uint64_t *guid)
{
	uint64_t p = 0, g = 0;

	for (int i = 0; i < 8; i++) {
		p = p << 8 | gid[i];
		g = g << 8 | gid[8 + i];
	}
	*prefix = p;
	*guid = g;
}

void iba_mgid_make(uint8_t flags, uint8_t scope, uint16_t signature, uint16_t pkey,
		   uint64_t group, uint8_t mgid[16])
{
	mgid[0] = 0xff;
	mgid[1] = (uint8_t)((flags & 0xf) << 4 | (scope & 0xf));
	mgid[2] = (uint8_t)(signature >> 8);
	mgid[3] = (uint8_t)signature;
	mgid[4] = (uint8_t)(pkey >> 8);
	mgid[5] = (uint8_t)pkey;
	mgid[6] = mgid[7] = 0;
	for (int i = 0; i < 8; i++)
		mgid[8 + i] = (uint8_t)(group >> (56 - 8 * i));
}

int iba_mgid_parse(const uint8_t mgid[16], uint8_t *flags, uint8_t *scope, uint16_t *signature)
{
	if (mgid[0] != 0xff)
		return -EINVAL;
	*flags = mgid[1] >> 4;
	*scope = mgid[1] & 0xf;
	*signature = (uint16_t)(mgid[2] << 8 | mgid[3]);
	return 0;
}

unsigned int mtu_to_bytes(uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

unsigned int vl_cap_to_count(uint8_t vl_cap)
{
	static const unsigned int n[] = { 0, 1, 2, 4, 8, 15 };

	return vl_cap < sizeof(n) / sizeof(n[0]) ? n[vl_cap] : 0;
}

/* IBA 15.2.5.16 rate codes 2..22 in units of 100 Mb/s */
static const uint16_t rate_dgbps[] = {
	[2] = 25, [3] = 100, [4] = 300, [5] = 50, [6] = 200, [7] = 400, [8] = 600, [9] = 800,
	[10] = 1200, [11] = 140, [12] = 560, [13] = 1120, [14] = 1680, [15] = 250, [16] = 1000,
	[17] = 2000, [18] = 3000, [19] = 280, [20] = 500, [21] = 4000, [22] = 6000,
};

unsigned int iba_rate_to_dgbps(uint8_t rate)
{
	return rate < sizeof(rate_dgbps) / sizeof(rate_dgbps[0]) ? rate_dgbps[rate] : 0;
}

uint8_t iba_rate_from_link(uint8_t width_active, uint8_t speed_active, uint8_t speed_ext_active)
{
	unsigned int lanes, lane_dgbps, total;
	uint8_t best = 2;

	/* PortInfo.LinkWidthActive (IBA 14.2.5.6): 1x, 4x, 8x, 12x, 2x */
	switch (width_active) {
	case 1: lanes = 1; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: lanes = 1; break;
	}
	/* LinkSpeedExtActive wins when set: FDR, EDR, HDR, NDR */
	switch (speed_ext_active) {
	case 1: lane_dgbps = 140; break;
	case 2: lane_dgbps = 250; break;
	case 4: lane_dgbps = 500; break;
	case 8: lane_dgbps = 1000; break;
	default:
		lane_dgbps = speed_active == 4 ? 100 : speed_active == 2 ? 50 : 25;
	}
	total = lanes * lane_dgbps;
	/* The fastest code not above the link's rate */
	for (uint8_t r = 2; r < sizeof(rate_dgbps) / sizeof(rate_dgbps[0]); r++)
		if (rate_dgbps[r] <= total && rate_dgbps[r] > rate_dgbps[best])
			best = r;
	return best;
}
