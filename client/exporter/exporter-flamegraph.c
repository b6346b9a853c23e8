/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "exporter-escape.h"
#include "exporter-targets.h"
#include "flamegraph.h"

/* GET /flamegraph?target=SPEC&window=10s[&base=60s[@AGO]]: the flame graph page of flamegraph.h, under its own
 * Content-Security-Policy (its script and style allowed by hash); with base, the differential flame graph of the
 * window against that base (vprofctl diff's --base-window), and the page's header links to the other choices.
 * While the target runs the page reloads itself, whatever the window: the last seconds move, and "all" (since
 * the attach) grows; an exited target's page is fixed. */

#define FLAMEGRAPH_WINDOW_DEFAULT "10s"
#define FLAMEGRAPH_REFRESH_SEC 5

/* The base windows the page offers: none, the minute before the window, and the window as long as it was ten
 * and sixty seconds before. */
static const char *const base_choices[][2] = {
        { "", "none" },
        { "60s", "the 60 s before" },
        { "10s@10s", "10 s, 10 s before" },
        { "10s@60s", "10 s, a minute before" },
};

/* The page's links to itself with each base: "/flamegraph?target=T&window=W&base=B", in one buffer (freed by
 * the caller) that the hrefs point into. */
static int base_links(const char *target, const char *window, FlamegraphLink links[], char **ret_buffer)
{
        char *buf = NULL;
        size_t size = 0, offsets[ELEMENTSOF(base_choices)];
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(base_choices); i++) {
                offsets[i] = (size_t)ftell(f);
                fputs("/flamegraph?target=", f);
                exporter_write_url_component(f, target);
                fputs("&window=", f);
                exporter_write_url_component(f, window);
                if (base_choices[i][0][0]) {
                        fputs("&base=", f);
                        exporter_write_url_component(f, base_choices[i][0]);
                }
                fputc('\0', f);
        }
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        for (size_t i = 0; i < ELEMENTSOF(base_choices); i++)
                links[i] = (FlamegraphLink){ .label = base_choices[i][1], .href = buf + offsets[i] };
        *ret_buffer = buf;
        return 0;
}

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
        const char *base = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "base");
        _cleanup_free_ char *target = NULL, *hrefs = NULL;
        FlamegraphLink links[ELEMENTSOF(base_choices)];
        FlamegraphOptions o = {};
        uint64_t window_usec, base_usec = 0, base_ago_usec = 0;
        bool has_ago = false;
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
        if (base && base[0] != '\0') {
                if (window_usec == 0 || duration_parse_at(base, &base_usec, &base_ago_usec, &has_ago) < 0)
                        return exporter_respond_error(c, &e->counters, 400,
                                                      "invalid base: expected a duration, or DURATION@AGO such "
                                                      "as 60s or 10s@20s, with a window of seconds");
                /* Without AGO the base ends where the window begins, as vprofctl diff's. */
                if (!has_ago)
                        base_ago_usec = window_usec;
        }
        r = exporter_bus_get(&bus);
        if (r < 0)
                return exporter_respond_no_bus(e, c, r);
        r = exporter_request_target(e, c, bus, &target);
        if (r < 0)
                return EXPORTER_ANSWERED(r);

        o.refresh_seconds = target_is_live(e, bus, target) ? FLAMEGRAPH_REFRESH_SEC : 0;
        if (window_usec > 0 && base_links(target, window, links, &hrefs) >= 0) {
                o.links = links;
                o.n_links = ELEMENTSOF(links);
        }
        if (base_usec > 0)
                r = flamegraph_export_diff(bus, target, window_usec, base_usec, base_ago_usec, FLAMEGRAPH_HTML, &o,
                                           e->config->max_response_bytes, &error, &data, &size);
        else
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
