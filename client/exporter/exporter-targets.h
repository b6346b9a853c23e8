/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "exporter-config.h"
#include "macros.h"

/* What a scrape may name: each group (a unit, a cgroup, a process with its children) by its spec, and each
 * process attached alone by its PID, as the allow-list lets them through. A group's members are not scrape
 * targets of their own: the group's profile holds them. */
typedef struct ScrapeTarget {
        char *spec;
        const char *kind; /* "process", "unit", "cgroup" or "children" */
        uint32_t pid;     /* the process, or the one a "children" group follows; 0 for none */
        char *comm;       /* the process's, or the first member's; "" when unknown */
        const char *state; /* "running", or "exited" when every process is gone */
        uint32_t frequency; /* 0 when no member says */
        uint64_t samples;   /* kept, all members together */
} ScrapeTarget;

typedef struct ScrapeTargetList {
        ScrapeTarget *targets;
        size_t n_targets;
} ScrapeTargetList;

ScrapeTargetList *scrape_target_list_free(ScrapeTargetList *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(ScrapeTargetList *, scrape_target_list_free);

/* From ListTargets and ListGroups; bus errors as bus-client.h's calls. */
int exporter_targets_list(sd_bus *bus, const ExporterConfig *config, sd_bus_error *error,
                          ScrapeTargetList **ret);
