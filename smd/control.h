/* SPDX-License-Identifier: MIT */
/*
 * The control socket's server in the daemon: smctl talks to it over a unix
 * stream socket (util/ctl_proto.h: the protocol), served from the daemon's
 * sd-event loop without ever blocking it.
 *
 * Who may do what (SO_PEERCRED): the read-only commands (status,
 * check-routes, metrics, health, help) answer anyone who can connect; the
 * ones that change the SM (resweep, sm-enable, port enable) only root, the daemon's own user, and
 * members of control_group. The socket is mode 0660, of control_group
 * when one is set.
 */
#ifndef SMD_CONTROL_H
#define SMD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/ctl_proto.h"

struct smd;
struct control;
struct sd_event;


struct control_ops {
	/*
	 * Sweep as soon as the loop can; heavy: a full re-discovery. 0, or
	 * -EBUSY when this SM does not sweep (standby, not active).
	 */
	int (*resweep)(void *ctx, bool heavy);
	/* A NOT-ACTIVE SM looks for the master again (who: for the log); -EALREADY otherwise */
	int (*sm_enable)(void *ctx, const char *who);
	/*
	 * The health rules changed what is out of service (smctl port enable):
	 * a heavy sweep as soon as the loop can. 0, or -EBUSY when this SM
	 * does not sweep.
	 */
	int (*health_sweep)(void *ctx);
};

/*
 * The socket to serve: cfg (control_socket) when set, else
 * $RUNTIME_DIRECTORY/control (systemd's RuntimeDirectory=), else
 * CONTROL_DEFAULT_PATH. Returns 0, 1 when cfg is "none" (no socket), or
 * -ENAMETOOLONG.
 */
int control_socket_path(const char *cfg, char *buf, size_t len);
/*
 * Listen on path (its directory is created when missing). A stale socket
 * left by a dead smd is replaced; one that another process still answers
 * on is not (-EADDRINUSE), nor anything that is not a socket (-EEXIST).
 */
int control_open(struct smd *smd, struct sd_event *ev, const char *path,
		 const struct control_ops *ops, void *ctx, struct control **out);
/* Closes every client and removes the socket; returns NULL */
struct control *control_close(struct control *c);
/* A sweep ended (smd->stats is up to date): answer the clients waiting for one */
void control_sweep_done(struct control *c);
/* No sweep will come, because why: answer the waiting clients with an error */
void control_sweep_cancel(struct control *c, const char *why);
/*
 * An answer is being written in pieces (metrics) and its reader takes
 * them: the loop should not sleep on the MAD descriptor meanwhile
 */
bool control_streaming(const struct control *c);
/* One line for systemd's STATUS=: the SM state, the subnet, the last sweep, problems */
void control_summary(const struct smd *smd, char *buf, size_t len);

#endif
