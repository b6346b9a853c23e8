/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table replies' rows (bus-rows.h). The shapes are documented in org.vprof.Profiler1.xml, the numbers in
 * docs/COUNTING.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-reply.h"
#include "bus-rows.h"
#include "bus-table-row.h"
#include "macros.h"

/* The array's element signature of a table kind's rows in shape. */
static int element_signature(TableKind kind, TableShape shape, char *buf, size_t size)
{
        return table_schema_row_signature(kind, shape, false, buf, size);
}

/* The rows' array closed; a function table's is followed by the indices of its rows of inlined frames
 * ("inlined"), after the rows so that the row's signature stays as it was. */
static int close_rows(sd_bus_message *reply, TableKind kind, const ProfileRow *rows, size_t n)
{
        int r = sd_bus_message_close_container(reply);

        if (r < 0 || kind != TABLE_FUNCTIONS)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "u");
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (rows[i].inlined)
                        r = sd_bus_message_append_basic(reply, 'u', &(uint32_t){ (uint32_t)i });
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

int bus_append_sampling_rows(sd_bus_message *reply, TableKind kind, uint64_t total, const ProfileRow *rows,
                             size_t n)
{
        char element[64];
        int r;

        r = element_signature(kind, TABLE_SAMPLING, element, sizeof(element));
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', element);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                TableRow row;

                table_row_from_profile(rows + i, total, &row);
                r = bus_append_table_row(reply, kind, TABLE_SAMPLING, &row);
                if (r < 0)
                        return r;
        }
        return close_rows(reply, kind, rows, n);
}

/* The sampling rows, then the reply sent. */
static int send_sampling(sd_bus_message *msg, TableKind kind, uint64_t total, uint64_t start_usec,
                         uint64_t end_usec, const ProfileRow *rows, size_t n)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "t(tt)", total, start_usec, end_usec);
        if (r >= 0)
                r = bus_append_sampling_rows(reply, kind, total, rows, n);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int reply_sampling_rows(sd_bus_message *msg, TableKind kind, const Query *q, const ProfileRow *rows, size_t n)
{
        return send_sampling(msg, kind, profile_total(q->profile), q->start_usec, q->end_usec, rows, n);
}

/* The value tables go out in sample periods (1/Frequency s, the daemon's property), as doubles. A target's
 * counts are in periods of its own tables' frequency, which differs for an exited target restored by a daemon
 * that samples at another frequency now (its tables are never converted, see state-store.h): each of its
 * samples is worth unit_frequency / frequency periods. Nanoseconds of off-CPU time convert the same for every
 * target. */
typedef struct Periods {
        double elapsed, application, blocked, preempted;
} Periods;

static Periods to_periods(const ProfileValues *v, uint32_t frequency, uint32_t unit_frequency)
{
        double per_sample = (double)unit_frequency / frequency;

        return (Periods){
                .elapsed = (double)(v->user_samples + v->kernel_samples) * per_sample +
                           profile_ns_to_samples(v->blocked_ns + v->preempted_ns, unit_frequency),
                .application = (double)v->user_samples * per_sample,
                .blocked = profile_ns_to_samples(v->blocked_ns, unit_frequency),
                .preempted = profile_ns_to_samples(v->preempted_ns, unit_frequency),
        };
}

static double percent(double value, double total)
{
        return total > 0 ? 100.0 * value / total : 0.0;
}

/* A row's ten values in their order on the bus: EI, EE, AI, AE, their percents of the session's elapsed and
 * application totals, then the off-CPU parts of EI. */
static int append_values_row(sd_bus_message *reply, TableKind kind, const ProfileRow *p,
                             const Periods *inclusive, const Periods *exclusive, const Periods *session)
{
        TableRow row;

        table_row_from_profile(p, 0, &row);
        memcpy(row.values,
               (const double[TABLE_N_VALUES]){
                       inclusive->elapsed,
                       exclusive->elapsed,
                       inclusive->application,
                       exclusive->application,
                       percent(inclusive->elapsed, session->elapsed),
                       percent(exclusive->elapsed, session->elapsed),
                       percent(inclusive->application, session->application),
                       percent(exclusive->application, session->application),
                       inclusive->blocked,
                       inclusive->preempted,
               },
               sizeof(row.values));
        return bus_append_table_row(reply, kind, TABLE_VALUES, &row);
}

/* The head of a values reply: the session's totals and the span, and the rows' array opened. */
static int values_head(sd_bus_message *msg, TableKind kind, const Periods *session, const Query *q,
                       sd_bus_message **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char element[64];
        int r;

        r = element_signature(kind, TABLE_VALUES, element, sizeof(element));
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "dd(tt)", session->elapsed, session->application, q->start_usec,
                                  q->end_usec);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', element);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

