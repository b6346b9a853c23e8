/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GetProfile: a target's processes one by one, each with its own mappings, functions and stacks per thread, for
 * a pprof file (client/pprof/). The other queries merge a group's members by name; this one keeps them apart,
 * since a pprof location is an address in one process's mappings. The reply's shape is documented in
 * org.vprof.Profiler1.xml. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "address-space.h"
#include "bus-names.h"
#include "bus-query.h"
#include "bus-reply.h"
#include "macros.h"
#include "manager.h"
#include "profile-delta.h"
#include "profile-window.h"
#include "query.h"

/* The most a reply carries, in bytes of stacks, as GetStacks: the least sampled stacks are left out past it. */
#define PROFILE_MAX_BYTES (UINT32_C(8) << 20)

/* A stack the reply names PROFILE_OTHER: what was counted past the stack limit. */
#define ROW_OTHER UINT32_MAX

/* The counts of one stack and thread. */
typedef struct Row {
        uint32_t stack_id; /* the target's profile's, or ROW_OTHER */
        uint32_t tid;      /* 0: unknown */
        uint64_t samples;  /* on-CPU */
        uint64_t off_ns;   /* off-CPU, blocked and preempted */
} Row;

typedef struct Rows {
        Row *rows;
        size_t n, allocated;
} Rows;

static void rows_done(Rows *r)
{
        free(r->rows);
        *r = (Rows){};
}

static int rows_add(Rows *r, uint32_t stack_id, uint32_t tid, uint64_t samples, uint64_t off_ns)
{
        if (samples == 0 && off_ns == 0)
                return 0;
        if (r->n == r->allocated) {
                size_t allocated = MAX(r->allocated * 2, (size_t)64);
                Row *rows = reallocarray(r->rows, allocated, sizeof(Row));
                if (!rows)
                        return -ENOMEM;
                r->rows = rows;
                r->allocated = allocated;
        }
        r->rows[r->n++] = (Row){ .stack_id = stack_id, .tid = tid, .samples = samples, .off_ns = off_ns };
        return 0;
}

