/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "exporter-http.h"

/* One file each: exporter-index.c, exporter-targets-json.c, exporter-metrics.c, exporter-pprof.c,
 * exporter-flamegraph.c. */
enum MHD_Result exporter_serve_index(Exporter *e, struct MHD_Connection *c);
enum MHD_Result exporter_serve_targets(Exporter *e, struct MHD_Connection *c);
enum MHD_Result exporter_serve_metrics(Exporter *e, struct MHD_Connection *c);
enum MHD_Result exporter_serve_pprof(Exporter *e, struct MHD_Connection *c);
enum MHD_Result exporter_serve_flamegraph(Exporter *e, struct MHD_Connection *c);

/* The answer to a failed call to vprofd (exporter-status.h); spec, when the call named a target, is what an
 * unknown target's answer names. */
enum MHD_Result exporter_respond_bus_error(Exporter *e, struct MHD_Connection *c, int r, const sd_bus_error *error,
                                           const char *spec);

/* The target of a request: its "target" parameter, checked against the allow-list (outside: 404, as if it did
 * not exist), or the one scrape target when it is omitted. Returns 0 with *ret (malloc()ed), or queues the
 * error answer and returns its MHD_Result as a negative number (-1 - result), which the handler returns. */
int exporter_request_target(Exporter *e, struct MHD_Connection *c, sd_bus *bus, char **ret);
#define EXPORTER_ANSWERED(r) ((enum MHD_Result)(-1 - (r)))
