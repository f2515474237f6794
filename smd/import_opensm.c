// SPDX-License-Identifier: MIT
/*
 * From OpenSM to smd: opensm.conf into smd.conf, and OpenSM's guid2lid into
 * the database at the first start (policy in smd/import_opensm.h).
 *
 * opensm.conf is "option value" per line, '#' to the end of the line a
 * comment, the last of an option's lines counting (OpenSM 3.3.23,
 * osm_subnet.c). Its options are this file's table, with OpenSM's
 * defaults: an option the file leaves out has OpenSM's default, and that is
 * what gets translated.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/guid2lid.h"
#include "smd/config.h"
#include "smd/import_opensm.h"
#include "util/log.h"
#include "smd/smd.h"

/* ---- OpenSM's options ---- */

enum osm_type {
	T_BOOL,		/* TRUE or FALSE (OpenSM takes anything but TRUE as FALSE) */
	T_U8, T_U16, T_U32, T_U64,
	T_I32,
	T_STR,		/* "(null)": unset */
	T_MASK256,	/* a 256-bit hex mask */
	T_CCT1,		/* "shift:multiplier" */
	T_CCT,		/* "(null)" or "shift:multiplier,..." */
	T_SLVAL,	/* "SL value", once per SL */
};

/* What smd does instead, for the options it has no key for (grouped by text) */
#define I_LOG		"smd logs to stderr (under systemd: the journal, journalctl -u smd); " \
			"log_level below says how much"
#define I_DAEMON	"smd runs in the foreground as a systemd service (Type=notify) and " \
			"exits on what it cannot start with"
#define I_CONSOLE	"no console: smctl talks to the running smd over a unix socket " \
			"(control_socket, control_group)"
#define I_FILES		"smd keeps its state in SQLite (db) and writes no dump files: smctl " \
			"dump, lids and history show the fabric, the LIDs and what changed"
#define I_NAMES		"smd names nodes by their NodeDescription"
#define I_PERF		"smd has no performance manager: read port counters with perfquery"
#define I_PLUGIN	"smd loads no plugins"
#define I_CC		"smd configures no congestion control"
#define I_ROUTE		"settings and files of OpenSM's own routing engines: smd's engines " \
			"(routing_engine below) need none; dfree balances the routes itself"
#define I_LINK		"smd leaves link speeds and widths, FDR10, VL stall counts, " \
			"head-of-queue lifetimes and error thresholds as the ports hold them"
#define I_MCAST		"multicast: smd creates each partition's IPoIB broadcast group (ipoib " \
			"keys, partitions file), checks joins by the IBA's rules, and uses " \
			"MulticastFDBTop where a switch offers it"
#define I_PKEY		"partitions: switch ports facing CAs enforce P_Keys inbound and " \
			"outbound where the switch can (OpenSM's part_enforce both); smd lays " \
			"out every port's P_Key table"
#define I_SWEEP		"sweeps: smd keeps every valid LID a port holds, finds changes by " \
			"light sweeps (PortStateChange), and sweeps on the traps that mean one"
#define I_ELECT		"election: smd always takes part (IBA 14.4) and starts active; smctl " \
			"sm-enable brings back an smd another SM disabled"
#define I_GUID2LID	"smd remembers LIDs in its database: OpenSM's guid2lid goes in with " \
			"smctl import-guid2lid, or opensm_guid2lid (below) at smd's first start"
#define I_SA		"SA: smd drops a port's event subscriptions when the port leaves, " \
			"answers BUSY while it cannot serve, offers every IBA rate, picks free " \
			"alias GUIDs itself, and routes inside the subnet only"
#define I_MKEYLOOK	"smd derives every port's M_Key from m_key (no guid2mkey file)"
#define I_SMP		"smd sends at most max_outstanding_smps SMPs at once, each waited for " \
			"smp_timeout_ms and sent again smp_retries times"
#define I_ESP0		"smd gives a switch's port 0 one LID, whatever lmc"
#define I_SMSL		"smd sets MasterSMSL 0: SMPs and SA traffic ride SL 0"
#define I_QUIRKS	"smd follows the IBA; it writes SL-to-VL tables in one Set where a " \
			"switch offers OptimizedSLtoVLMappingProgramming"

/* Options smd has keys for: the translators below decide (and say why) */
#define X NULL

struct osm_opt {
	const char *name;
	enum osm_type type;
	const char *def;	/* OpenSM 3.3.23's default, as "opensm -c" writes it */
	const char *instead;	/* no counterpart: what smd does instead */
};

