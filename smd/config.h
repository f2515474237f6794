/* SPDX-License-Identifier: MIT */
/*
 * smd.conf: "key = value" lines, '#' comments. Every key is documented in
 * smd.conf(5); `smd -n` checks a file and `smd -nv` prints it back
 * normalized, in a form that parses again.
 */
#ifndef SMD_CONFIG_H
#define SMD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A VL arbitration table as configured (IBA 14.2.5.9): at most 64 entries */
#define CONFIG_VLARB_MAX	64
struct config_vlarb {
	bool automatic;			/* "auto": every data VL in use, weight 64 */
	unsigned int n;
	struct {
		uint8_t vl, weight;
	} e[CONFIG_VLARB_MAX];
};

/* A QoS SL-to-VL table, SL 0 first */
struct config_sl2vl {
	bool set;
	uint8_t vl[16];
};

struct smd_config {
	char port[128];			/* "" = first port with link up */
	char db[PATH_MAX];
	unsigned int max_outstanding_smps;
	unsigned int min_outstanding_smps;	/* the adaptive window's floor */
	unsigned int smp_timeout_ms;
	unsigned int smp_retries;
	unsigned int lmc;
	uint64_t subnet_prefix;
	unsigned int packet_life_time;	/* SwitchInfo.LifeTimeValue */
	unsigned int subnet_timeout;	/* PortInfo.SubnetTimeOut */
	unsigned int sm_priority;	/* SMInfo.Priority */
	unsigned int sm_poll_interval;	/* seconds between a standby's polls of the master */
	unsigned int sm_poll_retries;	/* polls the master may miss before a takeover */
	char routing_engine[128];	/* an ordered list: "dfree,updn,minhop" */
	/*
	 * Data VLs routes may use to stay deadlock-free: 1 (the default: the
	 * routes alone are deadlock-free, whatever SL traffic uses), or more,
	 * 0 = what the ports allow (layered routes: only SA-given SLs are safe)
	 */
	unsigned int max_vls;
	struct config_sl2vl sl2vl;	/* QoS: SL-to-VL table of every port (max_vls 1 only) */
	bool routing_repair;		/* lost cables: re-route only the routes they carried */
	struct config_vlarb vlarb_low;	/* VLArbitration tables on every port */
	struct config_vlarb vlarb_high;
	unsigned int vlarb_high_limit;	/* PortInfo.VLHighLimit */
	int log_level;
	unsigned int sweep_interval;	/* seconds; 0 = only on events */
	char capture[PATH_MAX];		/* pcap file of every MAD; "" = no capture */
	unsigned int capture_max_mb;	/* rotate at this size; 0 = no limit */
	unsigned int capture_classes;	/* CAPTURE_CLASS_* (mad/capture.h) */
	/* smctl's socket; "" = $RUNTIME_DIRECTORY/control or /run/smd/control, "none" = off */
	char control_socket[108];	/* sizeof(sockaddr_un.sun_path) */
	unsigned int ready_timeout;	/* seconds to wait for the subnet before READY=1 */
	/* Multicast: the IPoIB broadcast group of the default partition */
	bool ipoib;			/* it exists from the start */
	unsigned int ipoib_mtu;		/* its MTU, IBA code (4: 2048 bytes) */
	unsigned int ipoib_rate;	/* its rate, IBA code (3: 10 Gb/s) */
	unsigned int ipoib_sl;
	bool client_reregister;		/* a new master asks hosts to join again */
	/* Partitions: an OpenSM partitions.conf; "" = none (every port in Default) */
	char partition_config[PATH_MAX];
	/* OpenSM's guid2lid, imported at the first start (smd/import_opensm.h); "": none */
	char opensm_guid2lid[PATH_MAX];
	/* issue 21: the fabric as designed (ibnetdiscover format); "" = none */
	char cabling_plan[PATH_MAX];
	bool cabling_enforce;		/* wrong switch-to-switch links stay at INIT */
	/* issue 12: trust nothing on the wire */
	uint64_t sm_key;		/* SMInfo.SM_Key shared by this subnet's SMs; 0: none */
	/* The SM_Key an SA request carries to be trusted; 0: sm_key's (issue 23) */
	uint64_t sa_key;
	uint64_t m_key;			/* the secret every port's M_Key is derived from; 0: off */
	unsigned int m_key_protect_bits;	/* PortInfo.M_KeyProtectBits written with it */
	unsigned int m_key_lease_period;	/* PortInfo.M_KeyLeasePeriod, seconds */
	unsigned int trap_flood_action;	/* CONFIG_TRAP_FLOOD_* */
	char control_group[64];		/* may use changing smctl commands; "": root */
	/* issue 20: the performance manager and the health rules */
	unsigned int perf_interval;	/* seconds between counter sweeps; 0 = off */
	unsigned int health_window;	/* seconds the rules count in */
	unsigned int health_symbol_errors;	/* thresholds within the window; 0 = rule off */
	unsigned int health_link_downs;
	unsigned int health_rcv_errors;
	bool health_degraded;		/* the degraded-link rule */
	unsigned int health_action;	/* CONFIG_HEALTH_* */
};

/* What smd does with an unhealthy port */
#define CONFIG_HEALTH_REPORT	0	/* log it once per rule, count, show */
#define CONFIG_HEALTH_ISOLATE	1	/* also route around its link (it stays up) */

/* What smd does to a port that floods it with traps */
#define CONFIG_TRAP_FLOOD_REPORT	0	/* log it, and repress its traps */
#define CONFIG_TRAP_FLOOD_DISABLE	1	/* also disable the port (PortInfo Set) */

void config_defaults(struct smd_config *c);
/*
 * 0, or -errno with a "file:line: reason" message in err. A file that sets
 * sm_key, sa_key or m_key must not be readable or writable by others (-EACCES).
 */
int config_load(struct smd_config *c, const char *path, char *err, size_t errlen);
/* Set one key from a string (config file and command line share this) */
int config_set(struct smd_config *c, const char *key, const char *value, char *err,
	       size_t errlen);
/* Every key, in a form config_load reads back */
void config_print(const struct smd_config *c, FILE *out);
/*
 * SIGHUP: the keys that may change in a running daemon take their values
 * from next; the others keep theirs, with a warning for each that differs.
 */
void config_reload(struct smd_config *run, const struct smd_config *next);
/* The i-th key's name and whether SIGHUP applies it; NULL past the last */
const char *config_key_name(size_t i, bool *live);

#endif
