/* SPDX-License-Identifier: MIT */
/*
 * How wide and how fast a link runs, and how wide and fast it could run:
 * one end's PortInfo read as lanes and speeds (IBA 14.2.5.6: LinkWidth*,
 * LinkSpeed*, LinkSpeedExt*, and IBA 1.7's LinkSpeedExt*2 for XDR), and
 * the best both ends support and enable. The cabling plan (a link below
 * the plan's rate, plan_check.c) and the health rules (a link below what
 * its ends allow, health.c) judge degraded links with it. Pure logic.
 */
#ifndef SMD_TOPO_LINKRATE_H
#define SMD_TOPO_LINKRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "topo/fabric.h"

/* Speeds in the order of their lane rates; FDR10 reads as QDR (PortInfo cannot tell) */
enum link_speed {
	LINK_SPEED_NONE, LINK_SPEED_SDR, LINK_SPEED_DDR, LINK_SPEED_QDR, LINK_SPEED_FDR,
	LINK_SPEED_EDR, LINK_SPEED_HDR, LINK_SPEED_NDR, LINK_SPEED_XDR,
};

/* "SDR".."XDR", "" for none */
const char *link_speed_name(unsigned int speed);

/* One end of a link as its PortInfo says */
struct link_rate {
	unsigned int width;		/* lanes active: 1, 2, 4, 8, 12; 0: unknown */
	unsigned int speed;		/* enum link_speed active; NONE: unknown */
	unsigned int widths;		/* LinkWidth bits it supports and enables */
	unsigned int speeds;		/* bit (1 << enum link_speed) per speed it supports and enables */
};

/* p's rate (its PortInfo must be valid); a switch port goes by its port 0's capabilities */
void link_rate_of(const struct fab_port *p, struct link_rate *r);
/* The most lanes a LinkWidth mask allows, the fastest speed of a set; 0 when none */
unsigned int link_widest(unsigned int width_mask);
unsigned int link_fastest(unsigned int speed_set);
/* The best width and speed a link between a and b may train at: what both allow */
void link_rate_best(const struct link_rate *a, const struct link_rate *b, unsigned int *width,
		    unsigned int *speed);
/*
 * A link up (PhysState LinkUp at both ends, both PortInfos valid) whose
 * active width or speed is below the best both ends support and enable;
 * *a and *b (may be NULL) get both ends' rates
 */
bool link_degraded(const struct fab_port *p, struct link_rate *a, struct link_rate *b);
/* "4xQDR"; "?" for an unknown width or speed */
void link_rate_text(char *buf, size_t len, unsigned int width, unsigned int speed);
/* The widths of a mask, "1x,4x"; the speeds of a set, "SDR,DDR,QDR"; "none" when empty */
void link_widths_text(char *buf, size_t len, unsigned int width_mask);
void link_speeds_text(char *buf, size_t len, unsigned int speed_set);

#endif