static const struct osm_opt opts[] = {
	{ "guid", T_U64, "0x0000000000000000", X },
	{ "m_key", T_U64, "0x0000000000000000", X },
	{ "m_key_lease_period", T_U16, "0", X },
	{ "m_key_protection_level", T_U8, "0", X },
	{ "m_key_lookup", T_BOOL, "TRUE", I_MKEYLOOK },
	{ "sm_key", T_U64, "0x0000000000000001", X },
	{ "sa_key", T_U64, "0x0000000000000001", X },
	{ "subnet_prefix", T_U64, "0xfe80000000000000", X },
	{ "lmc", T_U8, "0", X },
	{ "lmc_esp0", T_BOOL, "FALSE", I_ESP0 },
	{ "sm_sl", T_U8, "0", I_SMSL },
	{ "packet_life_time", T_U8, "0x12", X },
	{ "vl_stall_count", T_U8, "0x07", I_LINK },
	{ "leaf_vl_stall_count", T_U8, "0x07", I_LINK },
	{ "head_of_queue_lifetime", T_U8, "0x12", I_LINK },
	{ "leaf_head_of_queue_lifetime", T_U8, "0x10", I_LINK },
	{ "max_op_vls", T_U8, "5", X },
	{ "force_link_speed", T_U8, "15", I_LINK },
	{ "force_link_speed_ext", T_U8, "31", I_LINK },
	{ "force_link_width", T_U8, "255", I_LINK },
	{ "fdr10", T_U8, "1", I_LINK },
	{ "subnet_timeout", T_U8, "18", X },
	{ "local_phy_errors_threshold", T_U8, "0x08", I_LINK },
	{ "overrun_errors_threshold", T_U8, "0x08", I_LINK },
	{ "use_mfttop", T_BOOL, "TRUE", I_MCAST },
	{ "partition_config_file", T_STR, "/etc/opensm/partitions.conf", X },
	{ "no_partition_enforcement", T_BOOL, "FALSE", I_PKEY },
	{ "part_enforce", T_STR, "both", I_PKEY },
	{ "allow_both_pkeys", T_BOOL, "FALSE", I_PKEY },
	{ "keep_pkey_indexes", T_BOOL, "TRUE", I_PKEY },
	{ "sm_assigned_guid", T_U8, "0x00", I_SA },
	{ "sweep_interval", T_U32, "10", X },
	{ "reassign_lids", T_BOOL, "FALSE", I_SWEEP },
	{ "force_heavy_sweep", T_BOOL, "FALSE", I_SWEEP },
	{ "sweep_on_trap", T_BOOL, "TRUE", I_SWEEP },
	{ "port_profile_switch_nodes", T_BOOL, "FALSE", I_ROUTE },
	{ "port_prof_ignore_file", T_STR, "(null)", I_ROUTE },
	{ "hop_weights_file", T_STR, "(null)", I_ROUTE },
	{ "port_search_ordering_file", T_STR, "(null)", I_ROUTE },
	{ "dimn_ports_file", T_STR, "(null)", I_ROUTE },
	{ "routing_engine", T_STR, "(null)", X },
	{ "avoid_throttled_links", T_BOOL, "FALSE", I_ROUTE },
	{ "connect_roots", T_BOOL, "FALSE", I_ROUTE },
	{ "use_ucast_cache", T_BOOL, "FALSE", X },
	{ "lid_matrix_dump_file", T_STR, "(null)", I_FILES },
	{ "lfts_file", T_STR, "(null)", I_FILES },
	{ "root_guid_file", T_STR, "(null)", I_ROUTE },
	{ "cn_guid_file", T_STR, "(null)", I_ROUTE },
	{ "io_guid_file", T_STR, "(null)", I_ROUTE },
	{ "quasi_ftree_indexing", T_BOOL, "FALSE", I_ROUTE },
	{ "max_reverse_hops", T_U16, "0", I_ROUTE },
	{ "ids_guid_file", T_STR, "(null)", I_ROUTE },
	{ "guid_routing_order_file", T_STR, "(null)", I_ROUTE },
	{ "do_mesh_analysis", T_BOOL, "FALSE", I_ROUTE },
	{ "lash_start_vl", T_U8, "0", I_ROUTE },
	{ "nue_max_num_vls", T_U8, "1", I_ROUTE },
	{ "nue_include_switches", T_BOOL, "FALSE", I_ROUTE },
	{ "port_shifting", T_BOOL, "FALSE", I_ROUTE },
	{ "scatter_ports", T_U32, "0", I_ROUTE },
	{ "guid_routing_order_no_scatter", T_BOOL, "FALSE", I_ROUTE },
	{ "sa_db_file", T_STR, "(null)", I_FILES },
	{ "sa_db_dump", T_BOOL, "FALSE", I_FILES },
	{ "torus_config", T_STR, "/etc/opensm/torus-2QoS.conf", I_ROUTE },
	{ "sm_priority", T_U8, "0", X },
	{ "ignore_other_sm", T_BOOL, "FALSE", I_ELECT },
	{ "sminfo_polling_timeout", T_U32, "10000", X },
	{ "polling_retry_number", T_U32, "4", X },
	{ "honor_guid2lid_file", T_BOOL, "FALSE", I_GUID2LID },
	{ "max_wire_smps", T_U32, "4", X },
	{ "max_wire_smps2", T_U32, "4", I_SMP },
	{ "max_smps_timeout", T_U32, "600000", I_SMP },
	{ "transaction_timeout", T_U32, "200", X },
	{ "transaction_retries", T_U32, "3", X },
	{ "long_transaction_timeout", T_U32, "500", I_SMP },
	{ "max_msg_fifo_timeout", T_U32, "10000", I_SA },
	{ "single_thread", T_BOOL, "FALSE", I_DAEMON },
	{ "daemon", T_BOOL, "FALSE", I_DAEMON },
	{ "sm_inactive", T_BOOL, "FALSE", I_ELECT },
	{ "babbling_port_policy", T_BOOL, "FALSE", X },
	{ "drop_event_subscriptions", T_BOOL, "FALSE", I_SA },
	{ "ipoib_mcgroup_creation_validation", T_BOOL, "TRUE", I_MCAST },
	{ "mcgroup_join_validation", T_BOOL, "TRUE", I_MCAST },
	{ "use_original_extended_sa_rates_only", T_BOOL, "FALSE", I_SA },
	{ "use_optimized_slvl", T_BOOL, "FALSE", I_QUIRKS },
	{ "fsync_high_avail_files", T_BOOL, "TRUE", I_FILES },
	{ "perfmgr", T_BOOL, "FALSE", I_PERF },
	{ "perfmgr_redir", T_BOOL, "TRUE", I_PERF },
	{ "perfmgr_sweep_time_s", T_U16, "180", I_PERF },
	{ "perfmgr_max_outstanding_queries", T_U32, "500", I_PERF },
	{ "perfmgr_ignore_cas", T_BOOL, "FALSE", I_PERF },
	{ "perfmgr_rm_nodes", T_BOOL, "TRUE", I_PERF },
	{ "perfmgr_log_errors", T_BOOL, "TRUE", I_PERF },
	{ "perfmgr_query_cpi", T_BOOL, "TRUE", I_PERF },
	{ "perfmgr_xmit_wait_log", T_BOOL, "FALSE", I_PERF },
	{ "perfmgr_xmit_wait_threshold", T_U32, "65535", I_PERF },
	{ "event_db_dump_file", T_STR, "(null)", I_PERF },
	{ "event_plugin_name", T_STR, "(null)", I_PLUGIN },
	{ "event_plugin_options", T_STR, "(null)", I_PLUGIN },
	{ "node_name_map_name", T_STR, "(null)", I_NAMES },
	{ "log_flags", T_U8, "0x03", X },
	{ "force_log_flush", T_BOOL, "FALSE", I_LOG },
	{ "log_file", T_STR, "/var/log/opensm.log", I_LOG },
	{ "log_max_size", T_U32, "0", I_LOG },
	{ "accum_log_file", T_BOOL, "TRUE", I_LOG },
	{ "per_module_logging_file", T_STR, "/etc/opensm/per-module-logging.conf", I_LOG },
	{ "dump_files_dir", T_STR, "/var/log/", I_FILES },
	{ "enable_quirks", T_BOOL, "FALSE", I_QUIRKS },
	{ "no_clients_rereg", T_BOOL, "FALSE", X },
	{ "disable_multicast", T_BOOL, "FALSE", I_MCAST },
	{ "exit_on_fatal", T_BOOL, "TRUE", I_DAEMON },
	{ "console", T_STR, "off", I_CONSOLE },
	{ "console_port", T_U16, "10000", I_CONSOLE },
	/* QoS: translated together (qos_tables()) */
	{ "qos", T_BOOL, "FALSE", X },
	{ "qos_policy_file", T_STR, "/etc/opensm/qos-policy.conf", X },
	{ "suppress_sl2vl_mad_status_errors", T_BOOL, "FALSE", X },
	{ "qos_max_vls", T_U32, "0", X },
	{ "qos_high_limit", T_I32, "-1", X },
	{ "qos_vlarb_high", T_STR, "(null)", X },
	{ "qos_vlarb_low", T_STR, "(null)", X },
	{ "qos_sl2vl", T_STR, "(null)", X },
#define QOS_PORT_TYPE(t)							\
	{ "qos_" t "_max_vls", T_U32, "0", X },					\
	{ "qos_" t "_high_limit", T_I32, "-1", X },				\
	{ "qos_" t "_vlarb_high", T_STR, "(null)", X },				\
	{ "qos_" t "_vlarb_low", T_STR, "(null)", X },				\
	{ "qos_" t "_sl2vl", T_STR, "(null)", X }
	QOS_PORT_TYPE("ca"),
	QOS_PORT_TYPE("sw0"),
	QOS_PORT_TYPE("swe"),
	QOS_PORT_TYPE("rtr"),
	{ "congestion_control", T_BOOL, "FALSE", I_CC },
	{ "cc_key", T_U64, "0x0000000000000000", I_CC },
	{ "cc_max_outstanding_mads", T_U32, "500", I_CC },
	{ "cc_sw_cong_setting_control_map", T_U32, "0x0", I_CC },
	{ "cc_sw_cong_setting_victim_mask", T_MASK256, "0x0", I_CC },
	{ "cc_sw_cong_setting_credit_mask", T_MASK256, "0x0", I_CC },
	{ "cc_sw_cong_setting_threshold", T_U8, "0x00", I_CC },
	{ "cc_sw_cong_setting_packet_size", T_U8, "0", I_CC },
	{ "cc_sw_cong_setting_credit_starvation_threshold", T_U8, "0x00", I_CC },
	{ "cc_sw_cong_setting_credit_starvation_return_delay", T_CCT1, "0:0", I_CC },
	{ "cc_sw_cong_setting_marking_rate", T_U16, "0", I_CC },
	{ "cc_ca_cong_setting_port_control", T_U16, "0x0000", I_CC },
	{ "cc_ca_cong_setting_control_map", T_U16, "0x0000", I_CC },
	{ "cc_ca_cong_setting_ccti_timer", T_SLVAL, "0 0", I_CC },
	{ "cc_ca_cong_setting_ccti_increase", T_SLVAL, "0 0", I_CC },
	{ "cc_ca_cong_setting_trigger_threshold", T_SLVAL, "0 0", I_CC },
	{ "cc_ca_cong_setting_ccti_min", T_SLVAL, "0 0", I_CC },
	{ "cc_cct", T_CCT, "(null)", I_CC },
	{ "prefix_routes_file", T_STR, "/etc/opensm/prefix-routes.conf", I_SA },
	{ "consolidate_ipv6_snm_req", T_BOOL, "FALSE", I_MCAST },
	{ "log_prefix", T_STR, "(null)", I_LOG },
};

