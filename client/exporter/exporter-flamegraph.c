/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "exporter-targets.h"
#include "flamegraph.h"

/* GET /flamegraph?target=SPEC&window=10s: the flame graph page of flamegraph.h, under its own
 * Content-Security-Policy (its script and style allowed by hash). While the target runs the page reloads itself,
 * whatever the window: the last seconds move, and "all" (since the attach) grows; an exited target's page is
 * fixed. */

#define FLAMEGRAPH_WINDOW_DEFAULT "10s"
#define FLAMEGRAPH_REFRESH_SEC 5

/* Whether the page should reload itself: the target still runs (a process, or a group with a process left). A
 * target that ListTargets does not show (a failed call) counts as live: the reload then says what changed. */
static bool target_is_live(Exporter *e, sd_bus *bus, const char *spec)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(scrape_target_list_freep) ScrapeTargetList *l = NULL;

        if (exporter_targets_list(bus, e->config, &error, &l) < 0)
                return true;
        for (size_t i = 0; i < l->n_targets; i++)
                if (strcmp(l->targets[i].spec, spec) == 0)
                        return strcmp(l->targets[i].state, "exited") != 0;
        return true;
}

enum MHD_Result exporter_serve_flamegraph(Exporter *e, struct MHD_Connection *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *window = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "window");
        _cleanup_free_ char *target = NULL;
        FlamegraphOptions o = {};
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
                return exporter_respond_no_bus(e, c, r);
        r = exporter_request_target(e, c, bus, &target);
        if (r < 0)
                return EXPORTER_ANSWERED(r);

        o.refresh_seconds = target_is_live(e, bus, target) ? FLAMEGRAPH_REFRESH_SEC : 0;
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
