/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "authz.h"
#include "bus-names.h"
#include "bus-target.h"
#include "bus-values.h"

/* Every value goes out in sample periods (1/Frequency s, the daemon's property), as doubles: on-CPU samples are
 * whole periods of their tables' frequency, off-CPU time is kept in nanoseconds and converted here. Each row
 * carries its ten numbers in one order: EI, EE, AI, AE, EI%, EE%, AI%, AE%, blocked, preempted (the off-CPU parts
 * of EI). */

typedef enum RowShape {
        ROW_FUNCTION, /* (ss + 10d) */
        ROW_MODULE,   /* (s + 10d) */
        ROW_ID,       /* (us + 10d): threads and processes */
} RowShape;

static const char *const row_signatures[] = {
        [ROW_FUNCTION] = "(ssdddddddddd)",
        [ROW_MODULE] = "(sdddddddddd)",
        [ROW_ID] = "(usdddddddddd)",
};

/* The same without the parentheses, as sd_bus_message_open_container() takes a struct's contents. */
static const char *const row_contents[] = {
        [ROW_FUNCTION] = "ssdddddddddd",
        [ROW_MODULE] = "sdddddddddd",
        [ROW_ID] = "usdddddddddd",
};

/* A row's values in periods of the daemon's Frequency, the unit of every value on the bus. A target's counts are
 * in periods of its own tables' frequency, which differs for an exited target restored by a daemon that samples
 * at another frequency now (its tables are never converted, see state-store.h): each of its samples is worth
 * unit_frequency / frequency periods. Nanoseconds convert the same for every target. */
typedef struct Periods {
        double elapsed, application, blocked, preempted;
} Periods;

static Periods to_periods(const ProfileValues *v, uint32_t frequency, uint32_t unit_frequency)
{
        double per_sample = (double)unit_frequency / frequency;
        double blocked = profile_ns_to_samples(v->blocked_ns, unit_frequency),
               preempted = profile_ns_to_samples(v->preempted_ns, unit_frequency);

        return (Periods){
                .elapsed = (double)(v->user_samples + v->kernel_samples) * per_sample +
                           profile_ns_to_samples(v->blocked_ns + v->preempted_ns, unit_frequency),
                .application = (double)v->user_samples * per_sample,
                .blocked = blocked,
                .preempted = preempted,
        };
}

static double percent(double value, double total)
{
        return total > 0 ? 100.0 * value / total : 0.0;
}

static int append_row(sd_bus_message *reply, RowShape shape, const ProfileRow *row, const Periods *inclusive,
                      const Periods *exclusive, const Periods *session)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', row_contents[shape]);
        if (r < 0)
                return r;
        switch (shape) {
        case ROW_FUNCTION:
                r = sd_bus_message_append(reply, "ss", row->name, row->module);
                break;
        case ROW_MODULE:
                r = sd_bus_message_append(reply, "s", row->name);
                break;
        case ROW_ID:
                r = sd_bus_message_append(reply, "us", row->tid, row->name);
                break;
        }
        if (r < 0)
                return r;
        /* Seed 003: both elapsed percents against the session's elapsed inclusive total, both application
         * percents against its application inclusive total. */
        r = sd_bus_message_append(reply, "dddddddddd", inclusive->elapsed, exclusive->elapsed, inclusive->application,
                                  exclusive->application, percent(inclusive->elapsed, session->elapsed),
                                  percent(exclusive->elapsed, session->elapsed),
                                  percent(inclusive->application, session->application),
                                  percent(exclusive->application, session->application), inclusive->blocked,
                                  inclusive->preempted);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* The rows of one target: its values, converted from its tables' frequency. */
static int reply_values(sd_bus_message *msg, Manager *m, const Target *t, RowShape shape, const ProfileRow *rows,
                        size_t n)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t frequency = profile_frequency(t->profile), unit = m->config.frequency;
        Periods session = to_periods(profile_total_values(t->profile), frequency, unit);
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "dd", session.elapsed, session.application);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', row_signatures[shape]);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                Periods inclusive = to_periods(&rows[i].inclusive_values, frequency, unit),
                        exclusive = to_periods(&rows[i].exclusive_values, frequency, unit);

                r = append_row(reply, shape, rows + i, &inclusive, &exclusive, &session);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int method_get_function_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        Manager *m = userdata;
        Target *t;
        size_t n;
        int r;

        r = bus_read_function_table(m, msg, true, &t, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_values(msg, m, t, ROW_FUNCTION, rows, n);
}

static int reply_target_values(sd_bus_message *msg, Manager *m, sd_bus_error *error, RowShape shape,
                               profile_table_fn table)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        Target *t;
        size_t n;
        int r;

        r = bus_read_target_table(m, msg, table, PROFILE_SORT_ELAPSED_INCLUSIVE, &t, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_values(msg, m, t, shape, rows, n);
}

int method_get_module_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_target_values(msg, userdata, error, ROW_MODULE, profile_modules);
}

int method_get_thread_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_target_values(msg, userdata, error, ROW_ID, profile_threads);
}

/* One row a target: its process's values, in the daemon's periods (its tables may be of another frequency). */
typedef struct ProcessRow {
        uint32_t pid;
        const char *comm;
        Periods values;
} ProcessRow;

static int compare_processes(const void *x, const void *y)
{
        const ProcessRow *a = x, *b = y;

        if (a->values.elapsed != b->values.elapsed)
                return a->values.elapsed > b->values.elapsed ? -1 : 1;
        return a->pid < b->pid ? -1 : a->pid > b->pid;
}

int method_get_process_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProcessRow *rows = NULL;
        Periods total = {};
        Manager *m = userdata;
        size_t n = 0;
        uid_t caller;
        Target *t;
        int r;

        r = bus_caller_uid(msg, &caller, error);
        if (r < 0)
                return r;
        manager_sync(m);
        rows = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(ProcessRow));
        if (!rows)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets) {
                if (!bus_caller_may_see(t, caller))
                        continue;
                rows[n] = (ProcessRow){
                        .pid = (uint32_t)t->pid,
                        .comm = t->info.comm,
                        .values = to_periods(profile_total_values(t->profile), profile_frequency(t->profile),
                                             m->config.frequency),
                };
                total.elapsed += rows[n].values.elapsed;
                total.application += rows[n].values.application;
                n++;
        }
        /* Most elapsed time first; the order of equal rows follows the PID. */
        qsort(rows, n, sizeof(ProcessRow), compare_processes);

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "dd", total.elapsed, total.application);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', row_signatures[ROW_ID]);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                ProfileRow row = { .name = rows[i].comm, .tid = rows[i].pid };

                /* A process's exclusive values are its inclusive ones. */
                r = append_row(reply, ROW_ID, &row, &rows[i].values, &rows[i].values, &total);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