#undef X
#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

/* ---- the translation's state ---- */

struct imp {
	const char *path;
	char *val[NOPTS];		/* the file's value (the last), NULL: not in the file */
	unsigned int line[NOPTS];	/* where it was */
	unsigned int times[NOPTS];	/* how many lines set it */
	const char *why[NOPTS];		/* not translated: why (overrides the table's) */
	bool done[NOPTS];		/* translated: has its smd key below */
	struct smd_config cfg;		/* every key written, as smd reads it */
	FILE *body;			/* the keys, with where each came from */
	char *body_text;
	size_t body_len;
	FILE *bad;			/* lines not understood */
	char *bad_text;
	size_t bad_len;
	FILE *refused;			/* values smd's key table refused */
	char *refused_text;
	size_t refused_len;
	unsigned int nbad;
	bool secret;			/* sm_key or m_key written: the file must stay private */
	FILE *err;
};

static int opt_index(const char *name)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (!strcmp(opts[i].name, name))
			return (int)i;
	return -1;
}

/*
 * The option's value in effect: the file's, else OpenSM's default. The
 * translators name options of the table only; another name reads as "".
 */
static const char *eff(const struct imp *im, const char *name)
{
	int i = opt_index(name);

	if (i < 0)
		return "";
	return im->val[i] ? im->val[i] : opts[i].def;
}

static bool given(const struct imp *im, const char *name)
{
	int i = opt_index(name);

	return i >= 0 && im->val[i] != NULL;
}

static uint64_t eff_num(const struct imp *im, const char *name)
{
	return strtoull(eff(im, name), NULL, 0);
}

static bool eff_true(const struct imp *im, const char *name)
{
	return !strcmp(eff(im, name), "TRUE");
}

static bool eff_null(const struct imp *im, const char *name)
{
	return !strcmp(eff(im, name), "(null)");
}

/* "(line 12)", or "(not in the file: OpenSM's default)" */
static const char *where(const struct imp *im, const char *name, char *buf, size_t len)
{
	int i = opt_index(name);

	if (i < 0 || !im->val[i])
		snprintf(buf, len, "not in the file: OpenSM's default");
	else if (im->times[i] > 1)
		snprintf(buf, len, "line %u, the last of %u", im->line[i], im->times[i]);
	else
		snprintf(buf, len, "line %u", im->line[i]);
	return buf;
}

static void mark(struct imp *im, const char *name, bool done, const char *why)
{
	int i = opt_index(name);

	if (i < 0)
		return;
	im->done[i] = done;
	if (why)
		im->why[i] = why;
}

