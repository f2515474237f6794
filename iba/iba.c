// SPDX-License-Identifier: MIT
/* The IBA's encodings and directed routes: pure functions, no byte order (iba.h) */
#include <errno.h>
#include <stdio.h>

#include "iba/iba.h"
#include "util/macros.h"

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

	return vl_cap < ARRAY_SIZE(n) ? n[vl_cap] : 0;
}

/*
 * PathRecord rate codes (IBA 15.2.5.16, table 205) in units of 100 Mb/s:
 * 2-10 from IBA 1.2, 11-18 (FDR, EDR) from 1.3, 19-22 (2x widths, HDR)
 * from 1.4, 23-24 (NDR 8x, 12x) from 1.5, 25 (XDR 8x, 1600 Gb/s) from 1.7
 * (the Linux kernel's IB_RATE_1600_GBPS = 25 and rdma-core's
 * IBV_RATE_1200_GBPS = 24 carry the same codes). The IBA names the
 * nominal lane rates: FDR 14, EDR 25, HDR 50, NDR 100, XDR 200 Gb/s.
 */
static const uint16_t rate_dgbps[] = {
	[2] = 25, [3] = 100, [4] = 300, [5] = 50, [6] = 200, [7] = 400, [8] = 600, [9] = 800,
	[10] = 1200, [11] = 140, [12] = 560, [13] = 1120, [14] = 1680, [15] = 250, [16] = 1000,
	[17] = 2000, [18] = 3000, [19] = 280, [20] = 500, [21] = 4000, [22] = 6000,
	[23] = 8000, [24] = 12000, [25] = 16000,
};

_Static_assert(ARRAY_SIZE(rate_dgbps) == IBA_RATE_MAX + 1,
	       "IBA_RATE_MAX is the last code");

unsigned int iba_rate_to_dgbps(uint8_t rate)
{
	return rate < ARRAY_SIZE(rate_dgbps) ? rate_dgbps[rate] : 0;
}

unsigned int iba_width_lanes(uint8_t width_active)
{
	/* PortInfo.LinkWidthActive (IBA 14.2.5.6): 1x, 4x, 8x, 12x, 2x (IBA 1.4) */
	switch (width_active) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 0;
	}
}

enum iba_speed iba_speed_active(const struct port_info *pi, const struct port_info *caps,
				bool fdr10)
{
	bool ext = caps && (caps->cap_mask & PORT_CAP_EXT_SPEEDS);

	/*
	 * IBA 1.7 PortInfo: LinkSpeedExtActive2 (bits 449-450; 1: XDR),
	 * valid when CapabilityMask has IsCapabilityMask2Supported and
	 * CapabilityMask2 IsExtendedSpeeds2Supported, wins over
	 * LinkSpeedExtActive as rdma-core's libibnetdisc reads them
	 * (ibnd_get_agg_linkspeedext)
	 */
	if (ext && (caps->cap_mask & PORT_CAP_CAP_MASK2) &&
	    (caps->cap_mask2 & PORT_CAP2_EXT_SPEEDS2) && pi->link_speed_ext_active2)
		return pi->link_speed_ext_active2 == 1 ? IBA_SPEED_XDR : IBA_SPEED_NONE;
	/*
	 * LinkSpeedExtActive (IBA 14.2.5.6), valid with IsExtendedSpeedsSupported;
	 * a value the IBA does not define is no speed smd knows (NONE, as
	 * ibnetdiscover shows it: ???)
	 */
	if (ext && pi->link_speed_ext_active) {
		switch (pi->link_speed_ext_active) {
		case 1: return IBA_SPEED_FDR;
		case 2: return IBA_SPEED_EDR;
		case 4: return IBA_SPEED_HDR;
		case 8: return IBA_SPEED_NDR;
		default: return IBA_SPEED_NONE;
		}
	}
	switch (pi->link_speed_active) {
	case 1: return IBA_SPEED_SDR;
	case 2: return IBA_SPEED_DDR;
	case 4: return fdr10 ? IBA_SPEED_FDR10 : IBA_SPEED_QDR;
	default: return IBA_SPEED_NONE;
	}
}

