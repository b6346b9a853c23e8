/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-client.h"
#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "exporter-escape.h"

/* /metrics: Prometheus' text format 0.0.4. The daemon's counters are GetStatus's, as `vprofctl status` shows
 * them; each target's kept samples are ListTargets'. */

typedef struct StatusMetric {
        const char *name;
        const char *type;
        const char *help;
        size_t offset;
        size_t size; /* 4 or 8 */
} StatusMetric;

#define U64(name, type, field, help) { name, type, help, offsetof(DaemonStatus, field), 8 }
#define U32(name, type, field, help) { name, type, help, offsetof(DaemonStatus, field), 4 }

static const StatusMetric status_metrics[] = {
        U64("vprof_samples_seen_total", "counter", samples_seen, "Samples the BPF program saw."),
        U64("vprof_samples_kept_total", "counter", samples_kept, "Samples of a target, kept in its tables."),
        U64("vprof_samples_discarded_total", "counter", samples_discarded, "Samples of processes that are no target."),
        U64("vprof_samples_lost_total", "counter", samples_lost, "Samples lost because the ring buffer was full."),
        U64("vprof_samples_unclaimed_total", "counter", samples_unclaimed,
            "Samples whose target was gone when they were drained."),
        U64("vprof_stack_errors_total", "counter", stack_errors, "Samples whose stack could not be captured."),
        U64("vprof_stacks_truncated_total", "counter", stacks_truncated, "Stacks cut at the depth limit."),
        U64("vprof_off_cpu_blocked_total", "counter", off_cpu_blocked, "Off-CPU intervals blocked."),
        U64("vprof_off_cpu_preempted_total", "counter", off_cpu_preempted, "Off-CPU intervals preempted."),
        U64("vprof_off_cpu_lost_total", "counter", off_cpu_lost, "Off-CPU intervals lost."),
        U64("vprof_off_cpu_unclaimed_total", "counter", off_cpu_unclaimed, "Off-CPU intervals without a target."),
        U64("vprof_symbol_cache_size_bytes", "gauge", symbol_cache_size, "The symbol cache's budget."),
        U64("vprof_symbol_cache_used_bytes", "gauge", symbol_cache_used, "The symbol cache's use."),
        U64("vprof_unwind_table_size_bytes", "gauge", unwind_table_size, "The unwind tables' arena."),
        U64("vprof_unwind_table_used_bytes", "gauge", unwind_table_used, "The unwind tables' use of the arena."),
        U32("vprof_unwind_tables_loaded", "gauge", unwind_tables_loaded, "Unwind tables in the arena."),
        U64("vprof_window_memory_bytes", "gauge", window_memory, "All targets' per-second windows."),
        U32("vprof_targets", "gauge", targets, "Targets attached."),
        U32("vprof_frequency_hertz", "gauge", frequency, "Samples per second and CPU."),
        U32("vprof_cpus", "gauge", cpus, "CPUs sampled."),
};

static uint64_t status_value(const DaemonStatus *s, const StatusMetric *m)
{
        const char *p = (const char *)s + m->offset;
        uint32_t v32;
        uint64_t v64;

        if (m->size == 4) {
                memcpy(&v32, p, sizeof(v32));
                return v32;
        }
        memcpy(&v64, p, sizeof(v64));
        return v64;
}

static void header(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void write_targets(FILE *f, Exporter *e, const TargetList *targets)
{
        header(f, "vprof_target_samples_total", "counter", "Samples kept in a process's tables since its attach.");
        for (size_t i = 0; i < targets->n_targets; i++) {
                const TargetInfo *t = &targets->targets[i];
                char pid[16];
                const char *spec = t->group && t->group[0] ? t->group : pid;

                snprintf(pid, sizeof(pid), "%" PRIu32, t->pid);
                if (!exporter_config_allows(e->config, spec))
                        continue;
                fputs("vprof_target_samples_total{target=\"", f);
                exporter_write_label(f, spec);
                fprintf(f, "\",pid=\"%s\",comm=\"", pid);
                exporter_write_label(f, t->command ?: "");
                fprintf(f, "\",state=\"");
                exporter_write_label(f, t->state ?: "");
                fprintf(f, "\"} %" PRIu64 "\n", t->samples);
        }
}

static void write_exporter(FILE *f, Exporter *e)
{
        header(f, "vprof_exporter_requests_total", "counter", "HTTP requests answered by the exporter, by status.");
        for (size_t i = 0; i < EXPORTER_N_STATUS_CODES; i++) {
                unsigned code = exporter_status_code_at(i);
                uint64_t n = atomic_load_explicit(&e->counters.requests[i], memory_order_relaxed);

                if (code)
                        fprintf(f, "vprof_exporter_requests_total{code=\"%u\"} %" PRIu64 "\n", code, n);
                else
                        fprintf(f, "vprof_exporter_requests_total{code=\"other\"} %" PRIu64 "\n", n);
        }
        header(f, "vprof_exporter_connections_rejected_total", "counter",
               "Connections refused past MaxConnections=.");
        fprintf(f, "vprof_exporter_connections_rejected_total %" PRIu64 "\n",
                atomic_load_explicit(&e->counters.connections_rejected, memory_order_relaxed));
        header(f, "vprof_exporter_connections_timed_out_total", "counter",
               "Connections cut because their request took longer than RequestTimeoutSec=.");
        fprintf(f, "vprof_exporter_connections_timed_out_total %" PRIu64 "\n",
                atomic_load_explicit(&e->counters.connections_timed_out, memory_order_relaxed));
        header(f, "vprof_exporter_connections_open", "gauge", "Connections open, this one included.");
        fprintf(f, "vprof_exporter_connections_open %" PRIu64 "\n",
                atomic_load_explicit(&e->counters.connections_open, memory_order_relaxed));
        header(f, "vprof_exporter_auth_failures_total", "counter",
               "Requests with a wrong bearer token (401), each client address logged once a minute.");
        fprintf(f, "vprof_exporter_auth_failures_total %" PRIu64 "\n",
                atomic_load_explicit(&e->counters.auth_failures, memory_order_relaxed));
}

enum MHD_Result exporter_serve_metrics(Exporter *e, struct MHD_Connection *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(daemon_status_freep) DaemonStatus *status = NULL;
        _cleanup_(target_list_freep) TargetList *targets = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        sd_bus *bus;
        FILE *f;
        int r;

        r = exporter_bus_get(&bus);
        if (r < 0)
                return exporter_respond_no_bus(e, c, r);
        r = bus_get_status(bus, &error, &status);
        if (r >= 0)
                r = bus_list_targets(bus, &error, &targets);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, &error, NULL);

        f = open_memstream(&text, &size);
        if (!f)
                return exporter_respond_error(c, &e->counters, 500, "out of memory");
        for (size_t i = 0; i < ELEMENTSOF(status_metrics); i++) {
                const StatusMetric *m = &status_metrics[i];

                header(f, m->name, m->type, m->help);
                fprintf(f, "%s %" PRIu64 "\n", m->name, status_value(status, m));
        }
        write_targets(f, e, targets);
        write_exporter(f, e);
        if (fclose(f) != 0)
                return exporter_respond_error(c, &e->counters, 500, "out of memory");
        return exporter_respond(c, &e->counters, 200, "text/plain; version=0.0.4; charset=utf-8", NULL,
                                TAKE_PTR(text), size, NULL, NULL);
}
