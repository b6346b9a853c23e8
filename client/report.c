/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>

#include "bus-client-tables.h"
#include "bus-client.h"
#include "log.h"
#include "report.h"

/* The table of the view's kind (sampling counts or values) of one target, a group, or every target the caller
 * may read (no target: the empty spec, merged by vprofd): one call. */
static int fetch_table(sd_bus *bus, const ReportOptions *o, const char **ret_method, sd_bus_error *error,
                       ReportTable **ret)
{
        bool values = o->view != REPORT_VIEW_SAMPLES;
        TableQuery q = { .target = o->target, .window_usec = o->window_usec };

        switch (o->by) {
        case REPORT_FUNCTIONS:
                *ret_method = values ? "GetFunctionValues" : "GetFunctions";
                return values ? bus_get_function_values(bus, &q, o->sort, o->limit, error, ret)
                              : bus_get_functions(bus, &q, o->sort, o->limit, error, ret);
        case REPORT_MODULES:
                *ret_method = values ? "GetModuleValues" : "GetModules";
                return values ? bus_get_module_values(bus, &q, error, ret)
                              : bus_get_modules(bus, &q, error, ret);
        case REPORT_THREADS:
                *ret_method = values ? "GetThreadValues" : "GetThreads";
                return values ? bus_get_thread_values(bus, &q, error, ret)
                              : bus_get_threads(bus, &q, error, ret);
        case REPORT_PROCESSES:
                *ret_method = values ? "GetProcessValues" : "GetProcesses";
                return values ? bus_get_process_values(bus, &q, error, ret) : bus_get_processes(bus, &q, error, ret);
        default:
                *ret_method = "report";
                return -EINVAL;
        }
}

/* Whether target pid tracks its off-CPU time; without it its elapsed time is on-CPU time only, which the
 * table says. A target that is not listed (any more) tracks nothing. */
static int target_tracks_off_cpu(sd_bus *bus, uint32_t pid, bool *ret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(target_list_freep) TargetList *l = NULL;
        int r;

        r = bus_list_targets(bus, &error, &l);
        if (r < 0)
                return log_bus_error(r, &error, "ListTargets");
        *ret = false;
        for (size_t i = 0; i < l->n_targets; i++)
                if (l->targets[i].pid == pid)
                        *ret = l->targets[i].flags & VPROF_ATTACH_OFF_CPU;
        return 0;
}

int run_report(sd_bus *bus, const ReportOptions *o)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        bool values = o->view != REPORT_VIEW_SAMPLES;
        const char *method, *note = o->target ? NULL : "all targets";
        uint32_t frequency = 0;
        int r;

        if (values) {
                /* The unit of the values, needed for milliseconds, which the JSON always has. */
                r = bus_get_frequency(bus, &error, &frequency);
                if (r < 0)
                        return log_bus_error(r, &error, "Get");
                if (frequency == 0)
                        return log_error_errno(-EBADMSG, "vprofd reports a sampling frequency of 0 Hz");
        }

        r = fetch_table(bus, o, &method, &error, &t);
        if (r < 0)
                return log_bus_error(r, &error, method);

        if (values && o->view != REPORT_VIEW_APPLICATION && o->pid > 0 && o->by != REPORT_PROCESSES) {
                bool off_cpu = false;

                r = target_tracks_off_cpu(bus, o->pid, &off_cpu);
                if (r < 0)
                        return r;
                if (!off_cpu)
                        note = "on-CPU time only: attached without --off-cpu";
        }

        /* Function tables come sorted as asked. The others come in the daemon's order (modules by inclusive
         * count or elapsed inclusive value, threads and processes by samples or elapsed value): the sampling
         * view keeps it unless --sort says otherwise, the values views sort by their own key. */
        if (o->by != REPORT_FUNCTIONS && (values || o->sort_given))
                report_table_sort(t, o->sort);
        /* Rows that only ever waited or ran in the kernel have no application time to show. */
        if (o->view == REPORT_VIEW_APPLICATION)
                report_table_filter_positive(t, REPORT_VALUE_APPLICATION_INCLUSIVE);
        report_table_truncate(t, o->limit);

        /* A target's modules, with where their names come from. */
        if (!values && o->by == REPORT_MODULES && o->pid > 0) {
                r = bus_add_module_symbols(bus, o->target, t, &error);
                if (r < 0)
                        return log_bus_error(r, &error, "GetModuleSymbols");
        }

        /* JSON function rows of one target carry the mangled name of a demangled symbol too. */
        if ((o->flags & OUTPUT_JSON) && o->by == REPORT_FUNCTIONS && o->pid > 0) {
                r = bus_add_symbol_names(bus, o->target, t, &error);
                if (r < 0)
                        return log_bus_error(r, &error, "GetSymbolNames");
        }

        /* --source: where each function is written, when the daemon knows (GetFunctionSources). */
        if ((o->flags & OUTPUT_SOURCE) && o->by == REPORT_FUNCTIONS && o->target) {
                r = bus_add_function_sources(bus, o->target, t, &error);
                if (r < 0)
                        return log_bus_error(r, &error, "GetFunctionSources");
        }

        if (values)
                r = output_values_table(t, o->view, o->unit_ms, frequency, o->pid, note, o->flags);
        else
                r = output_report_table(t, o->pid, note, o->flags);
        if (r < 0)
                return log_error_errno(r, "Failed to print the report: %m");
        return 0;
}
