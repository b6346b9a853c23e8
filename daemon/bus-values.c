/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "authz.h"
#include "bus-names.h"
#include "bus-target.h"
#include "bus-values.h"

/* Every value goes out in sample periods (1/Frequency s), as doubles: on-CPU samples are whole periods,
 * off-CPU time is kept in nanoseconds and converted here. Each row carries its ten numbers in one order:
 * EI, EE, AI, AE, EI%, EE%, AI%, AE%, blocked, preempted (the off-CPU parts of EI). */

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

static int append_row(sd_bus_message *reply, RowShape shape, const ProfileRow *row, const ProfileValues *total,
                      uint32_t frequency)
{
        double session_elapsed = profile_elapsed(total, frequency), session_application = profile_application(total);
        double ei = profile_elapsed(&row->inclusive_values, frequency),
               ee = profile_elapsed(&row->exclusive_values, frequency),
               ai = profile_application(&row->inclusive_values), ae = profile_application(&row->exclusive_values);
        double blocked = profile_ns_to_samples(row->inclusive_values.blocked_ns, frequency),
               preempted = profile_ns_to_samples(row->inclusive_values.preempted_ns, frequency);
        /* Seed 003: both elapsed percents against the session's elapsed inclusive total, both application
         * percents against its application inclusive total. */
        double eip = 100.0 * ei / session_elapsed, eep = 100.0 * ee / session_elapsed,
               aip = 100.0 * ai / session_application, aep = 100.0 * ae / session_application;
        int r;

        if (session_elapsed <= 0)
                eip = eep = 0;
        if (session_application <= 0)
                aip = aep = 0;

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
        r = sd_bus_message_append(reply, "dddddddddd", ei, ee, ai, ae, eip, eep, aip, aep, blocked, preempted);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int reply_values(sd_bus_message *msg, RowShape shape, const ProfileRow *rows, size_t n,
                        const ProfileValues *total, uint32_t frequency)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "dd", profile_elapsed(total, frequency), profile_application(total));
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', row_signatures[shape]);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = append_row(reply, shape, rows + i, total, frequency);
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
        return reply_values(msg, ROW_FUNCTION, rows, n, profile_total_values(t->profile), m->config.frequency);
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
        return reply_values(msg, shape, rows, n, profile_total_values(t->profile), m->config.frequency);
}

int method_get_module_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_target_values(msg, userdata, error, ROW_MODULE, profile_modules);
}

int method_get_thread_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_target_values(msg, userdata, error, ROW_ID, profile_threads);
}

static void values_sum(ProfileValues *sum, const ProfileValues *v)
{
        sum->user_samples += v->user_samples;
        sum->kernel_samples += v->kernel_samples;
        sum->blocked_ns += v->blocked_ns;
        sum->preempted_ns += v->preempted_ns;
}

static int compare_processes(const void *x, const void *y, void *userdata)
{
        const ProfileRow *a = x, *b = y;
        uint32_t frequency = *(const uint32_t *)userdata;
        double ea = profile_elapsed(&a->inclusive_values, frequency), eb = profile_elapsed(&b->inclusive_values,
                                                                                          frequency);

        if (ea != eb)
                return ea > eb ? -1 : 1;
        return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int method_get_process_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        ProfileValues total = {};
        Manager *m = userdata;
        size_t n = 0;
        uid_t caller;
        Target *t;
        int r;

        r = bus_caller_uid(msg, &caller, error);
        if (r < 0)
                return r;
        manager_sync(m);
        rows = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets) {
                const ProfileValues *v = profile_total_values(t->profile);
                if (!bus_caller_may_see(t, caller))
                        continue;
                rows[n++] = (ProfileRow){
                        .name = t->info.comm,
                        .tid = (uint32_t)t->pid,
                        .inclusive_values = *v,
                        .exclusive_values = *v,
                };
                values_sum(&total, v);
        }
        /* Most elapsed time first; the order of equal rows follows the PID. */
        qsort_r(rows, n, sizeof(ProfileRow), compare_processes, &m->config.frequency);
        return reply_values(msg, ROW_ID, rows, n, &total, m->config.frequency);
}