static int compare_stack_tid(const void *x, const void *y)
{
        const Row *a = x, *b = y;

        if (a->stack_id != b->stack_id)
                return a->stack_id < b->stack_id ? -1 : 1;
        return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Most samples first, then most off-CPU time, then by stack and thread, for a stable order. */
static int compare_busiest(const void *x, const void *y)
{
        const Row *a = x, *b = y;

        if (a->samples != b->samples)
                return a->samples > b->samples ? -1 : 1;
        if (a->off_ns != b->off_ns)
                return a->off_ns > b->off_ns ? -1 : 1;
        return compare_stack_tid(x, y);
}

/* Rows of one (stack, thread) summed into one: the other stack's entries are many (one per canonical frames). */
static void rows_merge(Rows *r)
{
        size_t n = 0;

        if (r->n == 0)
                return;
        qsort(r->rows, r->n, sizeof(Row), compare_stack_tid);
        for (size_t i = 1; i < r->n; i++) {
                Row *last = &r->rows[n];
                if (r->rows[i].stack_id == last->stack_id && r->rows[i].tid == last->tid) {
                        last->samples += r->rows[i].samples;
                        last->off_ns += r->rows[i].off_ns;
                } else
                        r->rows[++n] = r->rows[i];
        }
        r->n = n + 1;
}

static uint64_t on_cpu(const ProfileValues *v)
{
        return v->user_samples + v->kernel_samples;
}

static uint64_t off_cpu(const ProfileValues *v)
{
        return v->blocked_ns + v->preempted_ns;
}

/* The per-thread counts of the ring's seconds of the query's window (after_usec 0 and until_usec UINT64_MAX: all
 * it holds), one row per entry. */
static int window_rows(const Target *t, uint64_t after_usec, uint64_t until_usec, Rows *rows)
{
        _cleanup_(profile_delta_freep) ProfileDelta *sum = NULL;
        int r;

        if (!t->window)
                return 0;
        r = profile_delta_new(&sum);
        if (r < 0)
                return r;
        profile_delta_begin(sum, t->profile);
        r = profile_window_sum_between(t->window, t->profile, after_usec, until_usec, sum, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < profile_delta_n_entries(sum); i++) {
                ProfileDeltaEntry e;

                profile_delta_entry(sum, i, &e);
                r = rows_add(rows, e.stack_id == PROFILE_STACK_OTHER ? ROW_OTHER : e.stack_id, e.tid,
                             on_cpu(&e.values), off_cpu(&e.values));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Since the attach: the tables count stacks, not threads; the seconds the ring holds say which thread counted
 * what, and the rest of each stack's count (the seconds before the ring's oldest and the one still open) goes to
 * thread 0, unknown, so the sums stay exact. rows holds the ring's, merged (sorted by stack, then thread). */
static int whole_rows(const Target *t, Rows *rows)
{
        size_t n_ring = rows->n, at = 0;
        int r;

        for (uint32_t id = 0; id <= profile_n_stacks(t->profile); id++) {
                uint64_t samples, ring_samples = 0, ring_ns = 0;
                ProfileValues v;
                bool other = id == profile_n_stacks(t->profile);
                uint32_t row_id = other ? ROW_OTHER : id;

                if (other) {
                        v = *profile_other_stack_values(t->profile);
                        samples = profile_other_stack_samples(t->profile);
                } else {
                        r = profile_stack_counts(t->profile, id, &samples, &v);
                        if (r < 0)
                                return r;
                }
                while (at < n_ring && rows->rows[at].stack_id < row_id)
                        at++;
                for (; at < n_ring && rows->rows[at].stack_id == row_id; at++) {
                        ring_samples += rows->rows[at].samples;
                        ring_ns += rows->rows[at].off_ns;
                }
                /* The ring counts what the tables did, so never more; saturated all the same. */
                r = rows_add(rows, row_id, 0, samples - MIN(samples, ring_samples),
                             off_cpu(&v) - MIN(off_cpu(&v), ring_ns));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The counts of one process over the window, one row per (stack, thread), busiest first. */
static int process_rows(const Target *t, uint64_t window_usec, const Query *q, Rows *ret)
{
        _cleanup_(rows_done) Rows rows = {};
        int r;

        if (window_usec > 0) {
                if (!t->window)
                        return -EOPNOTSUPP;
                r = window_rows(t, q->after_usec, q->until_usec, &rows);
                if (r < 0)
                        return r;
                rows_merge(&rows);
        } else {
                r = window_rows(t, 0, UINT64_MAX, &rows);
                if (r < 0)
                        return r;
                rows_merge(&rows);
                r = whole_rows(t, &rows);
                if (r < 0)
                        return r;
                rows_merge(&rows);
        }
        if (rows.n > 0)
                qsort(rows.rows, rows.n, sizeof(Row), compare_busiest);
        *ret = rows;
        rows = (Rows){};
        return 0;
}

/* One mapping per module: the range of its executable mappings, from the first of them, as the maps hold it. */
static int append_mappings(sd_bus_message *reply, const Target *t)
{
        const ProcMaps *maps = t->address_space ? address_space_maps(t->address_space, NULL) : NULL;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sssttt)");
        if (r < 0)
                return r;
        for (size_t i = 0; maps && i < maps->n; i++) {
                const ProcMap *m = &maps->maps[i];
                const char *slash, *module;
                uint64_t start = m->start, limit = m->end;
                FileInfo info = {};
                bool seen = false;

                if (!m->executable || !m->path || strncmp(m->path, "[anon", 5) == 0)
                        continue;
                /* Shown escaped (ProcMap.name), as the tables hold it; compared raw below. */
                slash = strrchr(m->name, '/');
                module = m->name[0] == '/' && slash[1] ? slash + 1 : m->name;
                /* Once per module: its first executable mapping's, spanning the later ones of the same path. */
                for (size_t j = 0; j < i && !seen; j++)
                        seen = maps->maps[j].executable && maps->maps[j].path &&
                               strcmp(maps->maps[j].path, m->path) == 0;
                if (seen)
                        continue;
                for (size_t j = i + 1; j < maps->n; j++)
                        if (maps->maps[j].executable && maps->maps[j].path &&
                            strcmp(maps->maps[j].path, m->path) == 0)
                                limit = MAX(limit, maps->maps[j].end);
                if (m->path[0] == '/')
                        (void)address_space_module_info(t->address_space, module, &info);
                r = sd_bus_message_append(reply, "(sssttt)", module, m->name, info.build_id ?: "", start, limit,
                                          m->offset);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* Every function of the tables, by id, and PROFILE_OTHER after them for the other stack's row. */
static int append_functions(sd_bus_message *reply, const Profile *p)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssst)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(p); id++) {
                const char *module, *function, *mangled = profile_function_mangled(p, (uint32_t)id);

                r = profile_function_name(p, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(ssst)", module, function, mangled ?: "",
                                          profile_function_address(p, (uint32_t)id));
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_append(reply, "(ssst)", PROFILE_OTHER, PROFILE_OTHER, "", UINT64_C(0));
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* The functions of p that are one line of a function (profile_intern_line()): (index, line). */
static int append_lines(sd_bus_message *reply, const Profile *p)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(uu)");
        for (size_t id = 0; r >= 0 && id < profile_n_functions(p); id++) {
                uint32_t line = profile_function_line(p, (uint32_t)id);

                if (line > 0)
                        r = sd_bus_message_append(reply, "(uu)", (uint32_t)id, line);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* The functions of p whose source the profile has (a Python function's from its code object, a native one's once
 * GetFunctionSources read it): (index, FILE:LINE). */
static int append_known_sources(sd_bus_message *reply, const Profile *p)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(us)");
        for (size_t id = 0; r >= 0 && id < profile_n_functions(p); id++) {
                const char *source = profile_function_source(p, (uint32_t)id);

                if (source)
                        r = sd_bus_message_append(reply, "(us)", (uint32_t)id, source);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int append_stack(sd_bus_message *reply, const Profile *p, const Row *row)
{
        const uint32_t other = (uint32_t)profile_n_functions(p);
        const uint32_t *frames = &other;
        size_t n_frames = 1, n_kernel = 0;
        int r;

        if (row->stack_id != ROW_OTHER) {
                r = profile_stack_frames(p, row->stack_id, &frames, &n_frames, &n_kernel);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_open_container(reply, 'r', "auuutt");
        if (r < 0)
                return r;
        /* Innermost first, as the tables keep them and as pprof lists a sample's locations. */
        r = sd_bus_message_append_array(reply, 'u', frames, n_frames * sizeof(uint32_t));
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "uutt", (uint32_t)n_kernel, row->tid, row->samples, row->off_ns);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* The bytes of the process's function names, as the reply counts them against PROFILE_MAX_BYTES. */
static size_t function_bytes(const Profile *p)
{
        size_t bytes = 0;

        for (size_t id = 0; id < profile_n_functions(p); id++) {
                const char *module, *function, *mangled = profile_function_mangled(p, (uint32_t)id);

                if (profile_function_name(p, (uint32_t)id, &module, &function) >= 0)
                        bytes += strlen(module) + strlen(function) + (mangled ? strlen(mangled) : 0) + 32;
        }
        return bytes;
}

/* How many of the busiest rows go out: at most limit (0: all) a process, and no more once the reply's stacks
 * would pass PROFILE_MAX_BYTES (*full then stays set for the next processes). The samples of the rest are added
 * to *other. */
static size_t rows_kept(const Profile *p, const Rows *rows, uint32_t limit, size_t *bytes, bool *full,
                        uint64_t *other)
{
        size_t kept = 0;

        *bytes += function_bytes(p);
        for (; kept < rows->n && !*full && (limit == 0 || kept < limit); kept++) {
                const uint32_t *frames;
                size_t n_frames = 1, n_kernel, size;

                if (rows->rows[kept].stack_id != ROW_OTHER &&
                    profile_stack_frames(p, rows->rows[kept].stack_id, &frames, &n_frames, &n_kernel) < 0)
                        n_frames = 0;
                /* 4 bytes a frame, 40 of array length, thread, counts and padding a stack. */
                size = n_frames * 4 + 40;
                if (*bytes + size > PROFILE_MAX_BYTES) {
                        *full = true;
                        break;
                }
                *bytes += size;
        }
        for (size_t i = kept; i < rows->n; i++)
                *other += rows->rows[i].samples;
        return kept;
}

/* The names of the process's threads (the tables keep them, as the last sample of each named it). */
static int append_threads(sd_bus_message *reply, const Profile *p)
{
        _cleanup_free_ ProfileRow *threads = NULL;
        size_t n;
        int r;

        r = profile_threads(p, PROFILE_SORT_ELAPSED_INCLUSIVE, &threads, &n); /* every thread with time */
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(us)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = sd_bus_message_append(reply, "(us)", threads[i].tid, threads[i].name ?: "");
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* One process: pid, command, unit, mappings, functions, threads, then its n busiest stacks. */
static int append_process(sd_bus_message *reply, const Target *t, const Rows *rows, size_t n)
{
        const char *unit = t->group && t->group->kind == TARGET_GROUP_UNIT ? t->group->spec : "";
        int r;

        r = sd_bus_message_open_container(reply, 'r', "ussa(sssttt)a(ssst)a(us)a(auuutt)");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "uss", (uint32_t)t->pid, t->info.comm, unit);
        if (r < 0)
                return r;
        r = append_mappings(reply, t);
        if (r < 0)
                return r;
        r = append_functions(reply, t->profile);
        if (r < 0)
                return r;
        r = append_threads(reply, t->profile);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(auuutt)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = append_stack(reply, t->profile, &rows->rows[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* The processes' rows, one Rows each, and how many of each go out. */
typedef struct Plan {
        Rows *rows;
        size_t *kept;
        size_t n;
} Plan;

static void plan_done(Plan *p)
{
        for (size_t i = 0; p->rows && i < p->n; i++)
                rows_done(&p->rows[i]);
        free(p->rows);
        free(p->kept);
        *p = (Plan){};
}

int method_get_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(plan_done) Plan plan = {};
        _cleanup_(query_done) Query q = {};
        QueryRequest req = { .needs = QUERY_TOTALS };
        Manager *m = userdata;
        uint64_t total = 0, other = 0;
        uint32_t limit, frequency = m->config.frequency;
        size_t bytes = 0;
        bool off = false, full = false;
        int r;

        r = sd_bus_message_read(msg, "sut", &req.spec, &limit, &req.window_usec);
        if (r < 0)
                return r;
        r = query_run(m, msg, &req, &q, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */

        plan.rows = calloc(MAX(q.n_targets, (size_t)1), sizeof(Rows));
        plan.kept = calloc(MAX(q.n_targets, (size_t)1), sizeof(size_t));
        if (!plan.rows || !plan.kept)
                return -ENOMEM;
        plan.n = q.n_targets;
        for (size_t i = 0; i < q.n_targets; i++) {
                const Target *t = q.targets[i];

                /* One frequency for all, as the merged tables of the other queries require. */
                if (i == 0)
                        frequency = q.totals[i].frequency;
                else if (q.totals[i].frequency != frequency)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                                 "The tables of the query's processes were counted at different "
                                                 "frequencies and cannot be merged");
                r = process_rows(t, req.window_usec, &q, &plan.rows[i]);
                if (r < 0)
                        return r;
                total += on_cpu(&q.totals[i].values);
                off = off || (t->flags & VPROF_ATTACH_OFF_CPU);
                plan.kept[i] = rows_kept(t->profile, &plan.rows[i], limit, &bytes, &full, &other);
        }

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "tt(tt)ub", total, other, q.start_usec, q.end_usec, frequency, off);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ussa(sssttt)a(ssst)a(us)a(auuutt))");
        if (r < 0)
                return r;
        for (size_t i = 0; i < q.n_targets; i++) {
                r = append_process(reply, q.targets[i], &plan.rows[i], plan.kept[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        /* Each process's inlined functions, in the order of the processes. */
        r = sd_bus_message_open_container(reply, 'a', "au");
        for (size_t i = 0; r >= 0 && i < q.n_targets; i++)
                r = bus_append_inlined(reply, q.targets[i]->profile);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        /* And the sources known without reading DWARF, so that a pprof file has Python's files and lines. */
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "a(us)");
        for (size_t i = 0; r >= 0 && i < q.n_targets; i++)
                r = append_known_sources(reply, q.targets[i]->profile);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        /* And the lines the Python frames were at. */
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "a(uu)");
        for (size_t i = 0; r >= 0 && i < q.n_targets; i++)
                r = append_lines(reply, q.targets[i]->profile);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