/* Comment lines wrapped at 90 columns: "#" first (the first line's indent), then "#" rest */
static void comment2(FILE *out, const char *first, const char *rest, const char *text)
{
	const char *s = text, *indent = first;

	while (*s) {
		size_t width = 88 - strlen(indent), n = strlen(s), cut = n;

		if (n > width) {
			cut = width;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (!cut)
				cut = width;
		}
		fprintf(out, "#%s%.*s\n", indent, (int)cut, s);
		s += cut;
		while (*s == ' ')
			s++;
		indent = rest;
	}
}

static void comment(FILE *out, const char *indent, const char *text)
{
	comment2(out, indent, indent, text);
}

static void commentf(FILE *out, const char *indent, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void commentf(FILE *out, const char *indent, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	comment(out, indent, buf);
}

/*
 * One smd key, from the OpenSM option opt, with a note: checked by smd's
 * key table first. Refused: listed at the top instead, smd's default applies.
 */
static bool put(struct imp *im, const char *key, const char *value, const char *opt,
		const char *note)
{
	char err[256] = "", src[1200], w[64];
	bool ok;

	snprintf(src, sizeof(src), "%s %s (%s)", opt, eff(im, opt), where(im, opt, w, sizeof(w)));
	mark(im, opt, true, NULL);
	/* A '#' would end the value in smd.conf, a newline the line */
	if (strpbrk(value, "#\n")) {
		snprintf(err, sizeof(err), "'#' cannot be written in an smd.conf value");
		ok = false;
	} else {
		ok = config_set(&im->cfg, key, value, err, sizeof(err)) == 0;
	}
	if (!ok) {
		fprintf(im->refused, "%s: not translated, smd refuses %s = %s: %s; smd's default "
			"applies\n", src, key, value, err);
		return false;
	}
	fprintf(im->body, "\n");
	commentf(im->body, " ", "from %s", src);
	if (note)
		comment(im->body, "   ", note);
	fprintf(im->body, "%s = %s\n", key, *value ? value : "\"\"");
	if (!strcmp(key, "sm_key") || !strcmp(key, "sa_key") || !strcmp(key, "m_key"))
		im->secret |= strtoull(value, NULL, 0) != 0;
	return true;
}

/* ---- translators: each turns some options into smd keys ---- */

static void tr_port(struct imp *im)
{
	uint64_t guid = eff_num(im, "guid");
	char v[24] = "";

	if (guid)
		snprintf(v, sizeof(v), "0x%016" PRIx64, guid);
	put(im, "port", v, "guid", guid ? NULL : "0: the first port whose link is up, as OpenSM");
}

static void tr_keys(struct imp *im)
{
	uint64_t smk = eff_num(im, "sm_key"), sak = eff_num(im, "sa_key"), mk = eff_num(im, "m_key");
	char v[24];

	/* OpenSM's default SM_Key 1 is known to all: no secret to keep */
	if (smk == 1) {
		mark(im, "sm_key", false, "1 is OpenSM's default, known to everyone: smd keeps its "
		     "own default, no SM_Key (sm_key = 0); give every smd of the subnet the same "
		     "secret sm_key to make them authenticate each other");
	} else {
		snprintf(v, sizeof(v), "0x%016" PRIx64, smk);
		put(im, "sm_key", v, "sm_key", smk ? "smd shows other SMs a keyed hash of it, never "
		    "the key: only other smd with this key are its peers, an SM that does not "
		    "prove it takes no part in the election (smd(8), SECURITY)" : NULL);
	}
	/* OpenSM trusts SA requests that carry sa_key; its default 1 is no secret either */
	if (sak == 1) {
		mark(im, "sa_key", false, "1 is OpenSM's default, known to everyone: smd keeps no "
		     "sa_key, and its SA trusts the requests that carry sm_key (when one is set)");
	} else {
		snprintf(v, sizeof(v), "0x%016" PRIx64, sak);
		put(im, "sa_key", v, "sa_key", sak ? "smd's SA trusts the requests that carry it, "
		    "and no longer those that carry sm_key" : NULL);
	}
	snprintf(v, sizeof(v), "0x%016" PRIx64, mk);
	if (!mk) {
		put(im, "m_key", v, "m_key", "0: no M_Key, as OpenSM's default");
		mark(im, "m_key_lease_period", false, "used only with an m_key: smd's default "
		     "applies when you set one");
		mark(im, "m_key_protection_level", false, "used only with an m_key: smd's "
		     "default applies when you set one");
		return;
	}
	put(im, "m_key", v, "m_key", "OpenSM writes this key to every port; smd derives a key "
	    "of its own for each port from it. A port OpenSM protected refuses smd's Sets "
	    "until its lease runs out (m_key_lease_period), then smd takes it over; with "
	    "lease 0 it never runs out: give OpenSM a lease (and let it sweep) before the "
	    "switch, or clear the ports' keys");
	snprintf(v, sizeof(v), "%" PRIu64, eff_num(im, "m_key_protection_level"));
	put(im, "m_key_protect_bits", v, "m_key_protection_level", NULL);
	snprintf(v, sizeof(v), "%" PRIu64, eff_num(im, "m_key_lease_period"));
	put(im, "m_key_lease_period", v, "m_key_lease_period", eff_num(im, "m_key_lease_period") ?
	    NULL : "0: a port whose key smd does not know can never be taken back");
}

/* Options whose meaning is the same number in smd */
static void tr_same(struct imp *im, const char *key, const char *opt, const char *note)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRIu64, eff_num(im, opt));
	put(im, key, v, opt, note);
}

static void tr_prefix(struct imp *im)
{
	char v[24];

	snprintf(v, sizeof(v), "0x%016" PRIx64, eff_num(im, "subnet_prefix"));
	put(im, "subnet_prefix", v, "subnet_prefix", NULL);
}

/* OpenSM's routing engines by what they give (IBA 14.3: deadlock freedom is the SM's) */
static const struct {
	const char *osm, *smd;
} engines[] = {
	{ "minhop", "minhop" }, { "updn", "updn" }, { "dnup", "updn" },
	{ "ftree", "dfree" }, { "lash", "dfree" }, { "dor", "dfree" },
	{ "torus-2QoS", "dfree" }, { "nue", "dfree" }, { "dfsssp", "dfree" },
	{ "sssp", "dfree" }, { "file", "dfree" },
};

