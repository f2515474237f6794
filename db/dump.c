// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/dump.h"

int dump_format_parse(const char *name, enum dump_format *out)
{
	if (!strcmp(name, "ibnetdiscover"))
		*out = DUMP_IBNETDISCOVER;
	else if (!strcmp(name, "json"))
		*out = DUMP_JSON;
	else if (!strcmp(name, "dot"))
		*out = DUMP_DOT;
	else
		return -EINVAL;
	return 0;
}

/* ---- shared ---- */

static int type_rank(uint8_t type)
{
	switch (type) {
	case NODE_TYPE_SWITCH: return 0;
	case NODE_TYPE_CA: return 1;
	case NODE_TYPE_ROUTER: return 2;
	default: return 3;
	}
}

static int cmp_node(const void *a, const void *b)
{
	const struct fab_node *x = *(struct fab_node *const *)a, *y = *(struct fab_node *const *)b;

	if (type_rank(x->type) != type_rank(y->type))
		return type_rank(x->type) - type_rank(y->type);
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* Switches, then CAs, then routers, each by GUID; NULL on ENOMEM */
static struct fab_node **sorted_nodes(const struct fabric *f)
{
	struct fab_node **v = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*v));

	if (!v)
		return NULL;
	if (f->nnodes) {
		memcpy(v, f->nodes, f->nnodes * sizeof(*v));
		qsort(v, f->nnodes, sizeof(*v), cmp_node);
	}
	return v;
}

/* A cable shown at a port: both ends known and seen */
static const struct fab_port *remote_of(const struct fab_port *p)
{
	if (p->num == 0 || !p->pi_valid || !p->peer || !p->peer->pi_valid)
		return NULL;
	return p->peer;
}

/* The LID a port answers to: a switch's is its port 0's */
static unsigned int lid_of(const struct fab_port *p)
{
	const struct fab_node *n = p->node;

	if (n->type == NODE_TYPE_SWITCH)
		return n->ports[0].pi_valid ? n->ports[0].pi.lid : 0;
	return p->pi.lid;
}

static const char *width_str(unsigned int w)
{
	switch (w) {
	case 1: return "1x";
	case 2: return "4x";
	case 4: return "8x";
	case 8: return "12x";
	case 16: return "2x";
	default: return "??";
	}
}

/*
 * The speed the port runs at (fabric_port_speed: LinkSpeedActive,
 * LinkSpeedExtActive, IBA 1.7's LinkSpeedExtActive2, FDR10), named as
 * ibnetdiscover names it; "???" when the port gave none
 */
static const char *speed_str(const struct fab_port *p)
{
	const char *s = iba_speed_name(fabric_port_speed(p));

	return *s ? s : "???";
}

/* A description as ibnetdiscover shows it: 63 bytes, non-printables as spaces */
static const char *clean_desc(const struct fab_node *n, char *buf)
{
	size_t i;

	for (i = 0; i < SMP_DATA_SIZE - 1 && n->desc[i]; i++) {
		unsigned char c = (unsigned char)n->desc[i];

		buf[i] = c < 0x20 || c > 0x7e ? ' ' : (char)c;
	}
	buf[i] = 0;
	return buf;
}

/* ---- ibnetdiscover ---- */

static char id_letter(uint8_t type)
{
	switch (type) {
	case NODE_TYPE_SWITCH: return 'S';
	case NODE_TYPE_CA: return 'H';
	case NODE_TYPE_ROUTER: return 'R';
	default: return '?';
	}
}

static void ibnd_switch(FILE *out, const struct fab_node *n)
{
	const struct fab_port *p0 = &n->ports[0];
	char d[SMP_DATA_SIZE], rd[SMP_DATA_SIZE];

	fprintf(out, "switchguid=0x%" PRIx64 "(%" PRIx64 ")\n", n->guid,
		n->ni.port_guid ? n->ni.port_guid : n->guid);
	fprintf(out, "Switch\t%u \"S-%016" PRIx64 "\"\t\t# \"%s\" %s port 0 lid %u lmc %u\n",
		n->num_ports, n->guid, clean_desc(n, d),
		n->si_valid && n->si.enhanced_port0 ? "enhanced" : "base",
		p0->pi_valid ? p0->pi.lid : 0, p0->pi_valid ? p0->pi.lmc : 0);
	for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
		const struct fab_port *p = &n->ports[pn], *q = remote_of(p);

		if (!q)
			continue;
		fprintf(out, "[%u]\t\"%c-%016" PRIx64 "\"[%u]", pn, id_letter(q->node->type),
			q->node->guid, q->num);
		if (q->node->type != NODE_TYPE_SWITCH)
			fprintf(out, "(%" PRIx64 ") ", q->guid);
		fprintf(out, "\t\t# \"%s\" lid %u %s%s\n", clean_desc(q->node, rd), lid_of(q),
			width_str(p->pi.link_width_active), speed_str(p));
	}
}

