/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "address-space.h"
#include "authz.h"
#include "bus-names.h"
#include "bus-query.h"
#include "log.h"
#include "macros.h"
#include "manager.h"
#include "profile.h"
#include "query-view.h"
#include "quote.h"
#include "target-spec.h"
#include "time-util.h"
#include "utf8.h"

/* The queries: each checks its arguments, asks authz.h whether the caller may see the target, brings the
 * tables up to date (manager_sync()) and marshals the answer. What the numbers mean is in docs/COUNTING.md; the
 * reply shapes are documented in org.vprof.Profiler1.xml. */

/* The most a GetStacks reply carries, in bytes of frames: a message near the bus's size limit (32 MiB on the
 * system bus) would make dbus-daemon drop the daemon's connection. Stacks past it are left out, largest count
 * first kept. */
#define STACKS_MAX_BYTES (UINT32_C(8) << 20)

/* The three kinds of table row, by the name part that comes before the numbers. */
typedef enum RowShape {
        ROW_FUNCTION, /* function, module */
        ROW_MODULE,   /* module */
        ROW_ID,       /* thread or process ID, name */
        _ROW_SHAPE_MAX,
} RowShape;

/* A row's struct for the sampling tables (two counts, two percents) and for the value tables (ten values), as
 * the array's element type and as the struct's contents for sd_bus_message_open_container(). */
static const struct {
        const char *sampling, *sampling_contents, *values, *values_contents;
} row_signatures[_ROW_SHAPE_MAX] = {
        [ROW_FUNCTION] = { "(ssttdd)", "ssttdd", "(ssdddddddddd)", "ssdddddddddd" },
        [ROW_MODULE] = { "(sttdd)", "sttdd", "(sdddddddddd)", "sdddddddddd" },
        [ROW_ID] = { "(usttdd)", "usttdd", "(usdddddddddd)", "usdddddddddd" },
};

/* What a query reads (query-view.h): the targets its spec names, the caller allowed to see them, and their tables
 * over the window asked for. */
typedef struct Query {
        Target **targets; /* one process, or a group's members */
        size_t n_targets;
        QueryView view;
} Query;

static void query_done(Query *q)
{
        free(q->targets);
        query_view_done(&q->view);
}

/* The targets of a spec, if the caller may see them: a process (with the children it is followed with, when it
 * was attached so) or a unit's or a cgroup's members. 1 with *ret_targets set; 0 when polkit was asked (the
 * handler returns 1, unanswered); negative with error set. */
int spec_targets(Manager *m, sd_bus_message *msg, const char *spec_text, Target ***ret_targets, size_t *ret_n,
                 sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];
        TargetGroup *g;
        TargetSpec spec;
        int r;

        if (target_spec_parse(spec_text, &spec) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid target '%s': expected a PID, a unit name (NAME.service) or a "
                                         "cgroup path (/...)", quote_prefix(spec_text, quoted));
        /* A process attached with its children that was detached alone, or went as an exited target: its group
         * stays, named by its PID, for those who may see it (others hear of the PID as of any other). */
        g = spec.kind == TARGET_SPEC_PID && !manager_get_target(m, (pid_t)spec.pid) ? manager_get_group(m, spec_text)
                                                                                       : NULL;
        if (g && authz_group(&m->authz, msg, g, AUTHZ_READ, NULL, NULL) < 0)
                g = NULL;
        if (spec.kind == TARGET_SPEC_PID && !g) {
                Target *t;

                r = authz_target(&m->authz, msg, spec.pid, manager_get_target(m, (pid_t)spec.pid), AUTHZ_READ,
                                 NULL, &t, error);
                if (r <= 0)
                        return r;
                /* A process followed with its children: the group of them, named by its PID. */
                g = t->group && t->group->kind == TARGET_GROUP_CHILDREN && t->group->root_pid == t->pid ? t->group
                                                                                                      : NULL;
                if (!g) {
                        Target **one = calloc(1, sizeof(Target *));
                        if (!one)
                                return -ENOMEM;
                        one[0] = t;
                        *ret_targets = one;
                        *ret_n = 1;
                        return 1;
                }
        } else if (!g) {
                g = manager_get_group(m, spec_text);
                if (!g)
                        return sd_bus_error_setf(error, VPROF_ERROR_NOT_ATTACHED, "%s is not attached",
                                                 quote_prefix(spec_text, quoted));
                r = authz_group(&m->authz, msg, g, AUTHZ_READ, NULL, error);
                if (r <= 0)
                        return r;
        }
        r = manager_group_members(m, g, ret_targets, ret_n);
        return r < 0 ? r : 1;
}

