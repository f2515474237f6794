/* SPDX-License-Identifier: MIT */
/*
 * Partitions (IBA 10.9): which endports hold which P_Keys, as an OpenSM
 * partitions.conf file describes them, and how a port's P_Key table is laid
 * out. Pure: the text comes in as a buffer, nothing is read or logged here.
 *
 * The file is a list of statements, each "definition : members ;":
 *   [Name][=PKey][,flag[=value]]... : member, member, ... ;
 * flags: ipoib, mtu, rate, sl, scope, qkey (Q_Key), tclass (TClass),
 * flowlabel (FlowLabel), defmember=full|limited|both, indx0; members:
 * a port GUID, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF or NONE, each
 * with an optional =full, =limited or =both, and "mgid=GID[,flag=value]..."
 * lines (a multicast group of the partition, to the end of the line).
 * '#' starts a comment; a statement may span lines; a backslash at the end
 * of a line joins it to the next. Statements naming one P_Key merge, and a
 * port's membership in a partition is what the last rule naming it says.
 */
#ifndef SMD_TOPO_PART_H
#define SMD_TOPO_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo/fabric.h"

/* IBA 10.9.1.2: bit 15 of a P_Key is the membership, set for full members */
#define PKEY_FULL		0x8000
#define PKEY_BASE(k)		((uint16_t)((k) & 0x7fff))
#define PKEY_DEFAULT		0x7fff	/* the default partition (IBA 10.9.1.2) */
/* Entries of a port's table smd manages (read, compared, written): 32 blocks */
#define PKEY_TABLE_MAX		1024

struct fab_port;
/*
 * The length of port p's P_Key table (IBA 14.2.5.3, 14.2.5.4): its node's
 * PartitionCap, for a switch's external port PartitionEnforcementCap (0
 * when SwitchInfo is not known), at most PKEY_TABLE_MAX; 0: it has none
 */
unsigned int part_table_cap(const struct fab_port *p);
#define PKEY_BLOCK_SIZE		32

/* Who a member rule names */
enum part_who {
	PART_GUID,		/* one port, by port GUID (a switch: its node GUID) */
	PART_ALL,		/* every endport */
	PART_ALL_CAS,		/* every CA port */
	PART_ALL_SWITCHES,	/* every switch (its port 0) */
	PART_ALL_ROUTERS,	/* every router port */
	PART_SELF,		/* the SM's own port */
};

struct part_member {
	uint64_t guid;			/* PART_GUID */
	uint32_t seq;			/* the rule's place in the file: later rules win */
	uint8_t who;			/* enum part_who */
	bool full;			/* full member ("both" is full, as in OpenSM) */
	bool implicit;			/* not from the file: every port in Default */
};

/* Parameters of a multicast group a partition creates (OpenSM's mgroup flags) */
struct part_mcparams {
	uint8_t mtu;			/* IBA code (14.2.5.6) */
	uint8_t rate;			/* IBA code (15.2.5.16) */
	uint8_t sl;
	uint8_t tclass;
	uint32_t qkey;			/* 0: the default (0x0b1b for IPoIB groups) */
	uint32_t flow_label;
	uint16_t scopes;		/* bit s: a group in scope s; 0: scope 2 */
};

/* An "mgid=" line: a permanent group of the partition */
struct part_mgroup {
	uint8_t mgid[16];		/* as written (the scope nibble comes from scopes) */
	struct part_mcparams p;
	unsigned int line;
};

struct partition {
	char name[64];
	uint16_t pkey;			/* low 15 bits */
	bool ipoib;			/* its IPoIB broadcast group exists (RFC 4391) */
	bool indx0;			/* its P_Key takes index 0 on its member ports */
	struct part_mcparams bc;	/* the broadcast group's parameters */
	struct part_member *members;
	size_t nmembers, cap;
	struct part_mgroup *groups;
	size_t ngroups, gcap;
	unsigned int line;		/* its first statement; 0: implicit */
	uint32_t indx0_seq;		/* the statement that asked for indx0 */
};

struct part_conf {
	struct partition *parts;	/* in the order they first appear, Default first */
	size_t n, cap;
	bool from_file;			/* false: the defaults, no file */
};

/* What the file leaves unsaid (smd.conf ipoib_mtu, ipoib_rate, ipoib_sl, ipoib) */
struct part_defaults {
	uint8_t mtu, rate, sl;
	bool ipoib;			/* without a file: the default partition's group */
};

/*
 * Parse a partitions file held in text[0..len); name is used in messages.
 * 0, or -EINVAL with "name:line: reason" in err (nothing allocated), or
 * -ENOMEM. Every endport is at least a limited member of the default
 * partition (0x7fff), as with OpenSM: that rule comes first, implicit.
 */
int part_parse(const char *text, size_t len, const char *name, const struct part_defaults *d,
	       struct part_conf **out, char *err, size_t errlen);
/* Without a file, as OpenSM: Default=0x7fff,ipoib : ALL=full */
int part_conf_default(const struct part_defaults *d, struct part_conf **out);
struct part_conf *part_conf_free(struct part_conf *c);
const struct partition *part_find(const struct part_conf *c, uint16_t pkey);
/* "256".."4096" or an IBA code 1-5; "2.5", "10G", 25, 40, ... or a code 2-22 */
int part_parse_mtu(const char *s, uint8_t *code);
int part_parse_rate(const char *s, uint8_t *code);
/* The Gb/s of a rate code as text ("2.5", "100"), "?" when not one */
const char *part_rate_text(uint8_t code);

/*
 * Membership over a fabric: built once per sweep (or reload), then asked
 * port by port. self is the SM's port GUID.
 */
struct part_index;

int part_index_new(const struct part_conf *c, uint64_t self, struct part_index **out);
struct part_index *part_index_free(struct part_index *ix);
/*
 * The P_Keys of endport p (its GUID and node type), full bit set for full
 * members: keys[0] is the one for index 0 (the default partition, or the
 * indx0 partition the port belongs to), the others in the order the
 * partitions appear in the file. The SM's own port is always a full member
 * of the default partition. Returns how many (at most max; *all gets the
 * count before the cut).
 */
unsigned int part_port_keys(const struct part_index *ix, uint64_t guid, uint8_t node_type,
			    uint16_t *keys, unsigned int max, unsigned int *all);
/*
 * How many partitions the rules name a GUID in that no port of the model
 * has (for the log); counted over f.
 */
size_t part_absent_guids(const struct part_index *ix, const struct fabric *f);

/*
 * A port's table of cap entries (cap <= PKEY_TABLE_MAX), out[0..cap): the
 * keys want[0..n); want[0] at index 0 when idx0; every other key stays at
 * the index it holds in have[0..hn) (what the port holds, by its low 15
 * bits; have NULL: unknown), the rest take the lowest free indexes; all
 * other entries 0. Returns how many keys found room.
 */
unsigned int part_table_layout(const uint16_t *want, unsigned int n, bool idx0,
			       const uint16_t *have, unsigned int hn, uint16_t *out,
			       unsigned int cap);

/*
 * IBA 10.9.3: two ports may talk in a partition both hold when at least
 * one is a full member. keys are sorted by their low 15 bits (the sorted
 * half of a fab_port's table, fabric_port_pkeys). The lowest such P_Key as
 * a holds it (with its membership bit), 0 when none.
 */
uint16_t part_common_key(const uint16_t *a, unsigned int na, const uint16_t *b, unsigned int nb);
/* Does the sorted key list hold pkey (low 15 bits, any membership)? Its entry, or 0 */
uint16_t part_find_key(const uint16_t *keys, unsigned int n, uint16_t pkey);

#endif
