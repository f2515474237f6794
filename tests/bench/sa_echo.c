// SPDX-License-Identifier: MIT
/*
 * sa_echo: the cheapest SA there can be, to measure what the simulator
 * itself allows (tests/bench/sa_bench.sh). It holds issm on its port (so
 * ibsim hands it the requests sent to the SM LID, once an SM brought the
 * subnet up and left) and answers every SA Get at once: a PathRecord with
 * one precomputed record whose SLID and DLID are the ones asked for, any
 * other attribute with the request's own record. The record carries the
 * LIDs and GIDs asked for (a client checks them). No fabric model, no
 * checks: it is a ceiling, not an SA. Runs until killed.
 *
 * Usage: sa_echo [PORT]
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "mad/port.h"
#include "mad/sa_codec.h"
#include "mad/wire.h"

int main(int argc, char **argv)
{
	struct path_record tmpl = {
		.reversible = 1, .pkey = 0xffff, .mtu_selector = SA_SELECTOR_EQ, .mtu = 4,
		.rate_selector = SA_SELECTOR_EQ, .rate = 3, .plt_selector = SA_SELECTOR_EQ,
		.packet_life_time = 18,
	};
	struct mad_port *port;
	struct pollfd pfd;
	int r;

	r = mad_port_open_mode(argc > 1 ? argv[1] : NULL, MAD_PORT_SM, &port);
	if (r < 0) {
		fprintf(stderr, "sa_echo: cannot open the port: %s\n", strerror(-r));
		return 1;
	}
	pfd = (struct pollfd){ .fd = mad_port_fd(port), .events = POLLIN };
	printf("sa_echo: ready\n");
	fflush(stdout);
	for (;;) {
		uint8_t buf[MAD_SIZE];
		struct mad_addr from;
		struct sa_mad m;
		size_t len;
		int st;

		/* umad2sim's poll() may miss a queued MAD: read either way */
		poll(&pfd, 1, 100);
		while (mad_port_recv(port, buf, &len, &from, &st) == 0) {
			if (sa_mad_decode(buf, len, &m) < 0 || m.hdr.method != SA_METHOD_GET)
				continue;
			m.hdr.method = SA_METHOD_GET_RESP;
			m.hdr.status = 0;
			if (m.hdr.attr_id == SA_ATTR_PATH_RECORD) {
				struct path_record pr;

				path_record_decode(m.data, &pr);
				tmpl.slid = pr.slid;
				tmpl.dlid = pr.dlid;
				memcpy(tmpl.sgid, pr.sgid, 16);
				memcpy(tmpl.dgid, pr.dgid, 16);
				memset(m.data, 0, sizeof(m.data));
				path_record_encode(&tmpl, m.data);
				m.attr_offset = 64 / 8;
			} else {
				m.attr_offset = (uint16_t)((sa_record_size(m.hdr.attr_id) + 7) / 8);
			}
			m.comp_mask = 0;
			sa_mad_encode(&m, buf);
			mad_port_send(port, MAD_AGENT_SA, buf, from.slid, from.qpn, 0);
		}
	}
}
