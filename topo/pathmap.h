/* SPDX-License-Identifier: MIT */
/*
 * Directed routes and what answers at their end: a map from a route (the
 * exit ports port[1..hops] from the SM's port, IBA 14.2.2) to a GUID, here
 * the PortGUID a NodeInfo sent along it returned (a CA port, or a
 * switch's port 0). smd/mkey.c uses it to give each SMP the M_Key of the
 * port it goes to. Pure data: no I/O.
 */
#ifndef SMD_TOPO_PATHMAP_H
#define SMD_TOPO_PATHMAP_H

#include <stddef.h>
#include <stdint.h>

struct path_map;

int path_map_new(struct path_map **out);
struct path_map *path_map_free(struct path_map *m);
/* Map the route to guid (a later put replaces it); -EINVAL for > 63 hops, -ENOMEM */
int path_map_put(struct path_map *m, const uint8_t *port, unsigned int hops, uint64_t guid);
/* The GUID mapped to the route, 0 when none */
uint64_t path_map_get(const struct path_map *m, const uint8_t *port, unsigned int hops);
void path_map_clear(struct path_map *m);
size_t path_map_count(const struct path_map *m);

#endif
