// SPDX-License-Identifier: MIT
/*
 * What the SA needs from the daemon beyond answering (sa/sa.h, struct
 * sa_env): SMPs it sends (GUIDInfo of alias GUIDs), services kept in
 * SQLite across restarts. One call from main() sets it up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sa_codec.h"
#include "util/log.h"
#include "smd/sa_owner.h"

_Static_assert(STORE_SERVICE_SIZE == SR_SIZE, "a stored service is one ServiceRecord");

struct smp_ctx {
	void (*done)(void *arg, int status, const uint8_t data[64]);
	void *arg;
};

static void smp_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct smp_ctx *c = arg;
	uint8_t none[64] = { 0 };

	c->done(c->arg, status, status == 0 ? resp->data : none);
	free(c);
}

/* One SMP the SA asked for, by directed route to the port */
static int sa_smp(void *ctx, const struct fab_port *p, uint8_t method, uint16_t attr,
		  uint32_t amod, const uint8_t data[64],
		  void (*done)(void *arg, int status, const uint8_t data[64]), void *arg)
{
	struct smd *smd = ctx;
	const struct dr_path *path = fabric_port_route(p);
	struct smp_ctx *c;
	struct smp req;
	int r;

	if (!path)
		return -EHOSTUNREACH;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->done = done;
	c->arg = arg;
	r = smp_init_dr(&req, method, attr, amod, path);
	if (r == 0) {
		memcpy(req.data, data, SMP_DATA_SIZE);
		r = txn_submit(smd->txn, &req, 0, smp_cb, c);
	}
	if (r < 0)
		free(c);
	return r;
}

/* A Report: the kernel waits timeout_ms for its ReportResp (the SA resends itself) */
static int sa_send_req(void *ctx, const uint8_t mad[MAD_SIZE], const struct mad_addr *to,
		       int timeout_ms)
{
	return smd_send(ctx, MAD_AGENT_SA, mad, MAD_SIZE, to, timeout_ms);
}

/* A service registered, replaced or gone: the database follows at once */
static void service_changed(void *ctx, const uint8_t rec[176], uint32_t lease, bool present)
{
	struct smd *smd = ctx;
	struct store_service v = { .present = present };
	struct service_record r;
	time_t now = time(NULL);

	if (!smd->store)
		return;
	service_record_decode(rec, &r);
	v.id = r.id;
	memcpy(v.gid, r.gid, 16);
	v.pkey = r.pkey;
	memcpy(v.record, rec, SR_SIZE);
	v.expires = lease == SR_LEASE_INFINITE ? 0 : (int64_t)now + lease;
	if (store_service_save(smd->store, &v, 1, now) < 0)
		log_warn("SA: service 0x%016" PRIx64 " not %s in the database (%s): it %s a "
			 "restart", r.id, present ? "saved" : "deleted", store_errmsg(smd->store),
			 present ? "may not survive" : "may come back after");
}

struct restore {
	struct smd *smd;
	time_t now;
	unsigned int kept, ended, refused;
};

static int restore_cb(void *ctx, const struct store_service *v)
{
	struct restore *rs = ctx;
	uint32_t lease = SR_LEASE_INFINITE;

	if (v->expires) {
		if (v->expires <= rs->now) {
			/* Its lease ended while smd was away */
			struct store_service gone = *v;

			gone.present = 0;
			store_service_save(rs->smd->store, &gone, 1, rs->now);
			rs->ended++;
			return 0;
		}
		lease = (uint32_t)(v->expires - rs->now < SR_LEASE_INFINITE - 1 ?
				   v->expires - rs->now : SR_LEASE_INFINITE - 1);
	}
	if (sa_service_restore(rs->smd->sa, v->record, lease) < 0)
		rs->refused++;
	else
		rs->kept++;
	return 0;
}

int sa_owner_init(struct smd *smd)
{
	struct restore rs = { .smd = smd, .now = time(NULL) };

	smd->sa_env.smp = sa_smp;
	smd->sa_env.send_req = sa_send_req;
	smd->sa_env.service_changed = service_changed;
	if (!smd->store)
		return 0;
	if (store_foreach_service(smd->store, restore_cb, &rs) < 0) {
		log_warn("SA: the services registered before this start are not known (%s)",
			 store_errmsg(smd->store));
		return 0;
	}
	if (rs.kept || rs.ended || rs.refused)
		log_info("SA: %u services registered before this start kept, %u whose lease "
			 "ended dropped%s", rs.kept, rs.ended, rs.refused ?
			 ", some beyond the SA's limit dropped" : "");
	return 0;
}