static void tr_routing(struct imp *im)
{
	char list[256], out[128] = "", note[900] = "";
	const char *v = eff(im, "routing_engine");
	bool multi_vl = false, to_dfree = false, dnup = false, minhop_only;
	size_t n = 0;

	if (!strcmp(v, "(null)")) {
		put(im, "routing_engine", "dfree,updn,minhop", "routing_engine", "none named: "
		    "OpenSM's default (minhop) becomes smd's: dfree, balanced and deadlock-free "
		    "on one VL on any topology, checked by smd's route verifier, then updn and "
		    "minhop if it fails");
	} else {
		snprintf(list, sizeof(list), "%s", v);
		for (char *save = NULL, *e = strtok_r(list, ",", &save); e;
		     e = strtok_r(NULL, ",", &save)) {
			const char *to = NULL;

			while (isspace((unsigned char)*e))
				e++;
			for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
				if (!strcmp(engines[i].osm, e))
					to = engines[i].smd;
			/* Unknown engines were reported when the file was read */
			if (!to)
				continue;
			multi_vl |= !strcmp(e, "lash") || !strcmp(e, "dfsssp") ||
				    !strcmp(e, "torus-2QoS") || !strcmp(e, "nue");
			to_dfree |= !strcmp(to, "dfree");
			dnup |= !strcmp(e, "dnup");
			if (!strstr(out, to))
				n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", n ? "," : "",
						      to);
		}
		minhop_only = !strcmp(out, "minhop");
		n = (size_t)snprintf(note, sizeof(note), "%s%s%s",
			 to_dfree ? "smd has none of OpenSM's ftree, lash, dor, torus-2QoS, nue, "
			 "dfsssp, sssp or file engines: dfree, smd's default, takes their place "
			 "(balanced over the links, deadlock-free on one VL on any topology, checked "
			 "by smd's route verifier). " : "",
			 dnup ? "dnup is up/down rooted the other way: smd's updn. " : "",
			 minhop_only ? "minhop is not deadlock-free on tori and irregular fabrics: "
			 "smd says so when it uses it; dfree is. " : "");
		while (n && n < sizeof(note) && note[n - 1] == ' ')
			note[--n] = 0;
		put(im, "routing_engine", out[0] ? out : "dfree,updn,minhop", "routing_engine",
		    note[0] ? note : NULL);
	}
	/* max_op_vls caps OperationalVLs; smd's max_vls is how many VLs routes spread over */
	snprintf(note, sizeof(note), "OpenSM's max_op_vls caps the VLs a port runs; smd makes "
		 "every VL both ends of a link offer operational, and max_vls is how many of "
		 "them its routes may spread over: 1 keeps the routes deadlock-free whatever SL "
		 "an application sends on.%s",
		 multi_vl && eff_num(im, "max_op_vls") > 1 ? " OpenSM's multi-VL engine spread "
		 "them over several VLs, which only PathRecord SLs are safe on: max_vls 2-8 (or "
		 "0) gives smd's layered routes, with that caveat (smd.conf(5))" : "");
	put(im, "max_vls", "1", "max_op_vls", note);
	/* OpenSM's unicast cache, when on, keeps routes over a loss: smd's repair does */
	if (eff_true(im, "use_ucast_cache"))
		put(im, "routing_repair", "yes", "use_ucast_cache", NULL);
	else
		mark(im, "use_ucast_cache", false, "OpenSM's default (routes computed afresh on "
		     "every change): smd keeps routing_repair = yes, its default, moving only the "
		     "routes that crossed what was lost");
}

static void tr_partitions(struct imp *im)
{
	char path[PATH_MAX], note[PATH_MAX + 128] = "";
	const char *v = eff(im, "partition_config_file");

	if (!strcmp(v, "(null)") || !*v) {
		mark(im, "partition_config_file", false, "none: every port a full member of the "
		     "default partition, as smd without partition_config");
		return;
	}
	/* smd reads a relative path from smd.conf's directory: write it whole */
	if (v[0] != '/') {
		char *copy = strdup(im->path);

		int n = snprintf(path, sizeof(path), "%s/%s", copy ? dirname(copy) : ".", v);

		free(copy);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			mark(im, "partition_config_file", false, "path too long: set "
			     "partition_config by hand");
			return;
		}
		snprintf(note, sizeof(note), "%s was relative: read from %s's directory", v,
			 im->path);
	} else {
		snprintf(path, sizeof(path), "%s", v);
	}
	if (access(path, R_OK) < 0) {
		mark(im, "partition_config_file", false, errno == ENOENT ? "no such file here: "
		     "OpenSM then makes every port a full member of the default partition, as "
		     "smd does without partition_config; copy the file and set partition_config "
		     "if OpenSM had one" : "cannot be read here: set partition_config by hand");
		return;
	}
	put(im, "partition_config", path, "partition_config_file", note[0] ? note : "smd "
	    "reads OpenSM's partitions.conf syntax (smd -nv prints how it reads it)");
}

/*
 * QoS: OpenSM's default tables (qos_* unset) are its built-in ones; smd
 * writes one SL-to-VL table and one pair of arbitration tables to every
 * port, so the per-port-type tables have no counterpart.
 */
#define OSM_QOS_SL2VL		"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7"
#define OSM_QOS_VLARB_HIGH	"0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0"
#define OSM_QOS_VLARB_LOW	"0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4"