static void ibnd_ca(FILE *out, const struct fab_node *n)
{
	bool router = n->type == NODE_TYPE_ROUTER;
	char d[SMP_DATA_SIZE], rd[SMP_DATA_SIZE];

	fprintf(out, "%sguid=0x%" PRIx64 "\n", router ? "rt" : "ca", n->guid);
	fprintf(out, "%s\t%u \"%c-%016" PRIx64 "\"\t\t# \"%s\"\n", router ? "Rt" : "Ca",
		n->num_ports, id_letter(n->type), n->guid, clean_desc(n, d));
	for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
		const struct fab_port *p = &n->ports[pn], *q = remote_of(p);

		if (!q)
			continue;
		fprintf(out, "[%u](%" PRIx64 ") \t\"%c-%016" PRIx64 "\"[%u]", pn, p->guid,
			id_letter(q->node->type), q->node->guid, q->num);
		if (q->node->type != NODE_TYPE_SWITCH)
			fprintf(out, " (%" PRIx64 ") ", q->guid);
		fprintf(out, "\t\t# lid %u lmc %u \"%s\" lid %u %s%s\n", p->pi.lid, p->pi.lmc,
			clean_desc(q->node, rd), lid_of(q), width_str(p->pi.link_width_active),
			speed_str(p));
	}
}

static void write_ibnd(FILE *out, struct fab_node **nodes, size_t n, const struct dump_meta *m)
{
	time_t t = (time_t)m->time;
	char when[64] = "";
	struct tm tm;

	/* ctime(3)'s layout, as ibnetdiscover's header has it */
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(out, "#\n# Topology file: generated on %s\n#\n", when);
	fprintf(out, "# Initiated from node %016" PRIx64 " port %016" PRIx64 "\n",
		m->sm_node_guid, m->sm_port_guid);
	for (size_t i = 0; i < n; i++) {
		const struct fab_node *nd = nodes[i];

		fprintf(out, "\nvendid=0x%x\ndevid=0x%x\n", nd->ni.vendor_id, nd->ni.device_id);
		if (nd->ni.sys_guid)
			fprintf(out, "sysimgguid=0x%" PRIx64 "\n", nd->ni.sys_guid);
		if (nd->type == NODE_TYPE_SWITCH)
			ibnd_switch(out, nd);
		else
			ibnd_ca(out, nd);
	}
}

/* ---- JSON ---- */

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static const char *type_name(uint8_t type)
{
	switch (type) {
	case NODE_TYPE_SWITCH: return "switch";
	case NODE_TYPE_CA: return "ca";
	case NODE_TYPE_ROUTER: return "router";
	default: return "unknown";
	}
}

