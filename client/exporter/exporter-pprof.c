/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "parse-util.h"
#include "pprof-export.h"

/* GET /debug/pprof/profile?seconds=N&target=SPEC: Go's net/http/pprof to its clients (go tool pprof, Parca,
 * Alloy): seconds a positive integer, 30 when left out; the gzip'ed profile.proto as an attachment. Go's handler
 * profiles for the next N seconds; vprofd has kept the last seconds already, so the answer is the window that
 * ends now, without waiting (a target attached less than N seconds ago gives what it has). */

#define PPROF_SECONDS_DEFAULT 30

enum MHD_Result exporter_serve_pprof(Exporter *e, struct MHD_Connection *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *seconds_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
        _cleanup_free_ char *target = NULL;
        uint32_t seconds = PPROF_SECONDS_DEFAULT;
        void *data = NULL;
        size_t size = 0;
        sd_bus *bus;
        int r;

        if (seconds_s && parse_u32(seconds_s, 1, UINT32_MAX, &seconds) < 0)
                return exporter_respond_error(c, &e->counters, 400, "invalid seconds: expected a positive integer");
        if (seconds > e->config->max_seconds)
                return exporter_respond_error(c, &e->counters, 400,
                                              "invalid seconds: %u is more than MaxSeconds=%u", seconds,
                                              e->config->max_seconds);
        r = exporter_bus_get(&bus);
        if (r < 0)
                return exporter_respond_no_bus(e, c, r);
        r = exporter_request_target(e, c, bus, &target);
        if (r < 0)
                return EXPORTER_ANSWERED(r);

        r = pprof_export(bus, target, (uint64_t)seconds * 1000000U, false, e->config->max_response_bytes, &error,
                         &data, &size);
        if (r == -EFBIG)
                return exporter_respond_error(c, &e->counters, 500,
                                              "the profile is larger than MaxResponseBytes=%llu",
                                              (unsigned long long)e->config->max_response_bytes);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, &error, target);
        return exporter_respond(c, &e->counters, 200, "application/octet-stream", NULL, data, size,
                                MHD_HTTP_HEADER_CONTENT_DISPOSITION, "attachment; filename=\"profile\"");
}