int reply_values_rows(sd_bus_message *msg, TableKind kind, const Query *q, uint32_t unit_frequency,
                      const ProfileRow *rows, size_t n)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t frequency = profile_frequency(q->profile);
        Periods session = to_periods(profile_total_values(q->profile), frequency, unit_frequency);
        int r;

        r = values_head(msg, kind, &session, q, &reply);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                Periods inclusive = to_periods(&rows[i].inclusive_values, frequency, unit_frequency),
                        exclusive = to_periods(&rows[i].exclusive_values, frequency, unit_frequency);

                r = append_values_row(reply, kind, rows + i, &inclusive, &exclusive, &session);
                if (r < 0)
                        return r;
        }
        r = close_rows(reply, kind, rows, n);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* One row a target: its process's samples, and its values in the daemon's periods (its tables may be of
 * another frequency). */
typedef struct ProcessRow {
        ProfileRow row; /* the PID and command; inclusive = exclusive = the samples */
        Periods values;
} ProcessRow;

/* Busiest first by the key (samples or elapsed values); the order of equal rows follows the PID. */
static int compare_process_samples(const void *x, const void *y)
{
        const ProcessRow *a = x, *b = y;

        if (a->row.inclusive != b->row.inclusive)
                return a->row.inclusive > b->row.inclusive ? -1 : 1;
        return a->row.tid < b->row.tid ? -1 : a->row.tid > b->row.tid;
}

static int compare_process_values(const void *x, const void *y)
{
        const ProcessRow *a = x, *b = y;

        if (a->values.elapsed != b->values.elapsed)
                return a->values.elapsed > b->values.elapsed ? -1 : 1;
        return a->row.tid < b->row.tid ? -1 : a->row.tid > b->row.tid;
}

/* The query's rows, sorted by samples, or with unit_frequency > 0 by their values in its periods; *ret_total the
 * samples and *ret_session the values of them all. */
static int process_rows(const Query *q, uint32_t unit_frequency, ProcessRow **ret, uint64_t *ret_total,
                        Periods *ret_session)
{
        _cleanup_free_ ProcessRow *rows = NULL;
        Periods session = {};
        uint64_t total = 0;

        rows = calloc(MAX(q->n_targets, (size_t)1), sizeof(ProcessRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < q->n_targets; i++) {
                const Target *t = q->targets[i];
                const ProfileValues *v = &q->totals[i].values;
                uint64_t samples = v->user_samples + v->kernel_samples;

                rows[i] = (ProcessRow){
                        .row = { .name = t->info.comm, .tid = (uint32_t)t->pid, .inclusive = samples,
                                 .exclusive = samples },
                };
                if (unit_frequency > 0)
                        rows[i].values = to_periods(v, q->totals[i].frequency, unit_frequency);
                total += samples;
                session.elapsed += rows[i].values.elapsed;
                session.application += rows[i].values.application;
        }
        qsort(rows, q->n_targets, sizeof(ProcessRow),
              unit_frequency > 0 ? compare_process_values : compare_process_samples);
        *ret = TAKE_PTR(rows);
        *ret_total = total;
        *ret_session = session;
        return 0;
}

int reply_process_rows(sd_bus_message *msg, const Query *q)
{
        _cleanup_free_ ProcessRow *rows = NULL;
        _cleanup_free_ ProfileRow *plain = NULL;
        Periods session;
        uint64_t total;
        int r;

        r = process_rows(q, 0, &rows, &total, &session); /* the samples only */
        if (r < 0)
                return r;
        plain = calloc(MAX(q->n_targets, (size_t)1), sizeof(ProfileRow));
        if (!plain)
                return -ENOMEM;
        for (size_t i = 0; i < q->n_targets; i++)
                plain[i] = rows[i].row;
        return send_sampling(msg, TABLE_PROCESSES, total, q->start_usec, q->end_usec, plain, q->n_targets);
}

int reply_process_values(sd_bus_message *msg, const Query *q, uint32_t unit_frequency)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProcessRow *rows = NULL;
        Periods session;
        uint64_t total;
        int r;

        r = process_rows(q, unit_frequency, &rows, &total, &session);
        if (r < 0)
                return r;
        r = values_head(msg, TABLE_PROCESSES, &session, q, &reply);
        if (r < 0)
                return r;
        for (size_t i = 0; i < q->n_targets; i++) {
                /* A process's exclusive values are its inclusive ones. */
                r = append_values_row(reply, TABLE_PROCESSES, &rows[i].row, &rows[i].values, &rows[i].values, &session);
                if (r < 0)
                        return r;
        }
        return bus_reply_close_and_send(reply);
}
