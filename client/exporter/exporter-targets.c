/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-client-groups.h"
#include "bus-client.h"
#include "exporter-targets.h"

ScrapeTargetList *scrape_target_list_free(ScrapeTargetList *l)
{
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_targets; i++) {
                free(l->targets[i].spec);
                free(l->targets[i].comm);
        }
        free(l->targets);
        free(l);
        return NULL;
}

static int add(ScrapeTargetList *l, const char *spec, const char *kind, uint32_t pid, const char *comm,
               const char *state, uint32_t frequency, uint64_t samples)
{
        ScrapeTarget *n = reallocarray(l->targets, l->n_targets + 1, sizeof(*n));

        if (!n)
                return -ENOMEM;
        l->targets = n;
        n[l->n_targets] = (ScrapeTarget){
                .spec = strdup(spec),
                .kind = kind,
                .pid = pid,
                .comm = strdup(comm ?: ""),
                .state = state,
                .frequency = frequency,
                .samples = samples,
        };
        l->n_targets++;
        if (!n[l->n_targets - 1].spec || !n[l->n_targets - 1].comm)
                return -ENOMEM;
        return 0;
}

static const char *group_kind(const char *kind)
{
        if (strcmp(kind, "unit") == 0)
                return "unit";
        if (strcmp(kind, "cgroup") == 0)
                return "cgroup";
        return "children";
}

int exporter_targets_list(sd_bus *bus, const ExporterConfig *config, sd_bus_error *error,
                          ScrapeTargetList **ret)
{
        _cleanup_(scrape_target_list_freep) ScrapeTargetList *l = NULL;
        _cleanup_(target_list_freep) TargetList *targets = NULL;
        _cleanup_(group_list_freep) GroupList *groups = NULL;
        int r;

        r = bus_list_targets(bus, error, &targets);
        if (r < 0)
                return r;
        r = bus_list_groups(bus, error, &groups);
        if (r < 0)
                return r;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;

        for (size_t i = 0; i < groups->n_groups; i++) {
                const GroupInfo *g = &groups->groups[i];
                const char *comm = NULL;
                uint32_t frequency = 0;
                uint64_t samples = 0;
                bool running = false;

                if (!exporter_config_allows(config, g->spec))
                        continue;
                for (size_t j = 0; j < targets->n_targets; j++) {
                        const TargetInfo *t = &targets->targets[j];

                        if (!t->group || strcmp(t->group, g->spec) != 0)
                                continue;
                        samples += t->samples;
                        if (!comm || t->pid == g->pid)
                                comm = t->command;
                        if (frequency == 0)
                                frequency = t->frequency;
                        if (t->state && strcmp(t->state, "exited") != 0)
                                running = true;
                }
                r = add(l, g->spec, group_kind(g->kind), g->pid, comm, running ? "running" : "exited", frequency,
                        samples);
                if (r < 0)
                        return r;
        }
        for (size_t j = 0; j < targets->n_targets; j++) {
                const TargetInfo *t = &targets->targets[j];
                char spec[16];

                if (t->group && t->group[0])
                        continue;
                snprintf(spec, sizeof(spec), "%u", t->pid);
                if (!exporter_config_allows(config, spec))
                        continue;
                r = add(l, spec, "process", t->pid, t->command,
                        t->state && strcmp(t->state, "exited") == 0 ? "exited" : "running", t->frequency,
                        t->samples);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}