/* A window the daemon keeps: none asked (0), or whole seconds up to WindowSeconds=. */
int check_window(const Manager *m, uint64_t window_usec, sd_bus_error *error)
{
        uint32_t seconds = query_window_seconds(window_usec);

        if (window_usec == 0)
                return 0;
        if (m->window_seconds == 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "Time windows are off in this vprofd (WindowSeconds=0)");
        if (seconds > m->window_seconds)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "A window of %" PRIu32 " s is longer than the %" PRIu32 " s this vprofd "
                                         "keeps (WindowSeconds=%" PRIu32 ")", seconds, m->window_seconds,
                                         m->window_seconds);
        return 0;
}

/* What query_view_build() and query_view_totals() refuse, as the bus says it. */
int view_error(int r, sd_bus_error *error)
{
        if (r == -EOPNOTSUPP)
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "A target of the query keeps no time window");
        if (r == -EXDEV)
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "The tables of the query's processes were counted at different "
                                         "frequencies and cannot be merged");
        return r;
}

/* The query of a call: the tables brought up to date (manager_sync()), its targets', viewed over the window.
 * Returns as spec_targets(). */
static int query_open(Manager *m, sd_bus_message *msg, const char *spec_text, uint64_t window_usec, Query *ret,
                      sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        int r;

        r = check_window(m, window_usec, error);
        if (r < 0)
                return r;
        /* Drained first: a drain may make targets (a group's new members) and drop exited ones to make room. */
        manager_sync(m);
        r = spec_targets(m, msg, spec_text, &q.targets, &q.n_targets, error);
        if (r <= 0)
                return r;
        r = query_view_build(q.targets, q.n_targets, m->config.frequency, window_usec, now_usec(CLOCK_REALTIME),
                             &q.view);
        if (r < 0)
                return view_error(r, error);
        if (q.view.inexact) {
                char quoted[QUOTE_SIZE];
                log_notice("A window of %s counts a second whose delta missed samples for want of memory: its "
                           "tables miss them.", quote_prefix(spec_text, quoted));
        }
        *ret = q;
        q = (Query){};
        return 1;
}

/* The same for a call whose arguments are the spec and the window. */
static int read_query(Manager *m, sd_bus_message *msg, Query *ret, sd_bus_error *error)
{
        const char *spec;
        uint64_t window_usec;
        int r;

        r = sd_bus_message_read(msg, "st", &spec, &window_usec);
        if (r < 0)
                return r;
        return query_open(m, msg, spec, window_usec, ret, error);
}

/* The single process a call names (the per-process calls: names of symbols, their modules). */
static int read_process(Manager *m, sd_bus_message *msg, Target **ret, sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];
        const char *spec_text;
        TargetSpec spec;
        int r;

        r = sd_bus_message_read(msg, "s", &spec_text);
        if (r < 0)
                return r;
        if (target_spec_parse(spec_text, &spec) < 0 || spec.kind != TARGET_SPEC_PID)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '%s': expected a PID",
                                         quote_prefix(spec_text, quoted));
        manager_sync(m); /* first, as in query_open() */
        return authz_target(&m->authz, msg, spec.pid, manager_get_target(m, (pid_t)spec.pid), AUTHZ_READ, NULL,
                            ret, error);
}

