/* SPDX-License-Identifier: MIT */
/*
 * The cabling plan (issue 21): the fabric as designed, written in the
 * text ibnetdiscover prints (what smctl dump writes and ibsim reads too),
 * parsed into nodes and cables; and a discovered fabric compared with it,
 * port by port, into mismatches. With enforcement, the miswired and
 * unexpected switch-to-switch links are fenced (fab_port.fenced): the
 * sweep leaves them at INIT and routing goes around them, as long as the
 * fabric stays in one piece. Pure logic: no I/O, no logging.
 *
 * The format, line by line ('#' starts a comment; blank lines separate
 * nodes): "switchguid=0x...", "caguid=0x..." or "rtguid=0x..." (the GUID
 * of the node that follows; vendid, devid and sysimgguid are read and
 * ignored), a node header "Switch|Ca|Hca|Rt N "id"" (N ports; the
 * comment's first quoted string is its NodeDescription, else the id is),
 * then one line per cabled port "[P](guid) "remote id"[Q](guid) # ...":
 * the local and remote GUIDs are optional, and the comment may end in the
 * link's width and speed ("4xQDR", as ibnetdiscover prints and ibsim
 * reads). A cable may be listed from one end or from both; listed from
 * both, the ends must name each other. Each end keeps the rate its own
 * line gives (ibnetdiscover prints each end's view), else the other's.
 */
#ifndef SMD_TOPO_PLAN_H
#define SMD_TOPO_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iba/iba.h"
#include "topo/fabric.h"
#include "topo/linkrate.h"

#define PLAN_NONE	UINT32_MAX
#define PLAN_LINE_MAX	4096		/* bytes of one line, its newline included */
#define PLAN_NODES_MAX	(1u << 20)
/* A NodeDescription as ibnetdiscover prints it: 63 bytes, non-printables as spaces */
#define PLAN_DESC_LEN	(SMP_DATA_SIZE - 1)

struct plan_port {
	uint32_t peer;			/* node index, PLAN_NONE: not cabled */
	uint8_t peer_port;
	uint8_t width;			/* lanes (1, 2, 4, 8, 12) the plan gives; 0: none */
	uint8_t speed;			/* enum link_speed (topo/linkrate.h) */
	bool stated;			/* this end's own line names the cable */
	uint32_t line;			/* the line that names it */
};

struct plan_node {
	char *id;			/* the name in quotes on its header line */
	char desc[PLAN_DESC_LEN + 1];	/* NodeDescription, normalized (plan_desc_norm) */
	uint64_t guid;			/* 0: the plan gives none */
	uint8_t type;			/* NODE_TYPE_* */
	uint8_t nports;
	bool declared;			/* its header was read (else only referred to) */
	uint32_t line;			/* its header's, or its first mention's */
	struct plan_port *ports;	/* [0..nports]; [0] unused */
};

struct plan {
	struct plan_node *nodes;
	size_t nnodes, cap;
	size_t nswitches, ncables;
	uint32_t *by_id;		/* open addressing over node indexes, PLAN_NONE empty */
	size_t id_size;
};

/*
 * Parse len bytes of text (NULs included: they are refused) named name
 * in messages. 0 with *out, or -errno with "name:line: reason" in err.
 */
int plan_parse(const char *text, size_t len, const char *name, struct plan **out, char *err,
	       size_t errlen);
struct plan *plan_free(struct plan *p);

/* d as the plan keeps NodeDescriptions: at most 63 bytes, bytes outside 0x20-0x7e as ' ' */
void plan_desc_norm(const char *d, char out[PLAN_DESC_LEN + 1]);

enum plan_kind {
	PLAN_MISWIRED,			/* cabled, to another node or port than planned */
	PLAN_UNEXPECTED,		/* cabled, not planned */
	PLAN_MISSING,			/* planned, not there (a cable, or a whole node at port 0) */
	PLAN_DEGRADED,			/* width or speed below the plan's or both ends' best */
	PLAN_UNKNOWN_NODE,		/* a node the plan does not know (port 0) */
	PLAN_KINDS
};

/* What enforcement did about a mismatch */
enum plan_action {
	PLAN_REPORTED,			/* nothing: not a switch-to-switch link, or no enforcement */
	PLAN_HELD,			/* the link is fenced: left at INIT, no route over it */
	PLAN_KEPT,			/* would be fenced, but the fabric would split without it */
};

#define PLAN_TEXT_LEN	128

struct plan_mismatch {
	uint64_t node_guid;
	char node_desc[PLAN_DESC_LEN + 1];
	char expected[PLAN_TEXT_LEN];	/* "" when nothing was planned */
	char found[PLAN_TEXT_LEN];	/* "" when nothing is there */
	uint8_t port;			/* 0: the node itself */
	uint8_t kind;			/* enum plan_kind */
	uint8_t action;			/* enum plan_action */
};

/* Mismatches a report lists; the counts go on past it */
#define PLAN_LIST_MAX	1000	/* in the worst case, under the control answer's 1 MiB */

struct plan_report {
	unsigned int count[PLAN_KINDS];
	unsigned int total;
	unsigned int held;		/* links fenced (cables, not ends) */
	unsigned int kept;		/* links left up that enforcement would fence */
	unsigned int matched;		/* plan nodes found in the fabric */
	uint64_t sig;			/* of every mismatch: equal lists, equal sigs */
	size_t n;			/* listed: the first PLAN_LIST_MAX by kind, GUID, port */
	struct plan_mismatch *list;
};

/*
 * Compare fabric f with plan p. Nodes are matched by GUID where the plan
 * gives one the fabric holds, then by NodeDescription, then CAs by host
 * name (the description's first word), each only where exactly one node
 * on both sides fits. Every port of every matched node is compared, so
 * both ends of a cable between matched nodes are listed. With enforce,
 * the miswired and unexpected links between two switches are fenced
 * (both ends' fab_port.fenced) unless the fabric needs them to stay
 * connected (fewest kept). 0 with *out, or -ENOMEM (nothing fenced).
 */
int plan_check(const struct plan *p, struct fabric *f, bool enforce, struct plan_report **out);
struct plan_report *plan_report_free(struct plan_report *r);
/* "miswired", "unexpected", "missing", "degraded", "unknown_node" */
const char *plan_kind_name(unsigned int kind);
/* "reported", "held_init", "kept_connected" */
const char *plan_action_name(unsigned int action);

#endif