bool iba_has_mlnx_ext_port_info(uint32_t vendor_id, uint16_t device_id)
{
	/* Bull's OEM devices: SwitchX, Switch-IB (2), Quantum, ConnectX-3, -IB, -4 */
	static const uint16_t bull[] = {
		0x1b02, 0x1b50, 0x1ba0, 0x1bd0, 0x1bd1, 0x1bd2, 0x1bd3, 0x1bd4, 0x1bd5, 0x1bf0,
		0x1b33, 0x1b73, 0x1b40, 0x1b41, 0x1b60, 0x1b61, 0x1b83, 0x1b93, 0x1b94,
		0x1bb4, 0x1bb5, 0x1bc4, 0x1bc5, 0x1bc6,
	};

	/* Switches: SwitchX and after; CAs: ConnectX-3 to ConnectX-7, BlueField-2 */
	if ((device_id >= 0xc738 && device_id <= 0xc73b) || device_id == 0xc839 ||
	    device_id == 0xcb20 || device_id == 0xcf08 || device_id == 0xcf09 ||
	    device_id == 0xd2f0 || (device_id >= 0x1003 && device_id <= 0x101b) ||
	    device_id == 0xa2d2)
		return true;
	if (vendor_id != 0x119f)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(bull); i++)
		if (bull[i] == device_id)
			return true;
	return false;
}

const char *iba_speed_name(enum iba_speed s)
{
	static const char *const names[] = {
		[IBA_SPEED_NONE] = "", [IBA_SPEED_SDR] = "SDR", [IBA_SPEED_DDR] = "DDR",
		[IBA_SPEED_QDR] = "QDR", [IBA_SPEED_FDR10] = "FDR10", [IBA_SPEED_FDR] = "FDR",
		[IBA_SPEED_EDR] = "EDR", [IBA_SPEED_HDR] = "HDR", [IBA_SPEED_NDR] = "NDR",
		[IBA_SPEED_XDR] = "XDR",
	};

	return (unsigned int)s < ARRAY_SIZE(names) ? names[s] : "";
}

uint8_t iba_rate_from_link(uint8_t width_active, enum iba_speed speed)
{
	/*
	 * A lane's rate as the codes count it: SDR 2.5, DDR 5, QDR 10 Gb/s
	 * (signalling), FDR10 10 (QDR's rate code: 4x FDR10 is "40 Gb/s" to
	 * verbs and OpenSM alike), then the nominal FDR 14 to XDR 200
	 */
	static const uint16_t lane_dgbps[] = {
		[IBA_SPEED_NONE] = 25, [IBA_SPEED_SDR] = 25, [IBA_SPEED_DDR] = 50,
		[IBA_SPEED_QDR] = 100, [IBA_SPEED_FDR10] = 100, [IBA_SPEED_FDR] = 140,
		[IBA_SPEED_EDR] = 250, [IBA_SPEED_HDR] = 500, [IBA_SPEED_NDR] = 1000,
		[IBA_SPEED_XDR] = 2000,
	};
	unsigned int lanes = iba_width_lanes(width_active), total;
	uint8_t best = 2;

	if (!lanes)
		lanes = 1;
	total = lanes * lane_dgbps[(unsigned int)speed < sizeof(lane_dgbps) /
				   sizeof(lane_dgbps[0]) ? speed : IBA_SPEED_NONE];
	/*
	 * The fastest code not above the link's rate: exact for every width
	 * and speed but 12x XDR (2400 Gb/s), which has no code of its own in
	 * the tables (it gets 1600 Gb/s, 25)
	 */
	for (uint8_t r = 2; r < ARRAY_SIZE(rate_dgbps); r++)
		if (rate_dgbps[r] <= total && rate_dgbps[r] > rate_dgbps[best])
			best = r;
	return best;
}