/* GetFunctions and GetFunctionValues read (s target, s sort, u limit, t window_usec); the sort key must be one
 * of the kind of table (values: the elapsed and application keys). Returns as query_open(), with the rows. */
static int read_function_table(Manager *m, sd_bus_message *msg, bool values, Query *ret_query,
                               ProfileRow **ret_rows, size_t *ret_n, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        char quoted[QUOTE_SIZE];
        const char *spec, *sort_name;
        uint64_t window_usec;
        uint32_t limit;
        ProfileSort sort;
        int r;

        r = sd_bus_message_read(msg, "ssut", &spec, &sort_name, &limit, &window_usec);
        if (r < 0)
                return r;
        sort = profile_sort_from_string(sort_name);
        if (values && !profile_sort_is_values(sort))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown sort key '%s': expected elapsed-inclusive, elapsed-exclusive, "
                                         "application-inclusive or application-exclusive",
                                         quote_prefix(sort_name, quoted));
        if (!values && (sort < 0 || profile_sort_is_values(sort)))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown sort key '%s': expected inclusive or exclusive",
                                         quote_prefix(sort_name, quoted));
        r = query_open(m, msg, spec, window_usec, &q, error);
        if (r <= 0)
                return r;
        r = profile_functions(q.view.profile, sort, limit, ret_rows, ret_n);
        if (r < 0)
                return r;
        *ret_query = q;
        q = (Query){};
        return 1;
}

/* GetModules, GetThreads and their values: a whole table. Returns as read_function_table(). */
typedef int (*profile_table_fn)(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n);
static int read_target_table(Manager *m, sd_bus_message *msg, profile_table_fn table, ProfileSort sort,
                             Query *ret_query, ProfileRow **ret_rows, size_t *ret_n, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        int r;

        r = read_query(m, msg, &q, error);
        if (r <= 0)
                return r;
        r = table(q.view.profile, sort, ret_rows, ret_n);
        if (r < 0)
                return r;
        *ret_query = q;
        q = (Query){};
        return 1;
}

/* The targets the caller may see, for the lists of every target, after draining the ring buffer. The caller
 * frees *ret (sized for every target). */
static int visible_targets(Manager *m, sd_bus_message *msg, Target ***ret, size_t *ret_n, sd_bus_error *error)
{
        _cleanup_free_ Target **targets = NULL;
        AuthzCaller caller;
        size_t n = 0;
        Target *t;
        int r;

        r = authz_caller(&m->authz, msg, AUTHZ_READ, &caller, error);
        if (r < 0)
                return r;
        manager_sync(m);
        targets = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(Target *));
        if (!targets)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets)
                if (authz_may_see(t, &caller))
                        targets[n++] = t;
        *ret = TAKE_PTR(targets);
        *ret_n = n;
        return 0;
}

static int append_row_name(sd_bus_message *reply, RowShape shape, const ProfileRow *row)
{
        switch (shape) {
        case ROW_FUNCTION:
                return sd_bus_message_append(reply, "ss", row->name, row->module);
        case ROW_MODULE:
                return sd_bus_message_append(reply, "s", row->name);
        default:
                return sd_bus_message_append(reply, "us", row->tid, row->name);
        }
}

/* A sampling table: the total, the window (start, end), then rows of (name part, inclusive, exclusive, their
 * percents of the total). */
