/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "macros.h"

/* The status codes that the exporter counts in /metrics (vprof_exporter_requests_total{code=...}); any other
 * is counted as "other". */
#define EXPORTER_STATUS_CODES 200, 400, 401, 403, 404, 405, 414, 421, 500, 503
#define EXPORTER_N_STATUS_CODES 11 /* the codes above and "other" */

typedef struct ExporterCounters {
        _Atomic uint64_t requests[EXPORTER_N_STATUS_CODES];
        _Atomic uint64_t connections_rejected; /* past MaxConnections= */
        _Atomic uint64_t connections_timed_out; /* a request not received within RequestTimeoutSec= */
        _Atomic uint64_t connections_open;
        _Atomic uint64_t auth_failures; /* a wrong bearer token */
} ExporterCounters;

/* The code of counters->requests[i] (0 for "other"). */
unsigned exporter_status_code_at(size_t i);

/* Queues the answer, with the security headers of every answer, and counts it. data is malloc()ed and taken
 * (freed whatever happens); content_type like "text/plain; charset=utf-8". For an HTML answer csp is its
 * Content-Security-Policy (NULL: "default-src 'none'", which every other answer gets). extra_name/extra_value
 * one more header or NULL. */
enum MHD_Result exporter_respond(struct MHD_Connection *c, ExporterCounters *counters, unsigned status,
                                 const char *content_type, const char *csp, char *data, size_t size,
                                 const char *extra_name, const char *extra_value);

/* A one-line text/plain error: the reason and a newline. */
enum MHD_Result exporter_respond_error(struct MHD_Connection *c, ExporterCounters *counters, unsigned status,
                                       const char *format, ...) _printf_(4, 5);
