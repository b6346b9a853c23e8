/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "all-targets.h"
#include "bus-client-tables.h"
#include "bus-client.h"
#include "log.h"

/* The per-target tables while they are fetched, freed together. */
typedef struct TableArray {
        ReportTable **tables;
        size_t n;
} TableArray;

static void table_array_done(TableArray *a)
{
        for (size_t i = 0; i < a->n; i++)
                report_table_free(a->tables[i]);
        free(a->tables);
}

int fetch_all_functions(sd_bus *bus, ProfileSort sort, uint64_t window_usec, ReportTable **ret,
                        size_t *ret_n_targets, size_t *ret_n_denied)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(target_list_freep) TargetList *l = NULL;
        _cleanup_(report_table_freep) ReportTable *merged = NULL;
        _cleanup_(table_array_done) TableArray a = {};
        bool values = profile_sort_is_values(sort);
        const char *method = values ? "GetFunctionValues" : "GetFunctions";
        size_t n_denied = 0;
        int r;

        r = bus_list_targets(bus, &error, &l);
        if (r < 0)
                return log_bus_error(r, &error, "ListTargets");

        a.tables = calloc(MAX(l->n_targets, (size_t)1), sizeof(*a.tables));
        if (!a.tables)
                return log_error_errno(-ENOMEM, "Failed to merge the targets' functions: %m");

        for (size_t i = 0; i < l->n_targets; i++) {
                char pid[16];
                TableQuery q = { .target = pid, .window_usec = window_usec };

                snprintf(pid, sizeof(pid), "%" PRIu32, l->targets[i].pid);
                sd_bus_error_free(&error);
                if (values)
                        r = bus_get_function_values(bus, &q, sort, 0, &error, &a.tables[a.n]);
                else
                        r = bus_get_functions(bus, &q, sort, 0, &error, &a.tables[a.n]);
                if (sd_bus_error_has_names(&error, VPROF_ERROR_NOT_ATTACHED, VPROF_ERROR_NO_SUCH_PROCESS))
                        continue;
                if (sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED)) {
                        n_denied++;
                        continue;
                }
                if (r < 0)
                        return log_bus_error(r, &error, method);
                a.n++;
        }

        r = report_tables_merge(a.tables, a.n, values, &merged);
        if (r < 0)
                return log_error_errno(r, "Failed to merge the targets' functions: %m");
        report_table_sort(merged, sort);
        merged->window_usec = window_usec;
        /* The span of them all. */
        for (size_t i = 0; i < a.n; i++) {
                if (merged->window_start_usec == 0 || a.tables[i]->window_start_usec < merged->window_start_usec)
                        merged->window_start_usec = a.tables[i]->window_start_usec;
                merged->window_end_usec = MAX(merged->window_end_usec, a.tables[i]->window_end_usec);
        }

        *ret = TAKE_PTR(merged);
        *ret_n_targets = a.n;
        *ret_n_denied = n_denied;
        return 0;
}

void format_targets_note(char *buf, size_t size, size_t n_targets, size_t n_denied)
{
        if (n_denied > 0)
                snprintf(buf, size, "%zu target%s, %zu not permitted", n_targets, n_targets == 1 ? "" : "s",
                         n_denied);
        else
                snprintf(buf, size, "%zu target%s", n_targets, n_targets == 1 ? "" : "s");
}
