// SPDX-License-Identifier: MIT
/* Link widths and speeds from PortInfo (linkrate.h): IBA 14.2.5.6, table 155. */
#include <stdio.h>
#include <string.h>

#include "topo/linkrate.h"

static const char *const speed_names[] = {
	[LINK_SPEED_NONE] = "", [LINK_SPEED_SDR] = "SDR", [LINK_SPEED_DDR] = "DDR",
	[LINK_SPEED_QDR] = "QDR", [LINK_SPEED_FDR] = "FDR", [LINK_SPEED_EDR] = "EDR",
	[LINK_SPEED_HDR] = "HDR", [LINK_SPEED_NDR] = "NDR", [LINK_SPEED_XDR] = "XDR",
};

const char *link_speed_name(unsigned int speed)
{
	return speed < sizeof(speed_names) / sizeof(speed_names[0]) ? speed_names[speed] : "";
}

unsigned int link_widest(unsigned int mask)
{
	unsigned int best = 0;

	/* LinkWidth bits: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x (IBA 1.4) */
	for (unsigned int b = 1; b <= 16; b <<= 1)
		if ((mask & b) && iba_width_lanes((uint8_t)b) > best)
			best = iba_width_lanes((uint8_t)b);
	return best;
}

unsigned int link_fastest(unsigned int set)
{
	unsigned int best = LINK_SPEED_NONE;

	for (unsigned int s = LINK_SPEED_SDR; s <= LINK_SPEED_XDR; s++)
		if (set & (1u << s))
			best = s;
	return best;
}

/* The port whose CapabilityMask speaks for p: a switch's port 0 (IBA 14.2.5.6) */
static const struct fab_port *caps_of(const struct fab_port *p)
{
	const struct fab_node *n = p->node;

	return n->type == NODE_TYPE_SWITCH ? &n->ports[0] : p;
}

/* LinkSpeedExt* are valid with IsExtendedSpeedsSupported */
static bool ext_speeds(const struct fab_port *p)
{
	const struct fab_port *c = caps_of(p);

	return c->pi_valid && (c->pi.cap_mask & PORT_CAP_EXT_SPEEDS);
}

/* IBA 1.7's LinkSpeedExtSupported2/Enabled2/Active2 (XDR) are valid (iba_speed_active) */
static bool ext_speeds2(const struct fab_port *p)
{
	const struct fab_port *c = caps_of(p);

	return ext_speeds(p) && (c->pi.cap_mask & PORT_CAP_CAP_MASK2) &&
	       (c->pi.cap_mask2 & PORT_CAP2_EXT_SPEEDS2);
}

/* LinkSpeed (SDR 1, DDR 2, QDR 4) and LinkSpeedExt (FDR 1, EDR 2, HDR 4, NDR 8) bits as speeds */
static unsigned int speeds_of(unsigned int basic, unsigned int ext)
{
	unsigned int set = 0;

	set |= basic & 1 ? 1u << LINK_SPEED_SDR : 0;
	set |= basic & 2 ? 1u << LINK_SPEED_DDR : 0;
	set |= basic & 4 ? 1u << LINK_SPEED_QDR : 0;
	set |= ext & 1 ? 1u << LINK_SPEED_FDR : 0;
	set |= ext & 2 ? 1u << LINK_SPEED_EDR : 0;
	set |= ext & 4 ? 1u << LINK_SPEED_HDR : 0;
	set |= ext & 8 ? 1u << LINK_SPEED_NDR : 0;
	return set;
}

static unsigned int active_speed(const struct fab_port *p)
{
	unsigned int ext = ext_speeds(p) ? p->pi.link_speed_ext_active : 0;

	if (ext_speeds2(p) && p->pi.link_speed_ext_active2 == 1)
		return LINK_SPEED_XDR;
	return link_fastest(ext ? speeds_of(0, ext) : speeds_of(p->pi.link_speed_active, 0));
}

/* The speeds a port may run: supported and enabled (IBA 14.2.5.6) */
static unsigned int allowed_speeds(const struct fab_port *p)
{
	const struct port_info *pi = &p->pi;
	unsigned int basic = pi->link_speed_supported, ext = 0;

	/* LinkSpeedEnabled 15: "set to supported" */
	if (pi->link_speed_enabled && pi->link_speed_enabled != 15)
		basic &= pi->link_speed_enabled;
	if (ext_speeds(p))
		ext = pi->link_speed_ext_supported & pi->link_speed_ext_enabled;
	/* LinkSpeedExtSupported2/Enabled2 bit 0: XDR */
	if (ext_speeds2(p) && (pi->link_speed_ext_supported2 & pi->link_speed_ext_enabled2 & 1))
		return speeds_of(basic, ext) | 1u << LINK_SPEED_XDR;
	return speeds_of(basic, ext);
}

static unsigned int allowed_widths(const struct fab_port *p)
{
	const struct port_info *pi = &p->pi;
	unsigned int m = pi->link_width_supported;

	/* 0 and 255 are the Set's "no change" and "all supported" */
	if (pi->link_width_enabled && pi->link_width_enabled != 255)
		m &= pi->link_width_enabled;
	return m;
}

void link_rate_of(const struct fab_port *p, struct link_rate *r)
{
	r->width = iba_width_lanes(p->pi.link_width_active);
	r->speed = active_speed(p);
	r->widths = allowed_widths(p);
	r->speeds = allowed_speeds(p);
}

void link_rate_best(const struct link_rate *a, const struct link_rate *b, unsigned int *width,
		    unsigned int *speed)
{
	*width = link_widest(a->widths & b->widths);
	*speed = link_fastest(a->speeds & b->speeds);
}

bool link_degraded(const struct fab_port *p, struct link_rate *a, struct link_rate *b)
{
	const struct fab_port *q = p->peer;
	struct link_rate x, y;
	unsigned int w, s;

	if (!q || q->peer != p || !p->pi_valid || !q->pi_valid ||
	    p->pi.phys_state != PHYS_STATE_LINKUP || q->pi.phys_state != PHYS_STATE_LINKUP)
		return false;
	link_rate_of(p, &x);
	link_rate_of(q, &y);
	if (a)
		*a = x;
	if (b)
		*b = y;
	/* Unknown to smd (a code the IBA does not define): not judged */
	if (!x.width || !x.speed)
		return false;
	link_rate_best(&x, &y, &w, &s);
	return x.width < w || x.speed < s;
}

void link_rate_text(char *buf, size_t len, unsigned int width, unsigned int speed)
{
	if (!width || !speed || !link_speed_name(speed)[0])
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%ux%s", width, link_speed_name(speed));
}

void link_widths_text(char *buf, size_t len, unsigned int mask)
{
	static const unsigned int order[] = { 1, 16, 2, 4, 8 };	/* 1x 2x 4x 8x 12x */
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && off < len; i++) {
		int n;

		if (!(mask & order[i]))
			continue;
		n = snprintf(buf + off, len - off, "%s%ux", off ? "," : "",
			     iba_width_lanes((uint8_t)order[i]));
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (!off)
		snprintf(buf, len, "none");
}

void link_speeds_text(char *buf, size_t len, unsigned int set)
{
	size_t off = 0;

	buf[0] = 0;
	for (unsigned int s = LINK_SPEED_SDR; s <= LINK_SPEED_XDR && off < len; s++) {
		int n;

		if (!(set & (1u << s)))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", link_speed_name(s));
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (!off)
		snprintf(buf, len, "none");
}