static int reply_sampling_rows(sd_bus_message *msg, RowShape shape, const ProfileRow *rows, size_t n,
                               uint64_t total, uint64_t start_usec, uint64_t end_usec)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "t(tt)", total, start_usec, end_usec);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', row_signatures[shape].sampling);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = sd_bus_message_open_container(reply, 'r', row_signatures[shape].sampling_contents);
                if (r < 0)
                        return r;
                r = append_row_name(reply, shape, rows + i);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "ttdd", rows[i].inclusive, rows[i].exclusive,
                                          profile_percent(rows[i].inclusive, total),
                                          profile_percent(rows[i].exclusive, total));
                if (r < 0)
                        return r;
                r = sd_bus_message_close_container(reply);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int append_target(sd_bus_message *reply, const Target *t)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', "ua{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "u", (uint32_t)t->pid);
        if (r < 0)
                return r;
        /* frequency: of the tables' sample counts, which an exited target restored by a daemon that now samples at
         * another frequency keeps (state-store.h). */
        r = sd_bus_message_append(reply, "a{sv}", 10,
                                  "command", "s", t->info.comm,
                                  "state", "s", target_status(t),
                                  "samples", "t", profile_total(t->profile),
                                  "attached_usec", "t", t->attach_usec,
                                  "flags", "t", t->flags,
                                  "ns_pid", "u", (uint32_t)(t->info.ns_tgid ?: t->pid),
                                  "uid", "u", (uint32_t)t->info.uid[0],
                                  "start_time", "t", t->info.start_time,
                                  "frequency", "u", profile_frequency(t->profile),
                                  "group", "s", t->group ? t->group->spec : "");
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int method_list_targets(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ Target **targets = NULL;
        size_t n;
        int r;

        r = visible_targets(userdata, msg, &targets, &n, error);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ua{sv})");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = append_target(reply, targets[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int reply_view_rows(sd_bus_message *msg, RowShape shape, const ProfileRow *rows, size_t n,
                           const QueryView *v)
{
        return reply_sampling_rows(msg, shape, rows, n, profile_total(v->profile), v->start_usec, v->end_usec);
}

