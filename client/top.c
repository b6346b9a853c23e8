/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <systemd/sd-event.h>

#include "all-targets.h"
#include "bus-client-tables.h"
#include "bus-client.h"
#include "log.h"
#include "time-util.h"
#include "top.h"

typedef struct Top {
        sd_bus *bus;
        const TopOptions *options;
        uint32_t refreshes;
        int error;
} Top;

static int refresh(Top *t)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(report_table_freep) ReportTable *table = NULL;
        const TopOptions *o = t->options;
        char note[64];
        int r;

        if (o->target) {
                TableQuery q = { .target = o->target, .window_usec = o->window_usec };

                r = bus_get_functions(t->bus, &q, o->sort, o->limit, &error, &table);
                if (r < 0)
                        return log_bus_error(r, &error, "GetFunctions");
                snprintf(note, sizeof(note), "%s%s", o->pid > 0 ? "PID " : "", o->target);
        } else {
                size_t n_targets = 0, n_denied = 0;

                r = fetch_all_functions(t->bus, o->sort, o->window_usec, &table, &n_targets, &n_denied);
                if (r < 0)
                        return r;
                report_table_truncate(table, o->limit);
                format_targets_note(note, sizeof(note), n_targets, n_denied);
        }

        if (o->clear)
                /* Home, then erase the screen: the new table replaces the old one in place. */
                fputs("\033[H\033[2J", stdout);
        else if (t->refreshes > 0 && !(o->flags & OUTPUT_JSON))
                putchar('\n');

        r = output_report_table(table, o->pid, note, o->flags);
        if (r < 0)
                return log_error_errno(r, "Failed to print the functions: %m");
        if (fflush(stdout) != 0)
                return log_error_errno(negative_errno(), "Failed to write to standard output: %m");
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        Top *t = userdata;
        sd_event *e = sd_event_source_get_event(s);
        uint64_t next, now;
        int r;

        r = refresh(t);
        if (r < 0) {
                t->error = r;
                return sd_event_exit(e, r);
        }

        t->refreshes++;
        if (t->options->iterations > 0 && t->refreshes >= t->options->iterations)
                return sd_event_exit(e, 0);

        /* Keep the cadence: the next refresh is due one delay after this one was due. A refresh that took
         * longer than the delay (a slow reply) skips the missed ones instead of bursting to catch up. */
        next = usec + t->options->delay_usec;
        now = now_usec(CLOCK_MONOTONIC);
        if (next <= now)
                next = now + t->options->delay_usec;
        r = sd_event_source_set_time(s, next);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0) {
                t->error = log_error_errno(r, "Failed to schedule the next refresh: %m");
                return sd_event_exit(e, r);
        }
        return 0;
}

int run_top(sd_bus *bus, const TopOptions *o)
{
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_(sd_event_source_unrefp) sd_event_source *timer = NULL;
        Top t = {
                .bus = bus,
                .options = o,
        };
        int r;

        r = sd_event_default(&e);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");

        /* SIGINT and SIGTERM end the loop cleanly, between two refreshes. */
        r = sd_event_set_signal_exit(e, true);
        if (r < 0)
                return log_error_errno(r, "Failed to handle SIGINT and SIGTERM: %m");

        /* First refresh at once; 1ms accuracy, the default 250ms would make the cadence visibly uneven. */
        r = sd_event_add_time_relative(e, &timer, CLOCK_MONOTONIC, 0, 1000, on_timer, &t);
        if (r < 0)
                return log_error_errno(r, "Failed to add the refresh timer: %m");

        r = sd_event_loop(e);
        if (t.error < 0)
                return t.error;
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}