static void tr_qos(struct imp *im)
{
	static const char *const types[] = { "ca", "sw0", "swe", "rtr" };
	static const char *const fields[] = { "max_vls", "high_limit", "vlarb_high", "vlarb_low",
					      "sl2vl" };
	const char *off = "qos FALSE: OpenSM wrote no QoS tables; smd's defaults write none "
			  "either with one-VL routes";
	char v[24], name[64];

	mark(im, "qos_policy_file", false, "smd has no QoS policy: every QoS class, service "
	     "and partition rides the path's SL");
	mark(im, "suppress_sl2vl_mad_status_errors", false, "smd logs a port that refuses its "
	     "SL-to-VL table and goes on");
	if (!eff_true(im, "qos")) {
		mark(im, "qos", false, off);
		for (size_t i = 0; i < NOPTS; i++)
			if (!strncmp(opts[i].name, "qos_", 4) && strcmp(opts[i].name,
								       "qos_policy_file"))
				im->why[i] = off;
		return;
	}
	mark(im, "qos", true, NULL);
	put(im, "sl2vl", eff_null(im, "qos_sl2vl") ? OSM_QOS_SL2VL : eff(im, "qos_sl2vl"),
	    "qos_sl2vl", eff_null(im, "qos_sl2vl") ? "(null): OpenSM's built-in table" : NULL);
	put(im, "vlarb_high", eff_null(im, "qos_vlarb_high") ? OSM_QOS_VLARB_HIGH :
	    eff(im, "qos_vlarb_high"), "qos_vlarb_high", eff_null(im, "qos_vlarb_high") ?
	    "(null): OpenSM's built-in table" : NULL);
	put(im, "vlarb_low", eff_null(im, "qos_vlarb_low") ? OSM_QOS_VLARB_LOW :
	    eff(im, "qos_vlarb_low"), "qos_vlarb_low", eff_null(im, "qos_vlarb_low") ?
	    "(null): OpenSM's built-in table" : NULL);
	snprintf(v, sizeof(v), "%" PRId64, (int64_t)strtoll(eff(im, "qos_high_limit"), NULL, 0));
	if (strtoll(eff(im, "qos_high_limit"), NULL, 0) < 0)
		put(im, "vlarb_high_limit", "0", "qos_high_limit", "-1: OpenSM's built-in 0");
	else
		put(im, "vlarb_high_limit", v, "qos_high_limit", NULL);
	mark(im, "qos_max_vls", false, "smd makes every VL both ends of a link offer "
	     "operational (max_vls below is about routes)");
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			snprintf(name, sizeof(name), "qos_%s_%s", types[t], fields[f]);
			mark(im, name, false, "smd writes the same QoS tables (sl2vl, vlarb_low and "
			     "vlarb_high below) to every port: per-port-type tables are not "
			     "translated");
		}
}

/*
 * OpenSM's log flags (osm_log.h): 0x01 errors, 0x02 info, 0x04 verbose,
 * 0x08 debug, 0x10 function calls, 0x20 MAD frames, 0x40 routing, 0x80 sys
 */
static void tr_log(struct imp *im)
{
	uint64_t f = eff_num(im, "log_flags");
	const char *lvl = f & 0x7c ? "debug" : f & 0x02 ? "info" : f & 0x01 ? "warning" : "error";

	put(im, "log_level", lvl, "log_flags", "OpenSM's 0x01 (errors) is smd's warning, 0x02 "
	    "(info) info, 0x04 and above (verbose, debug, frames, routing) debug");
}

static void tr_misc(struct imp *im)
{
	char v[24];

	put(im, "client_reregister", eff_true(im, "no_clients_rereg") ? "no" : "yes",
	    "no_clients_rereg", NULL);
	put(im, "trap_flood_action", eff_true(im, "babbling_port_policy") ? "disable" : "report",
	    "babbling_port_policy", eff_true(im, "babbling_port_policy") ? "a port that keeps "
	    "sending traps is disabled, as OpenSM's babbling port policy does" : NULL);
	/*
	 * Tuning: OpenSM's defaults are OpenSM's; smd has its own, measured.
	 * A value the operator chose is kept.
	 */
	if (given(im, "sminfo_polling_timeout") && eff_num(im, "sminfo_polling_timeout") != 10000) {
		uint64_t ms = eff_num(im, "sminfo_polling_timeout");

		snprintf(v, sizeof(v), "%" PRIu64, ms ? (ms + 999) / 1000 : 1);
		put(im, "sm_poll_interval", v, "sminfo_polling_timeout", "milliseconds to seconds");
	} else {
		mark(im, "sminfo_polling_timeout", false, "OpenSM's default: smd's own applies "
		     "(sm_poll_interval = 2 s)");
	}
	if (given(im, "polling_retry_number") && eff_num(im, "polling_retry_number") != 4)
		tr_same(im, "sm_poll_retries", "polling_retry_number", NULL);
	else
		mark(im, "polling_retry_number", false, "OpenSM's default: smd's own applies "
		     "(sm_poll_retries = 3)");
	if (given(im, "max_wire_smps") && eff_num(im, "max_wire_smps") != 4)
		tr_same(im, "max_outstanding_smps", "max_wire_smps", NULL);
	else
		mark(im, "max_wire_smps", false, "OpenSM's default: smd's own applies "
		     "(max_outstanding_smps = 64)");
	if (given(im, "transaction_timeout") && eff_num(im, "transaction_timeout") != 200)
		tr_same(im, "smp_timeout_ms", "transaction_timeout", NULL);
	else
		mark(im, "transaction_timeout", false, "OpenSM's default: smd's own applies "
		     "(smp_timeout_ms = 200)");
	if (given(im, "transaction_retries") && eff_num(im, "transaction_retries") != 3)
		tr_same(im, "smp_retries", "transaction_retries", NULL);
	else
		mark(im, "transaction_retries", false, "OpenSM's default: smd's own applies "
		     "(smp_retries = 3)");
}

/* ---- reading opensm.conf ---- */

static bool is_text(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c != '\n' && c != '\r' && c != '\t' && (c < 0x20 || c == 0x7f))
			return false;
	}
	return true;
}

static bool number_ok(const char *v, enum osm_type t)
{
	static const uint64_t max[] = { [T_U8] = UINT8_MAX, [T_U16] = UINT16_MAX,
					[T_U32] = UINT32_MAX, [T_U64] = UINT64_MAX };
	unsigned long long x;
	char *end;

	if (t == T_I32) {
		long long y;

		errno = 0;
		y = strtoll(v, &end, 0);
		return !errno && !*end && end != v && y >= INT32_MIN && y <= INT32_MAX;
	}
	if (!isdigit((unsigned char)*v))
		return false;
	errno = 0;
	x = strtoull(v, &end, 0);
	return !errno && !*end && x <= max[t];
}

static bool cct_entry_ok(const char *v)
{
	const char *colon = strchr(v, ':');

	return colon && colon != v && number_ok(colon + 1, T_U16) &&
	       strspn(v, "0123456789abcdefxABCDEFX") == (size_t)(colon - v);
}