int method_get_functions(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = read_function_table(userdata, msg, false, &q, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_view_rows(msg, ROW_FUNCTION, rows, n, &q.view);
}

static int reply_sampling_table(sd_bus_message *msg, Manager *m, RowShape shape, profile_table_fn table,
                                sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = read_target_table(m, msg, table, PROFILE_SORT_INCLUSIVE, &q, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_view_rows(msg, shape, rows, n, &q.view);
}

int method_get_modules(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_sampling_table(msg, userdata, ROW_MODULE, profile_modules, error);
}

int method_get_threads(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_sampling_table(msg, userdata, ROW_ID, profile_threads, error);
}

/* Busiest first; the order of equal rows follows the PID. */
static int compare_process_rows(const void *x, const void *y)
{
        const ProfileRow *a = x, *b = y;

        if (a->inclusive != b->inclusive)
                return a->inclusive > b->inclusive ? -1 : 1;
        return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The processes of a spec ("" for every target the caller may see), with their totals over the window. Returns
 * as spec_targets(). */
static int read_processes(Manager *m, sd_bus_message *msg, Query *ret, uint64_t *ret_window_usec,
                          sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        const char *spec;
        int r;

        r = sd_bus_message_read(msg, "st", &spec, ret_window_usec);
        if (r < 0)
                return r;
        r = check_window(m, *ret_window_usec, error);
        if (r < 0)
                return r;
        if (spec[0] == '\0') {
                r = visible_targets(m, msg, &q.targets, &q.n_targets, error);
                if (r < 0)
                        return r;
        } else {
                manager_sync(m); /* first, as in query_open() */
                r = spec_targets(m, msg, spec, &q.targets, &q.n_targets, error);
                if (r <= 0)
                        return r;
        }
        *ret = q;
        q = (Query){};
        return 1;
}

/* One process's totals over the window, and the span they cover added to [*start, *end]. */
static int process_totals(Target *t, uint64_t window_usec, uint64_t after, uint64_t now, ProfileValues *ret_values,
                          uint32_t *ret_frequency, uint64_t *start, uint64_t *end, sd_bus_error *error)
{
        uint64_t s, e;
        int r;

        r = query_view_totals(t, window_usec, after, now, ret_values, &s, &e);
        if (r < 0)
                return view_error(r, error);
        *ret_frequency = profile_frequency(t->profile);
        /* A window in which no second of it closed covers nothing. */
        if (s > 0 || e > 0) {
                *start = MIN(*start, s);
                *end = MAX(*end, e);
        }
        return 0;
}

int method_get_processes(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        uint64_t total = 0, window_usec, after, now = now_usec(CLOCK_REALTIME), start = UINT64_MAX, end = 0;
        int r;

        r = read_processes(userdata, msg, &q, &window_usec, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        /* One span of time for every row. */
        after = query_window_after(q.targets, q.n_targets, window_usec);
        rows = calloc(MAX(q.n_targets, (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < q.n_targets; i++) {
                ProfileValues v;
                uint32_t frequency;
                uint64_t samples;

                r = process_totals(q.targets[i], window_usec, after, now, &v, &frequency, &start, &end, error);
                if (r < 0)
                        return r;
                samples = v.user_samples + v.kernel_samples;
                rows[i] = (ProfileRow){
                        .name = q.targets[i]->info.comm,
                        .tid = (uint32_t)q.targets[i]->pid,
                        .inclusive = samples,
                        .exclusive = samples,
                };
                total += samples;
        }
        qsort(rows, q.n_targets, sizeof(ProfileRow), compare_process_rows);
        if (start > end)
                start = end = now;
        return reply_sampling_rows(msg, ROW_ID, rows, q.n_targets, total, start, end);
}

static int append_stack_functions(sd_bus_message *reply, const Profile *p)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(p); id++) {
                const char *module, *function;

                r = profile_function_name(p, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(ss)", module, function);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int append_stack(sd_bus_message *reply, const ProfileStackRow *row)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', "auut");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "u");
        if (r < 0)
                return r;
        /* Outermost first on the bus; the table keeps them innermost first. */
        for (size_t i = row->n_frames; i-- > 0;) {
                r = sd_bus_message_append_basic(reply, 'u', &row->frames[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "ut", (uint32_t)row->n_kernel_frames, row->samples);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int method_get_stacks(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProfileStackRow *rows = NULL;
        _cleanup_(query_done) Query q = {};
        const Profile *p;
        const char *spec;
        uint64_t window_usec;
        uint32_t limit;
        size_t n, bytes = 0;
        int r;

        r = sd_bus_message_read(msg, "sut", &spec, &limit, &window_usec);
        if (r < 0)
                return r;
        r = query_open(userdata, msg, spec, window_usec, &q, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        p = q.view.profile;
        r = profile_stacks(p, limit, &rows, &n);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "tt(tt)", profile_total(p), profile_other_stack_samples(p),
                                  q.view.start_usec, q.view.end_usec);
        if (r < 0)
                return r;
        r = append_stack_functions(reply, p);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(auut)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                /* 4 bytes a frame, 24 of array length, counts and padding a stack. */
                bytes += rows[i].n_frames * 4 + 24;
                if (bytes > STACKS_MAX_BYTES)
                        break;
                r = append_stack(reply, &rows[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Frames without a symbol are named "MODULE+0xOFFSET" (target.c): count them per module. */
static bool unnamed(const ProfileRow *f, const char *module)
{
        size_t n = strlen(module);
        return strncmp(f->name, module, n) == 0 && strncmp(f->name + n, "+0x", 3) == 0;
}

/* Modules that are not files: the kernel's, the vDSO, JIT code. */
static const char *special_source(const char *module)
{
        if (strcmp(module, "[vdso]") == 0)
                return "vdso";
        if (strcmp(module, "[anon]") == 0 || strncmp(module, "[anon:", 6) == 0)
                return "perf-map";
        if (module[0] != '[')
                return NULL;
        /* Not kernel code, and no file either: nothing to name them with. */
        if (strcmp(module, "[unknown]") == 0 || strcmp(module, "[other]") == 0 || strcmp(module, "[heap]") == 0 ||
            strcmp(module, "[stack]") == 0)
                return "none";
        return "kallsyms";
}

/* A download for a module still named as before: "pending" or "failed" (source says how it is named
 * meanwhile). A module named through a downloaded file has source "debuginfod" instead. */
static int append_download(sd_bus_message *reply, const Debuginfod *d, const FileInfo *info)
{
        FetchState state;

        if (!d || !info->build_id || info->source == SYMBOL_SOURCE_DEBUGINFOD)
                return 0;
        state = debuginfod_state(d, info->build_id);
        if (!IN_SET(state, FETCH_PENDING, FETCH_FAILED))
                return 0;
        return sd_bus_message_append(reply, "{sv}", "debuginfod", "s", fetch_state_to_string(state));
}

static int append_module_symbols(sd_bus_message *reply, const Debuginfod *debuginfod, Target *t,
                                 const ProfileRow *m, const ProfileRow *functions, size_t n_functions)
{
        uint64_t unnamed_samples = 0;
        uint32_t unnamed_functions = 0;
        const char *special = special_source(m->name);
        FileInfo info = {};
        int r;

        for (size_t i = 0; i < n_functions; i++)
                if (strcmp(functions[i].module, m->name) == 0 && unnamed(&functions[i], m->name)) {
                        unnamed_functions++;
                        /* Exclusive counts add up; inclusive ones of several frames of one stack would not. */
                        unnamed_samples += functions[i].exclusive;
                }
        r = sd_bus_message_open_container(reply, 'r', "sa{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", m->name);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "{sv}{sv}{sv}", "samples", "t", m->exclusive, "unnamed_functions", "u",
                                  unnamed_functions, "unnamed_samples", "t", unnamed_samples);
        if (r < 0)
                return r;
        if (special)
                r = sd_bus_message_append(reply, "{sv}", "source", "s", special);
        else if (t->address_space && address_space_module_info(t->address_space, m->name, &info) >= 0) {
                r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}", "source", "s",
                                          symbol_source_to_string(info.source), "path", "s", info.path ?: "",
                                          "symbols", "t", (uint64_t)info.n_symbols, "load_usec", "t",
                                          info.load_usec);
                if (r >= 0 && info.debug_file) {
                        _cleanup_free_ char *escaped = NULL;
                        const char *debug_file;

                        /* The one path kept raw where it is read, to be opened again: escaped here. */
                        r = utf8_escape_or_keep(info.debug_file, &escaped, &debug_file);
                        if (r >= 0)
                                r = sd_bus_message_append(reply, "{sv}", "debug_file", "s", debug_file);
                }
                if (r >= 0 && info.build_id)
                        r = sd_bus_message_append(reply, "{sv}", "build_id", "s", info.build_id);
                if (r >= 0)
                        r = append_download(reply, debuginfod, &info);
        }
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int method_get_module_symbols(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *manager = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProfileRow *modules = NULL, *functions = NULL;
        size_t n_modules, n_functions;
        Target *t;
        int r;

        r = read_process(userdata, msg, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = profile_modules(t->profile, PROFILE_SORT_INCLUSIVE, &modules, &n_modules);
        if (r < 0)
                return r;
        r = profile_functions(t->profile, PROFILE_SORT_INCLUSIVE, 0, &functions, &n_functions);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sa{sv})");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_modules; i++) {
                r = append_module_symbols(reply, manager->debuginfod, t, &modules[i], functions, n_functions);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int method_get_symbol_names(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Target *t;
        int r;

        r = read_process(userdata, msg, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sss)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(t->profile); id++) {
                const char *module, *function, *mangled = profile_function_mangled(t->profile, (uint32_t)id);

                if (!mangled)
                        continue;
                r = profile_function_name(t->profile, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(sss)", module, function, mangled);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
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
static int append_values_row(sd_bus_message *reply, RowShape shape, const ProfileRow *row,
                             const Periods *inclusive, const Periods *exclusive, const Periods *session)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', row_signatures[shape].values_contents);
        if (r < 0)
                return r;
        r = append_row_name(reply, shape, row);
        if (r < 0)
                return r;
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

/* The rows of one view: its values, converted from its tables' frequency. */
static int reply_values(sd_bus_message *msg, Manager *m, const QueryView *v, RowShape shape, const ProfileRow *rows,
                        size_t n)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t frequency = profile_frequency(v->profile), unit = m->config.frequency;
        Periods session = to_periods(profile_total_values(v->profile), frequency, unit);
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "dd(tt)", session.elapsed, session.application, v->start_usec,
                                  v->end_usec);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', row_signatures[shape].values);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                Periods inclusive = to_periods(&rows[i].inclusive_values, frequency, unit),
                        exclusive = to_periods(&rows[i].exclusive_values, frequency, unit);

                r = append_values_row(reply, shape, rows + i, &inclusive, &exclusive, &session);
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
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = read_function_table(userdata, msg, true, &q, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_values(msg, userdata, &q.view, ROW_FUNCTION, rows, n);
}

static int reply_values_table(sd_bus_message *msg, Manager *m, RowShape shape, profile_table_fn table,
                              sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = read_target_table(m, msg, table, PROFILE_SORT_ELAPSED_INCLUSIVE, &q, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_values(msg, m, &q.view, shape, rows, n);
}

int method_get_module_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_values_table(msg, userdata, ROW_MODULE, profile_modules, error);
}

int method_get_thread_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_values_table(msg, userdata, ROW_ID, profile_threads, error);
}

/* One row a target: its process's values, in the daemon's periods (its tables may be of another frequency). */
typedef struct ProcessValues {
        ProfileRow row; /* the PID and command */
        Periods values;
} ProcessValues;

static int compare_process_values(const void *x, const void *y)
{
        const ProcessValues *a = x, *b = y;

        if (a->values.elapsed != b->values.elapsed)
                return a->values.elapsed > b->values.elapsed ? -1 : 1;
        return a->row.tid < b->row.tid ? -1 : a->row.tid > b->row.tid;
}

int method_get_process_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProcessValues *rows = NULL;
        _cleanup_(query_done) Query q = {};
        Manager *m = userdata;
        uint64_t window_usec, after, now = now_usec(CLOCK_REALTIME), start = UINT64_MAX, end = 0;
        Periods total = {};
        int r;

        r = read_processes(m, msg, &q, &window_usec, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        after = query_window_after(q.targets, q.n_targets, window_usec);
        rows = calloc(MAX(q.n_targets, (size_t)1), sizeof(ProcessValues));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < q.n_targets; i++) {
                const Target *t = q.targets[i];
                ProfileValues v;
                uint32_t frequency;

                r = process_totals(q.targets[i], window_usec, after, now, &v, &frequency, &start, &end, error);
                if (r < 0)
                        return r;
                rows[i] = (ProcessValues){
                        .row = { .name = t->info.comm, .tid = (uint32_t)t->pid },
                        .values = to_periods(&v, frequency, m->config.frequency),
                };
                total.elapsed += rows[i].values.elapsed;
                total.application += rows[i].values.application;
        }
        /* Most elapsed time first; the order of equal rows follows the PID. */
        qsort(rows, q.n_targets, sizeof(ProcessValues), compare_process_values);
        if (start > end)
                start = end = now;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "dd(tt)", total.elapsed, total.application, start, end);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', row_signatures[ROW_ID].values);
        if (r < 0)
                return r;
        for (size_t i = 0; i < q.n_targets; i++) {
                /* A process's exclusive values are its inclusive ones. */
                r = append_values_row(reply, ROW_ID, &rows[i].row, &rows[i].values, &rows[i].values, &total);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
