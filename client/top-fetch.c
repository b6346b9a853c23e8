/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "bus-client-tables.h"
#include "bus-client.h"
#include "log.h"
#include "time-util.h"
#include "top-fetch.h"

TopView *top_view_free(TopView *v)
{
        if (!v)
                return NULL;
        report_table_free(v->table);
        free(v->event);
        free(v);
        return NULL;
}

/* The table the state asks for: one target's, a group's or every target's (the empty spec), merged by the
 * daemon. */
static int fetch_table(sd_bus *bus, const TopQuery *q, TopView *v)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const TopState *s = q->state;
        TableQuery tq = {
                .target = q->target,
                .window_usec = s->window_usec,
        };
        const char *method;
        int r;

        switch (s->table) {
        case REPORT_FUNCTIONS:
                method = "GetFunctions";
                r = bus_get_functions(bus, &tq, s->sort, q->limit, &error, &v->table);
                break;
        case REPORT_MODULES:
                method = "GetModules";
                r = bus_get_modules(bus, &tq, &error, &v->table);
                break;
        case REPORT_THREADS:
                method = "GetThreads";
                r = bus_get_threads(bus, &tq, &error, &v->table);
                break;
        case REPORT_PROCESSES:
                method = "GetProcesses";
                r = bus_get_processes(bus, &tq, &error, &v->table);
                break;
        default:
                return log_error_errno(-EINVAL, "No %s table in top", top_table_name(s->table));
        }
        if (r < 0)
                return log_bus_error(r, &error, method);
        return 0;
}

int top_fetch(sd_bus *bus, const TopQuery *q, TopLostHistory *h, TopView **ret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(daemon_status_freep) DaemonStatus *status = NULL;
        _cleanup_(top_view_freep) TopView *v = NULL;
        uint64_t now;
        int r;

        v = calloc(1, sizeof(*v));
        if (!v)
                return log_error_errno(-ENOMEM, "Failed to allocate the view: %m");
        v->shown = *q->state;

        r = fetch_table(bus, q, v);
        if (r < 0)
                return r;
        /* Functions come sorted as asked; the other tables in the daemon's order. */
        if (v->table->kind != REPORT_FUNCTIONS)
                report_table_sort(v->table, q->state->sort);
        report_table_truncate(v->table, q->limit);
        v->window_start_usec = v->table->window_start_usec;
        v->window_end_usec = v->table->window_end_usec;

        /* The header's figures, read after the table: the losses include whatever the table missed. */
        r = bus_get_status(bus, &error, &status);
        if (r < 0)
                return log_bus_error(r, &error, "GetAll");
        now = now_usec(CLOCK_REALTIME);
        v->event = TAKE_PTR(status->event);
        v->frequency = status->frequency;
        v->samples_lost = status->samples_lost;

        top_lost_history_add(h, now, v->samples_lost);
        if (q->state->window_usec > 0)
                v->window_lost_known = top_lost_history_since(h, v->window_start_usec, &v->window_lost,
                                                              &v->window_lost_span_usec);

        *ret = TAKE_PTR(v);
        return 0;
}