/* A value OpenSM's parser for type t takes as meant; why: what is wrong */
static bool value_ok(const char *v, enum osm_type t, const char **why)
{
	switch (t) {
	case T_BOOL:
		*why = "expected TRUE or FALSE (OpenSM takes anything else as FALSE)";
		return !strcmp(v, "TRUE") || !strcmp(v, "FALSE");
	case T_U8: case T_U16: case T_U32: case T_U64: case T_I32:
		*why = t == T_I32 ? "expected a number" :
		       t == T_U8 ? "expected a number 0-255" :
		       t == T_U16 ? "expected a number 0-65535" : "expected a number";
		return number_ok(v, t);
	case T_STR:
		*why = "no value";
		return *v != 0;
	case T_MASK256: {
		const char *h = strncmp(v, "0x", 2) && strncmp(v, "0X", 2) ? v : v + 2;

		*why = "expected a hex mask of at most 64 digits";
		return *h && strlen(h) <= 64 && !h[strspn(h, "0123456789abcdefABCDEF")];
	}
	case T_CCT1:
		*why = "expected shift:multiplier";
		return cct_entry_ok(v);
	case T_CCT: {
		char buf[1024], *save = NULL;
		bool ok = true;

		*why = "expected (null) or shift:multiplier,...";
		if (!strcmp(v, "(null)"))
			return true;
		snprintf(buf, sizeof(buf), "%s", v);
		for (char *e = strtok_r(buf, ",", &save); e && ok; e = strtok_r(NULL, ",", &save))
			ok = cct_entry_ok(e);
		return ok && *v;
	}
	case T_SLVAL: {
		char buf[64], *sl, *val, *rest, *save = NULL;

		*why = "expected SL (0-15) and a value";
		if (strlen(v) >= sizeof(buf))
			return false;
		snprintf(buf, sizeof(buf), "%s", v);
		sl = strtok_r(buf, " \t", &save);
		val = sl ? strtok_r(NULL, " \t", &save) : NULL;
		rest = val ? strtok_r(NULL, " \t", &save) : NULL;
		return sl && val && !rest && number_ok(sl, T_U8) && strtoul(sl, NULL, 0) < 16 &&
		       number_ok(val, T_U16);
	}
	}
	return false;
}

static void not_understood(struct imp *im, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void not_understood(struct imp *im, unsigned int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(im->err, "smd: %s:%u: %s\n", im->path, line, msg);
	fprintf(im->bad, "line %u: %s\n", line, msg);
	im->nbad++;
}

static void trim_end(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

static void check_engines(struct imp *im, unsigned int lineno, const char *val)
{
	char list[1024];

	if (!strcmp(val, "(null)"))
		return;
	snprintf(list, sizeof(list), "%s", val);
	for (char *save = NULL, *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		bool known = false;

		while (isspace((unsigned char)*e))
			e++;
		for (size_t k = 0; k < sizeof(engines) / sizeof(engines[0]); k++)
			known |= !strcmp(engines[k].osm, e);
		if (!known)
			not_understood(im, lineno, "routing_engine: unknown engine '%.32s' (the "
				       "others on the line are translated)", e);
	}
}

/* Every line: the last value of each known option, the others reported */
static int read_file(struct imp *im, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	ssize_t len;
	int r = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		char *key, *val, *hash, *save = NULL;
		const char *why = "";
		int i;

		lineno++;
		if (len > 1023) {
			not_understood(im, lineno, "line longer than 1023 bytes (OpenSM reads "
				       "1023)");
			continue;
		}
		if (!is_text(line, (size_t)len)) {
			not_understood(im, lineno, "binary data (NUL or control bytes)");
			continue;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		key = strtok_r(line, " \t\r\n", &save);
		if (!key)
			continue;
		val = save ? save + strspn(save, " \t") : "";
		trim_end(val);
		i = opt_index(key);
		if (i < 0) {
			not_understood(im, lineno, "unknown OpenSM option '%.64s'", key);
			continue;
		}
		if (!*val) {
			not_understood(im, lineno, "%s: no value", key);
			continue;
		}
		if (!value_ok(val, opts[i].type, &why)) {
			not_understood(im, lineno, "%s '%.64s': %s", key, val, why);
			continue;
		}
		/* Unknown engine names: OpenSM skips them, smd cannot guess (the others count) */
		if (!strcmp(key, "routing_engine"))
			check_engines(im, lineno, val);
		/* Per-SL congestion settings hold one value per SL: keep them all */
		if (opts[i].type == T_SLVAL && im->val[i]) {
			size_t n = strlen(im->val[i]) + strlen(val) + 4;
			char *both = malloc(n);

			if (both)
				snprintf(both, n, "%s | %s", im->val[i], val);
			free(im->val[i]);
			im->val[i] = both;
		} else {
			free(im->val[i]);
			im->val[i] = strdup(val);
		}
		if (!im->val[i]) {
			r = -ENOMEM;
			break;
		}
		im->line[i] = lineno;
		im->times[i]++;
	}
	free(line);
	if (!r && ferror(f))
		r = -EIO;
	return r;
}

/* ---- writing smd.conf ---- */

/* Option k is listed for the same reason (the texts, not the pointers) */
static bool same_why(const struct imp *im, size_t k, const char *why)
{
	const char *w = im->why[k] ? im->why[k] : opts[k].instead;

	return w && !strcmp(w, why);
}

static void print_header(struct imp *im, FILE *out)
{
	bool any = false;

	fprintf(out, "# smd.conf translated from OpenSM's %s by smd --import-opensm.\n",
		im->path);
	fprintf(out, "# Check it with \"smd -n -c FILE\"; \"smd -nv -c FILE\" prints every key "
		"smd uses.\n");
	if (im->secret)
		fprintf(out, "# It sets sm_key, sa_key or m_key: keep it private (chmod 600), "
			"smd refuses it otherwise.\n");
	if (im->nbad) {
		fprintf(out, "#\n# NOT UNDERSTOOD (smd reported these lines on stderr too; "
			"they are not translated):\n");
		for (char *s = im->bad_text, *nl; s && *s; s = nl + 1) {
			nl = strchr(s, '\n');
			fprintf(out, "#   %.*s\n", (int)(nl - s), s);
		}
	}
	if (im->refused_len) {
		fprintf(out, "#\n# Values smd does not take:\n");
		for (char *s = im->refused_text, *nl; s && *s; s = nl + 1) {
			nl = strchr(s, '\n');
			*nl = 0;
			comment2(out, " - ", "   ", s);
		}
	}
	/* The options of the file without a key, grouped by what smd does instead */
	for (size_t i = 0; i < NOPTS; i++) {
		const char *why = im->why[i] ? im->why[i] : opts[i].instead;
		char list[4096];
		size_t n = 0;
		bool first = true;

		if (!im->val[i] || im->done[i] || !why)
			continue;
		/* Only at the first option of a group */
		for (size_t k = 0; k < i && first; k++)
			first = !(im->val[k] && !im->done[k] && same_why(im, k, why));
		if (!first)
			continue;
		if (!any)
			fprintf(out, "#\n# OpenSM options of the file without a counterpart in "
				"smd, their values, and what smd does\n# instead:\n");
		any = true;
		for (size_t k = i; k < NOPTS; k++) {
			if (!im->val[k] || im->done[k] || !same_why(im, k, why))
				continue;
			n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0,
					      "%s%s %s", n ? "; " : "", opts[k].name, im->val[k]);
			if (n >= sizeof(list))
				break;
		}
		fprintf(out, "#\n");
		comment2(out, " - ", "   ", why);
		comment(out, "     ", list);
	}
	fprintf(out, "#\n# OpenSM's LID cache: \"smctl import-guid2lid /var/cache/opensm/guid2lid\" "
		"before smd first runs,\n# or the key below (read only while smd's database has "
		"recorded no sweep).\n# opensm_guid2lid = /var/cache/opensm/guid2lid\n");
}

int import_opensm_conf(const char *path, FILE *out, FILE *err)
{
	struct imp im = { .path = path, .err = err };
	FILE *f;
	int r;

	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		fprintf(err, "smd: %s: %s\n", path, strerror(errno));
		return r;
	}
	config_defaults(&im.cfg);
	im.body = open_memstream(&im.body_text, &im.body_len);
	im.bad = open_memstream(&im.bad_text, &im.bad_len);
	im.refused = open_memstream(&im.refused_text, &im.refused_len);
	if (!im.body || !im.bad || !im.refused) {
		r = -ENOMEM;
		goto out;
	}
	r = read_file(&im, f);
	if (r < 0) {
		fprintf(err, "smd: %s: %s\n", path, strerror(-r));
		goto out;
	}
	tr_port(&im);
	tr_same(&im, "sm_priority", "sm_priority", NULL);
	tr_keys(&im);
	tr_prefix(&im);
	tr_same(&im, "lmc", "lmc", NULL);
	tr_same(&im, "packet_life_time", "packet_life_time", NULL);
	tr_same(&im, "subnet_timeout", "subnet_timeout", NULL);
	tr_same(&im, "sweep_interval", "sweep_interval", eff_num(&im, "sweep_interval") ? NULL :
		"0: no periodic sweep, traps and SIGHUP only, as OpenSM");
	tr_routing(&im);
	tr_partitions(&im);
	tr_qos(&im);
	tr_log(&im);
	tr_misc(&im);
	fflush(im.body);
	fflush(im.bad);
	fflush(im.refused);
	print_header(&im, out);
	fprintf(out, "%s", im.body_text ? im.body_text : "");
	r = im.nbad ? 1 : 0;
out:
	if (im.body)
		fclose(im.body);
	if (im.bad)
		fclose(im.bad);
	if (im.refused)
		fclose(im.refused);
	free(im.body_text);
	free(im.bad_text);
	free(im.refused_text);
	for (size_t i = 0; i < NOPTS; i++)
		free(im.val[i]);
	fclose(f);
	return r;
}

