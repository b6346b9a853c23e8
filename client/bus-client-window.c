/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "bus-client-window.h"
#include "bus-client.h"
#include "bus-object.h"

#define METHOD "GetWindowTables"

void window_tables_done(WindowTables *t)
{
        report_table_free(t->functions);
        report_table_free(t->modules);
        report_table_free(t->threads);
        stack_table_free(t->stacks);
        *t = (WindowTables){};
}

/* A table of the reply, which has its rows only: the window's total and span are the reply's. */
static int read_table(sd_bus_message *reply, ReportKind kind, const StackTable *head, sd_bus_error *error,
                      ReportTable **ret)
{
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        int r;

        r = report_table_new(kind, &t);
        if (r < 0)
                return r;
        t->total_samples = head->total_samples;
        t->window_start_usec = head->window_start_usec;
        t->window_end_usec = head->window_end_usec;
        t->window_usec = head->window_usec;
        r = bus_read_table_rows(reply, t, TABLE_SAMPLING, METHOD, error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int bus_get_window_tables(sd_bus *bus, const char *target, uint64_t window_usec, uint64_t until_usec,
                          uint32_t limit, sd_bus_error *error, WindowTables *ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(window_tables_done) WindowTables w = { .window_usec = window_usec, .until_usec = until_usec };
        StackTable *s;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, METHOD, error, &reply,
                               "sttu", target ?: "", window_usec, until_usec, limit);
        if (r < 0)
                return r;
        s = w.stacks = calloc(1, sizeof(StackTable));
        if (!s)
                return -ENOMEM;
        s->window_usec = window_usec;
        r = sd_bus_message_read(reply, "utt(tt)", &w.frequency, &s->total_samples, &s->other_samples,
                                &s->window_start_usec, &s->window_end_usec);
        if (r >= 0 && w.frequency == 0)
                r = -EBADMSG;
        if (r < 0)
                return bus_bad_reply(error, METHOD, r);
        r = read_table(reply, REPORT_FUNCTIONS, s, error, &w.functions);
        if (r >= 0)
                r = read_table(reply, REPORT_MODULES, s, error, &w.modules);
        if (r >= 0)
                r = read_table(reply, REPORT_THREADS, s, error, &w.threads);
        if (r < 0)
                return r;
        r = stack_table_read_stacks(reply, s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bus_bad_reply(error, METHOD, r);
        *ret = w;
        w = (WindowTables){};
        return 0;
}
