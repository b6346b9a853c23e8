/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "exporter-escape.h"
#include "exporter-targets.h"

/* GET /: the scrape targets, each with its flame graph of the last 10 s and its pprof profile. Plain HTML
 * without style or script, so that its policy allows nothing at all. */

static void write_link(FILE *f, const char *path, const char *spec, const char *text)
{
        fprintf(f, "<a href=\"%s", path);
        exporter_write_url_component(f, spec);
        fputs("\">", f);
        exporter_write_html(f, text);
        fputs("</a>", f);
}

enum MHD_Result exporter_serve_index(Exporter *e, struct MHD_Connection *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(scrape_target_list_freep) ScrapeTargetList *l = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        sd_bus *bus;
        FILE *f;
        int r;

        r = exporter_bus_get(&bus);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, NULL, NULL);
        r = exporter_targets_list(bus, e->config, &error, &l);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, &error, NULL);

        f = open_memstream(&text, &size);
        if (!f)
                return exporter_respond_error(c, &e->counters, 500, "out of memory");
        fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vprof</title></head>\n"
              "<body><h1>vprof: targets</h1>\n",
              f);
        if (l->n_targets == 0)
                fputs("<p>No target is attached (<code>vprofctl attach</code>).</p>\n", f);
        else {
                fputs("<table><thead><tr><th>target</th><th>kind</th><th>command</th><th>state</th>"
                      "<th>samples</th><th>flame graph</th><th>pprof</th></tr></thead><tbody>\n",
                      f);
                for (size_t i = 0; i < l->n_targets; i++) {
                        const ScrapeTarget *t = &l->targets[i];

                        fputs("<tr><td>", f);
                        exporter_write_html(f, t->spec);
                        fputs("</td><td>", f);
                        exporter_write_html(f, t->kind);
                        fputs("</td><td>", f);
                        exporter_write_html(f, t->comm);
                        fputs("</td><td>", f);
                        exporter_write_html(f, t->state);
                        fprintf(f, "</td><td>%" PRIu64 "</td><td>", t->samples);
                        write_link(f, "/flamegraph?window=10s&amp;target=", t->spec, "last 10 s");
                        fputs("</td><td>", f);
                        write_link(f, "/debug/pprof/profile?seconds=10&amp;target=", t->spec, "profile (10 s)");
                        fputs("</td></tr>\n", f);
                }
                fputs("</tbody></table>\n", f);
        }
        fputs("<p><a href=\"/targets\">/targets</a> (service discovery), <a href=\"/metrics\">/metrics</a></p>\n"
              "</body></html>\n",
              f);
        if (fclose(f) != 0)
                return exporter_respond_error(c, &e->counters, 500, "out of memory");
        return exporter_respond(c, &e->counters, 200, "text/html; charset=utf-8", "default-src 'none'",
                                TAKE_PTR(text), size, NULL, NULL);
}
