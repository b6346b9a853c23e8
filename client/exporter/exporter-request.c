/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "exporter-status.h"
#include "exporter-targets.h"
#include "target-spec.h"

enum MHD_Result exporter_respond_bus_error(Exporter *e, struct MHD_Connection *c, int r, const sd_bus_error *error,
                                           const char *spec)
{
        char reason[512];
        unsigned status;

        exporter_bus_check(r);
        status = exporter_status_from_bus(r, error, reason, sizeof(reason));
        /* The same words whether the target is gone, never was, or is outside the allow-list. */
        if (status == 404 && spec)
                return exporter_respond_error(c, &e->counters, 404, "unknown target: %s", spec);
        return exporter_respond_error(c, &e->counters, status, "%s", reason);
}

static int answered(enum MHD_Result r)
{
        return -1 - (int)r;
}

int exporter_request_target(Exporter *e, struct MHD_Connection *c, sd_bus *bus, char **ret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(scrape_target_list_freep) ScrapeTargetList *l = NULL;
        const char *target = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "target");
        TargetSpec spec;
        char *s;
        int r;

        if (target) {
                if (target_spec_parse(target, &spec) < 0)
                        return answered(exporter_respond_error(
                                c, &e->counters, 400,
                                "invalid target: expected a PID, a unit name or a cgroup path"));
                if (!exporter_config_allows(e->config, target))
                        return answered(exporter_respond_error(c, &e->counters, 404, "unknown target: %s", target));
                s = strdup(target);
        } else {
                r = exporter_targets_list(bus, e->config, &error, &l);
                if (r < 0)
                        return answered(exporter_respond_bus_error(e, c, r, &error, NULL));
                if (l->n_targets != 1)
                        return answered(exporter_respond_error(
                                c, &e->counters, 400,
                                "the target parameter is required: %zu targets are attached, not one",
                                l->n_targets));
                s = strdup(l->targets[0].spec);
        }
        if (!s)
                return answered(exporter_respond_error(c, &e->counters, 500, "out of memory"));
        *ret = s;
        return 0;
}