/* ---- guid2lid at the first start ---- */

/* The key's file: a relative path is smd.conf's directory's, as partition_config */
static int guid2lid_path(const char *file, const char *config_path, char *path, size_t len)
{
	char *copy;
	int n;

	if (file[0] == '/' || !config_path) {
		n = snprintf(path, len, "%s", file);
	} else {
		copy = strdup(config_path);
		if (!copy)
			return -ENOMEM;
		n = snprintf(path, len, "%s/%s", dirname(copy), file);
		free(copy);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int import_guid2lid_check(const struct smd_config *cfg, const char *config_path, char *err,
			  size_t errlen)
{
	char path[PATH_MAX];
	struct guid2lid g;
	int r;

	if (!cfg->opensm_guid2lid[0])
		return 0;
	r = guid2lid_path(cfg->opensm_guid2lid, config_path, path, sizeof(path));
	if (r < 0) {
		snprintf(err, errlen, "opensm_guid2lid %s: %s", cfg->opensm_guid2lid, strerror(-r));
		return r;
	}
	r = guid2lid_load(path, &g, err, errlen);
	guid2lid_free(&g);
	return r;
}

int import_guid2lid_start(struct smd *smd)
{
	const char *file = smd->cfg.opensm_guid2lid;
	char path[PATH_MAX], err[512];
	struct store_import_stats st;
	struct store_sweep sw;
	struct guid2lid g;
	int r;

	if (!file[0])
		return 0;
	if (!smd->store) {
		log_error("opensm_guid2lid %s: the database is unusable, so OpenSM's LIDs cannot "
			  "be imported; not starting (the fabric would be renumbered)", file);
		return -ENODEV;
	}
	r = store_last_sweep(smd->store, &sw);
	if (r == 0) {
		log_info("opensm_guid2lid %s: not read, the database has recorded sweeps (smctl "
			 "import-guid2lid imports it now)", file);
		return 0;
	}
	if (r != -ENOENT) {
		log_error("opensm_guid2lid %s: %s; not starting", file, store_errmsg(smd->store));
		return r;
	}
	r = guid2lid_path(file, smd->config_path, path, sizeof(path));
	if (r < 0) {
		log_error("opensm_guid2lid %s: %s; not starting", file, strerror(-r));
		return r;
	}
	r = guid2lid_load(path, &g, err, sizeof(err));
	if (r < 0) {
		log_error("opensm_guid2lid: %s; nothing imported, not starting (the fabric would "
			  "be renumbered)", err);
		return r;
	}
	r = store_lid_import(smd->store, g.e, g.n, path, (int64_t)time(NULL), &st);
	if (r == -EEXIST)
		log_error("opensm_guid2lid: %s:%u: %s; nothing imported, not starting", path,
			  g.line[st.clash], store_errmsg(smd->store));
	else if (r < 0)
		log_error("opensm_guid2lid %s: %s; nothing imported, not starting", path,
			  store_errmsg(smd->store));
	else
		log_notice("opensm_guid2lid: imported %zu LIDs from %s; %zu port GUIDs keep the "
			   "LID the database had (%zu of those differ)", st.imported, path,
			   st.known, st.differ);
	guid2lid_free(&g);
	return r;
}