static const char *state_name(uint8_t s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static const char *phys_name(uint8_t s)
{
	static const char *const names[] = {
		"NoStateChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
		"LinkUp", "LinkErrorRecovery", "PhyTest",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* NeighborMTU/MTUCap code to bytes (IBA 14.2.5.6), 0 when not valid */
static unsigned int mtu_bytes(uint8_t code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

/* VLCap/OperationalVLs code to data VLs, 0 when not valid */
static unsigned int vl_count(uint8_t code)
{
	static const unsigned int vls[] = { 0, 1, 2, 4, 8, 15 };

	return code < sizeof(vls) / sizeof(vls[0]) ? vls[code] : 0;
}

static void json_port(FILE *out, const struct fab_port *p, bool last)
{
	const struct port_info *pi = &p->pi;
	const struct fab_port *q = remote_of(p);

	fprintf(out, "        { \"num\": %u, \"guid\": \"0x%016" PRIx64 "\", \"lid\": %u,"
		" \"lmc\": %u, \"state\": \"%s\", \"phys_state\": \"%s\", \"width\": \"%s\","
		" \"speed\": \"%s\", \"mtu\": %u, \"mtu_cap\": %u, \"vl_cap\": %u, \"op_vls\": %u",
		p->num, p->guid, pi->lid, pi->lmc, state_name(pi->port_state),
		phys_name(pi->phys_state), width_str(pi->link_width_active), speed_str(p),
		mtu_bytes(pi->neighbor_mtu), mtu_bytes(pi->mtu_cap), vl_count(pi->vl_cap),
		vl_count(pi->op_vls));
	if (p->node->type == NODE_TYPE_SWITCH)
		fprintf(out, ", \"lids_routed\": %" PRIu32, p->load);
	if (q)
		fprintf(out, ", \"remote\": { \"guid\": \"0x%016" PRIx64 "\", \"port\": %u }",
			q->node->guid, q->num);
	else
		fprintf(out, ", \"remote\": null");
	fprintf(out, " }%s\n", last ? "" : ",");
}

static void json_node(FILE *out, const struct fab_node *n, bool last)
{
	unsigned int lastp = 0;

	fprintf(out, "    {\n      \"guid\": \"0x%016" PRIx64 "\", \"type\": \"%s\",\n"
		"      \"description\": ", n->guid, type_name(n->type));
	json_str(out, n->desc);
	fprintf(out, ",\n      \"num_ports\": %u, \"system_image_guid\": \"0x%016" PRIx64 "\","
		" \"vendor_id\": \"0x%06x\", \"device_id\": \"0x%04x\", \"revision\": \"0x%08x\",\n",
		n->num_ports, n->ni.sys_guid, n->ni.vendor_id, n->ni.device_id, n->ni.revision);
	if (n->type == NODE_TYPE_SWITCH) {
		const struct fab_port *p0 = &n->ports[0];

		fprintf(out, "      \"lid\": %u, \"lmc\": %u", p0->pi_valid ? p0->pi.lid : 0,
			p0->pi_valid ? p0->pi.lmc : 0);
		if (n->si_valid)
			fprintf(out, ", \"enhanced_port0\": %s, \"lft_top\": %u, \"lft_cap\": %u",
				n->si.enhanced_port0 ? "true" : "false", n->si.lft_top,
				n->si.lft_cap);
		fprintf(out, ",\n");
	}
	for (unsigned int pn = 0; pn <= n->num_ports; pn++)
		if (n->ports[pn].pi_valid)
			lastp = pn + 1;
	fprintf(out, "      \"ports\": [%s", lastp ? "\n" : "");
	for (unsigned int pn = 0; pn < lastp; pn++)
		if (n->ports[pn].pi_valid)
			json_port(out, &n->ports[pn], pn + 1 == lastp);
	fprintf(out, "%s]\n    }%s\n", lastp ? "      " : "", last ? "" : ",");
}

/* Each cable once: from its end with the lower (GUID, port) */
static bool cable_from(const struct fab_port *p)
{
	const struct fab_port *q = remote_of(p);

	if (!q)
		return false;
	if (p->node->guid != q->node->guid)
		return p->node->guid < q->node->guid;
	return p->num < q->num;
}

static void write_json(FILE *out, struct fab_node **nodes, size_t n, const struct dump_meta *m)
{
	bool first = true;

	fprintf(out, "{\n  \"format\": \"smd-fabric\", \"version\": 1,\n"
		"  \"time\": %" PRId64 ", \"sweep\": %" PRId64 ",\n"
		"  \"sm\": { \"node_guid\": \"0x%016" PRIx64 "\", \"port_guid\": \"0x%016" PRIx64
		"\" },\n  \"nodes\": [%s", m->time, m->sweep_id, m->sm_node_guid, m->sm_port_guid,
		n ? "\n" : "");
	for (size_t i = 0; i < n; i++)
		json_node(out, nodes[i], i + 1 == n);
	fprintf(out, "%s],\n  \"links\": [", n ? "  " : "");
	for (size_t i = 0; i < n; i++) {
		const struct fab_node *nd = nodes[i];

		for (unsigned int pn = 1; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn], *q = p->peer;

			if (!cable_from(p))
				continue;
			fprintf(out, "%s\n    { \"a\": { \"guid\": \"0x%016" PRIx64 "\","
				" \"port\": %u }, \"b\": { \"guid\": \"0x%016" PRIx64 "\","
				" \"port\": %u }, \"width\": \"%s\", \"speed\": \"%s\" }",
				first ? "" : ",", nd->guid, pn, q->node->guid, q->num,
				width_str(p->pi.link_width_active), speed_str(p));
			first = false;
		}
	}
	fprintf(out, "%s],\n  \"mcast_groups\": [", first ? "" : "\n  ");
	for (size_t i = 0; i < m->nmcast; i++) {
		char g[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, m->mcast[i].mgid, g, sizeof(g));
		fprintf(out, "%s\n    { \"mgid\": \"%s\", \"mlid\": \"0x%04x\" }", i ? "," : "", g,
			m->mcast[i].mlid);
	}
	fprintf(out, "%s],\n  \"partitions\": [", m->nmcast ? "\n  " : "");
	/* Each partition with its members: the keys come sorted by P_Key */
	for (size_t i = 0, k = 0; i < m->nparts; i++) {
		const struct store_partition *p = &m->parts[i];
		bool firstm = true;

		fprintf(out, "%s\n    { \"pkey\": \"0x%04x\", \"name\": ", i ? "," : "", p->pkey);
		json_str(out, p->name);
		fprintf(out, ", \"ipoib\": %s, \"members\": [", p->ipoib ? "true" : "false");
		while (k < m->npkeys && (m->pkeys[k].pkey & 0x7fff) < p->pkey)
			k++;
		for (; k < m->npkeys && (m->pkeys[k].pkey & 0x7fff) == p->pkey; k++) {
			fprintf(out, "%s\n        { \"guid\": \"0x%016" PRIx64 "\", "
				"\"membership\": \"%s\" }", firstm ? "" : ",",
				m->pkeys[k].port_guid,
				m->pkeys[k].pkey & 0x8000 ? "full" : "limited");
			firstm = false;
		}
		fprintf(out, "%s] }", firstm ? "" : "\n      ");
	}
	fprintf(out, "%s]\n}\n", m->nparts ? "\n  " : "");
}

/* ---- Graphviz ---- */

static void dot_str(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void write_dot(FILE *out, struct fab_node **nodes, size_t n, const struct dump_meta *m)
{
	char d[SMP_DATA_SIZE];

	fprintf(out, "graph fabric {\n\tgraph [overlap=false, splines=true];\n"
		"\tnode [fontsize=10];\n\tedge [fontsize=8];\n");
	for (size_t i = 0; i < n; i++) {
		const struct fab_node *nd = nodes[i];
		const char *sep = "\\nLID ";

		fprintf(out, "\t\"0x%016" PRIx64 "\" [shape=%s, label=\"", nd->guid,
			nd->type == NODE_TYPE_SWITCH ? "box" : "ellipse");
		dot_str(out, clean_desc(nd, d));
		fprintf(out, "\\n0x%016" PRIx64, nd->guid);
		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn];

			if (!fabric_is_endport(p) || !p->pi_valid)
				continue;
			fprintf(out, "%s%u", sep, p->pi.lid);
			sep = ", ";
		}
		fprintf(out, "\"%s];\n", nd->guid == m->sm_node_guid ? ", style=bold" : "");
	}
	for (size_t i = 0; i < n; i++) {
		const struct fab_node *nd = nodes[i];

		for (unsigned int pn = 1; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn], *q = p->peer;

			if (!cable_from(p))
				continue;
			fprintf(out, "\t\"0x%016" PRIx64 "\" -- \"0x%016" PRIx64 "\""
				" [taillabel=\"%u\", headlabel=\"%u\", label=\"%s%s\"];\n",
				nd->guid, q->node->guid, pn, q->num,
				width_str(p->pi.link_width_active), speed_str(p));
		}
	}
	fprintf(out, "}\n");
}

int dump_write(FILE *out, const struct fabric *f, const struct dump_meta *m,
	       enum dump_format fmt)
{
	struct fab_node **nodes = sorted_nodes(f);

	if (!nodes)
		return -ENOMEM;
	switch (fmt) {
	case DUMP_IBNETDISCOVER:
		write_ibnd(out, nodes, f->nnodes, m);
		break;
	case DUMP_JSON:
		write_json(out, nodes, f->nnodes, m);
		break;
	case DUMP_DOT:
		write_dot(out, nodes, f->nnodes, m);
		break;
	}
	free(nodes);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
