/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "duration.h"
#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "flamegraph.h"

/* GET /flamegraph?target=SPEC&window=10s: the flame graph page of flamegraph.h, under its own
 * Content-Security-Policy (its script and style allowed by hash). A window of the last seconds is live: the page
 * reloads itself; "all" (since the attach) too, as it grows while the target runs. */

#define FLAMEGRAPH_WINDOW_DEFAULT "10s"
#define FLAMEGRAPH_REFRESH_SEC 5

enum MHD_Result exporter_serve_flamegraph(Exporter *e, struct MHD_Connection *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *window = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "window");
        _cleanup_free_ char *target = NULL;
        FlamegraphOptions o = { .refresh_seconds = FLAMEGRAPH_REFRESH_SEC };
        uint64_t window_usec;
        char *data = NULL;
        size_t size = 0;
        sd_bus *bus;
        int r;

        if (!window)
                window = FLAMEGRAPH_WINDOW_DEFAULT;
        r = duration_parse(window, &window_usec);
        if (r < 0)
                return exporter_respond_error(c, &e->counters, 400,
                                              "invalid window: expected \"all\" or a duration such as 10s, 5m, "
                                              "1h, from 1 s to 31 days");
        r = exporter_bus_get(&bus);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, NULL, NULL);
        r = exporter_request_target(e, c, bus, &target);
        if (r < 0)
                return EXPORTER_ANSWERED(r);

        r = flamegraph_export(bus, target, window_usec, FLAMEGRAPH_HTML, &o, e->config->max_response_bytes,
                              &error, &data, &size);
        if (r == -EFBIG)
                return exporter_respond_error(c, &e->counters, 500,
                                              "the flame graph is larger than MaxResponseBytes=%llu",
                                              (unsigned long long)e->config->max_response_bytes);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, &error, target);
        return exporter_respond(c, &e->counters, 200, "text/html; charset=utf-8",
                                flamegraph_content_security_policy(), data, size, NULL, NULL);
}
