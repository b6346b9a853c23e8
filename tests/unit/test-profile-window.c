/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "profile-delta.h"
#include "profile-random.h"
#include "profile-window.h"

/* The properties that matter: the window over every bucket is the target's whole profile, table for table; the
 * window of the last k seconds is what a profile fed only those seconds' samples counts; a merge of two profiles
 * is one profile fed both sample sets. Tables are compared by name, as a text dump (ids differ between the
 * profiles compared). */

/* ck_assert() writes to check's pipe every time: in the loops that feed samples, only a failure does. */
#define OK(expr)                                                                                               \
        do {                                                                                                   \
                int _r_ = (expr);                                                                              \
                if (_r_ != 0)                                                                                  \
                        ck_abort_msg("%s: %d", #expr, _r_);                                                    \
        } while (0)

#define SECOND UINT64_C(1000000)
#define T0 (UINT64_C(1795000000) * SECOND)

static void dump_values(FILE *f, const ProfileValues *v)
{
        fprintf(f, " %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64, v->user_samples, v->kernel_samples, v->blocked_ns,
                v->preempted_ns);
}

static int compare_strings(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines sorted: rows of equal values are in name order, and thread names are not always compared. */
static void print_sorted(FILE *f, const char *what, char **lines, size_t n)
{
        qsort(lines, n, sizeof(char *), compare_strings);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s %s\n", what, lines[i]);
                free(lines[i]);
        }
        free(lines);
}

static void dump_rows(FILE *f, const char *what, const ProfileRow *rows, size_t n, bool thread_names)
{
        char **lines = calloc(n + 1, sizeof(char *));

        ck_assert_ptr_nonnull(lines);
        for (size_t i = 0; i < n; i++) {
                size_t size = 0;
                FILE *g = open_memstream(&lines[i], &size);

                fprintf(g, "%s %s%s %u %" PRIu64 " %" PRIu64, rows[i].module ?: "-",
                        thread_names || rows[i].module ? rows[i].name : "", rows[i].inlined ? " (inlined)" : "",
                        rows[i].tid, rows[i].inclusive, rows[i].exclusive);
                dump_values(g, &rows[i].inclusive_values);
                dump_values(g, &rows[i].exclusive_values);
                fclose(g);
        }
        print_sorted(f, what, lines, n);
}

static void dump_stacks(FILE *f, const Profile *p)
{
        _cleanup_free_ ProfileStackRow *rows = NULL;
        char **lines;
        size_t n;

        ck_assert_int_eq(profile_stacks(p, 0, &rows, &n), 0);
        lines = calloc(n + 1, sizeof(char *));
        ck_assert_ptr_nonnull(lines);
        for (size_t i = 0; i < n; i++) {
                char *s = NULL;
                size_t size = 0;
                FILE *g = open_memstream(&s, &size);

                for (size_t j = 0; j < rows[i].n_frames; j++) {
                        const char *module, *function;
                        OK(profile_function_name(p, rows[i].frames[j], &module, &function));
                        fprintf(g, "%s!%s%s;", module, function,
                                profile_function_inlined(p, rows[i].frames[j]) ? " (inlined)" : "");
                }
                fprintf(g, " k%zu %" PRIu64, rows[i].n_kernel_frames, rows[i].samples);
                dump_values(g, &rows[i].values);
                fclose(g);
                lines[i] = s;
        }
        print_sorted(f, "stack", lines, n);
}

/* Every table of p, and its totals, as text. Thread names are left out when the two profiles compared cannot
 * agree on them (see test_last_seconds_equal_their_samples). */
static char *dump(const Profile *p, bool thread_names)
{
        static const ProfileSort sorts[] = { PROFILE_SORT_EXCLUSIVE, PROFILE_SORT_ELAPSED_INCLUSIVE };
        char *s = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&s, &size);

        ck_assert_ptr_nonnull(f);
        fprintf(f, "total %" PRIu64 " other-stack %" PRIu64 " other-function %" PRIu64 "\n", profile_total(p),
                profile_other_stack_samples(p), profile_other_function_samples(p));
        dump_values(f, profile_total_values(p));
        fputc('\n', f);
        for (size_t k = 0; k < ELEMENTSOF(sorts); k++) {
                _cleanup_free_ ProfileRow *functions = NULL, *modules = NULL, *threads = NULL;
                size_t n_functions, n_modules, n_threads;

                ck_assert_int_eq(profile_functions(p, sorts[k], 0, &functions, &n_functions), 0);
                ck_assert_int_eq(profile_modules(p, sorts[k], &modules, &n_modules), 0);
                ck_assert_int_eq(profile_threads(p, sorts[k], &threads, &n_threads), 0);
                dump_rows(f, "function", functions, n_functions, true);
                dump_rows(f, "module", modules, n_modules, true);
                dump_rows(f, "thread", threads, n_threads, thread_names);
        }
        dump_stacks(f, p);
        fclose(f);
        return s;
}

static void assert_same_tables(const Profile *a, const Profile *b, bool thread_names, const char *what)
{
        _cleanup_free_ char *x = dump(a, thread_names), *y = dump(b, thread_names);
        size_t i = 0, line = 1;

        if (strcmp(x, y) == 0)
                return;
        for (; x[i] && x[i] == y[i]; i++)
                line += x[i] == '\n';
        ck_abort_msg("%s: the tables differ from line %zu:\n%.200s\n---\n%.200s", what, line,
                     x + i - MIN(i, (size_t)40), y + i - MIN(i, (size_t)40));
}

/* s, a sample of from, counted in to by its functions' names. */
static void feed_by_name(const Profile *from, const ProfileSample *s, Profile *to)
{
        uint32_t frames[RANDOM_MAX_FRAMES];
        ProfileSample t = *s;

        for (size_t i = 0; i < s->n_frames; i++) {
                const char *module, *function;
                OK(profile_function_name(from, s->frames[i], &module, &function));
                if (profile_function_line(from, s->frames[i]) > 0)
                        OK(profile_intern_line(to, module, function, profile_function_line(from, s->frames[i]),
                                               &frames[i]));
                else
                        OK(profile_intern_frame(to, module, function, profile_function_inlined(from, s->frames[i]),
                                                &frames[i]));
        }
        t.frames = frames;
        OK(profile_add_sample(to, &t));
}

/* A target as the daemon keeps one: its profile, the delta of the open second, the ring. */
typedef struct Target {
        Profile *p;
        ProfileDelta *d;
        ProfileWindow *w;
        uint64_t now;
} Target;

static void target_init(Target *t, uint32_t max_seconds, size_t max_bytes)
{
        *t = (Target){ .now = T0 };
        ck_assert_int_eq(profile_new(997, &t->p), 0);
        ck_assert_int_eq(profile_delta_new(&t->d), 0);
        ck_assert_int_eq(profile_window_new(max_seconds, max_bytes, &t->w), 0);
        profile_delta_begin(t->d, t->p);
}

static void target_done(Target *t)
{
        profile_free(t->p);
        profile_delta_free(t->d);
        profile_window_free(t->w);
}

/* The second closes: into the ring, and the next one begins. */
static void target_close_second(Target *t)
{
        profile_delta_end(t->d, t->p);
        ck_assert_int_eq(profile_window_push(t->w, t->d, t->now, t->now + SECOND), 0);
        t->now += SECOND;
        profile_delta_begin(t->d, t->p);
}

static void target_sample(Target *t, RandomStream *rs, ProfileSample *ret)
{
        static uint32_t frames[RANDOM_MAX_FRAMES];
        uint32_t stack_id;

        random_sample(rs, t->p, frames, ret, &stack_id);
        OK(profile_delta_add(t->d, ret, stack_id));
}

static Profile *window(const Target *t, uint32_t n_seconds, ProfileWindowSpan *ret_span)
{
        Profile *q = NULL;

        ck_assert_int_eq(profile_new(profile_frequency(t->p), &q), 0);
        ck_assert_int_eq(profile_window_count(t->w, t->p, n_seconds, q, ret_span), 0);
        return q;
}

static void whole_history(uint64_t seed, bool off_cpu, bool limits)
{
        _cleanup_(target_done) Target t;
        ProfileWindowSpan span;
        RandomStream rs;
        ProfileSample s;

        random_stream_init(&rs, seed, off_cpu);
        target_init(&t, 1000, 0);
        if (limits)
                profile_set_limits(t.p, 25, 30);
        for (int second = 0; second < 30; second++) {
                size_t n = random_below(&rs, 5) == 0 ? 0 : random_below(&rs, 300);
                for (size_t i = 0; i < n; i++)
                        target_sample(&t, &rs, &s);
                target_close_second(&t);
        }
        ck_assert_uint_eq(profile_window_n_buckets(t.w), 30);
        for (int k = 0; k < 2; k++) {
                _cleanup_(profile_freep) Profile *q = window(&t, k == 0 ? UINT32_MAX : 30, &span);

                assert_same_tables(t.p, q, true, "the window of all the history");
                ck_assert_uint_eq(span.buckets, 30);
                ck_assert_uint_eq(span.start_usec, T0);
                ck_assert_uint_eq(span.end_usec, T0 + 30 * SECOND);
                ck_assert(!span.inexact);
        }
        if (limits) {
                ck_assert_uint_gt(profile_other_stack_samples(t.p), 0);
                ck_assert_uint_gt(profile_other_function_samples(t.p), 0);
        }
}

START_TEST(test_whole_history_equals_profile)
{
        for (uint64_t seed = 1; seed <= 8; seed++)
                whole_history(seed, false, false);
        for (uint64_t seed = 100; seed <= 108; seed++)
                whole_history(seed, true, false);
        /* The other stack's entries, and functions folded into "[other]". */
        for (uint64_t seed = 200; seed <= 208; seed++)
                whole_history(seed, seed % 2, true);
}
END_TEST

/* The last k seconds against profiles fed only those seconds' samples; with a ring shorter than the history (it
 * wraps around), and windows longer than what it holds. */
static void last_seconds(uint64_t seed, bool off_cpu, uint32_t max_seconds)
{
        static const uint32_t ks[] = { 1, 2, 5, 8, 13, 40 };
        const int n_seconds = 40;
        Profile *fed[ELEMENTSOF(ks)] = {};
        _cleanup_(target_done) Target t;
        RandomStream rs;
        ProfileSample s;

        random_stream_init(&rs, seed, off_cpu);
        target_init(&t, max_seconds, 0);
        for (size_t k = 0; k < ELEMENTSOF(ks); k++)
                ck_assert_int_eq(profile_new(profile_frequency(t.p), &fed[k]), 0);
        for (int second = 0; second < n_seconds; second++) {
                size_t n = random_below(&rs, 6) == 0 ? 0 : random_below(&rs, 200);

                for (size_t i = 0; i < n; i++) {
                        target_sample(&t, &rs, &s);
                        for (size_t k = 0; k < ELEMENTSOF(ks); k++)
                                if (second >= n_seconds - (int)MIN(ks[k], max_seconds))
                                        feed_by_name(t.p, &s, fed[k]);
                }
                target_close_second(&t);
        }
        ck_assert_uint_eq(profile_window_n_buckets(t.w), MIN((uint32_t)n_seconds, max_seconds));
        for (size_t k = 0; k < ELEMENTSOF(ks); k++) {
                ProfileWindowSpan span;
                _cleanup_(profile_freep) Profile *q = window(&t, ks[k], &span);
                uint32_t held = MIN(ks[k], max_seconds);
                char what[64];

                snprintf(what, sizeof(what), "seed %" PRIu64 ", the last %u seconds", seed, ks[k]);
                /* A thread whose samples of the window all came without a name is named in the target by an
                 * older one: the window says the target's name, the profile fed the window's samples none. */
                assert_same_tables(fed[k], q, false, what);
                ck_assert_uint_eq(span.buckets, held);
                ck_assert_uint_eq(span.end_usec, T0 + (uint64_t)n_seconds * SECOND);
                ck_assert_uint_eq(span.start_usec, span.end_usec - held * SECOND);
                profile_free(fed[k]);
        }
}

START_TEST(test_last_seconds_equal_their_samples)
{
        for (uint64_t seed = 1; seed <= 6; seed++)
                last_seconds(seed, seed % 2, 1000);
}
END_TEST

/* Windows that end before the newest second (a diff's base), by time: the seconds that end after one bound and
 * no later than the other are those of a profile fed only their samples, totals included. */
START_TEST(test_windows_before_now)
{
        static const struct { uint32_t length, ago; } windows[] = { { 3, 2 }, { 10, 10 }, { 1, 19 }, { 5, 0 },
                                                                    { 40, 5 } };
        const int n_seconds = 20;
        Profile *fed[ELEMENTSOF(windows)] = {};
        _cleanup_(target_done) Target t;
        RandomStream rs;
        ProfileSample s;

        random_stream_init(&rs, 7, true);
        target_init(&t, 1000, 0);
        for (size_t k = 0; k < ELEMENTSOF(windows); k++)
                ck_assert_int_eq(profile_new(profile_frequency(t.p), &fed[k]), 0);
        for (int second = 0; second < n_seconds; second++) {
                size_t n = 1 + random_below(&rs, 150);

                for (size_t i = 0; i < n; i++) {
                        int ago = n_seconds - 1 - second; /* of the second's end from the newest's */

                        target_sample(&t, &rs, &s);
                        for (size_t k = 0; k < ELEMENTSOF(windows); k++)
                                if (ago >= (int)windows[k].ago && ago < (int)(windows[k].ago + windows[k].length))
                                        feed_by_name(t.p, &s, fed[k]);
                }
                target_close_second(&t);
        }
        for (size_t k = 0; k < ELEMENTSOF(windows); k++) {
                uint64_t newest = T0 + (uint64_t)n_seconds * SECOND, end = newest - windows[k].ago * SECOND;
                uint64_t after = end - MIN(end - T0, (uint64_t)windows[k].length * SECOND) + SECOND / 2;
                uint32_t held = MIN(windows[k].length, (uint32_t)n_seconds - windows[k].ago);
                _cleanup_(profile_freep) Profile *q = NULL;
                ProfileWindowSpan span, totals_span;
                ProfileValues totals;
                char what[64];

                ck_assert_int_eq(profile_new(profile_frequency(t.p), &q), 0);
                OK(profile_window_count_between(t.w, t.p, after, end + SECOND / 2, q, &span));
                snprintf(what, sizeof(what), "%u s ending %u s before the newest", windows[k].length,
                         windows[k].ago);
                assert_same_tables(fed[k], q, false, what);
                ck_assert_uint_eq(span.buckets, held);
                ck_assert_uint_eq(span.end_usec, end);
                ck_assert_uint_eq(span.start_usec, end - held * SECOND);
                OK(profile_window_totals_between(t.w, after, end + SECOND / 2, &totals, &totals_span));
                ck_assert_uint_eq(totals.user_samples + totals.kernel_samples, profile_total(fed[k]));
                ck_assert_uint_eq(totals.blocked_ns, profile_total_values(fed[k])->blocked_ns);
                ck_assert_uint_eq(totals_span.buckets, held);
                profile_free(fed[k]);
        }
}
END_TEST

START_TEST(test_wrap_around)
{
        /* 40 seconds into 8 slots: the ring wraps five times; a window of 13 or 40 seconds holds the 8. */
        for (uint64_t seed = 10; seed <= 14; seed++)
                last_seconds(seed, seed % 2, 8);
        last_seconds(15, true, 1);
}
END_TEST

START_TEST(test_window_longer_than_history)
{
        _cleanup_(target_done) Target t;
        _cleanup_(profile_freep) Profile *all = NULL, *long_window = NULL;
        ProfileWindowSpan span;
        RandomStream rs;
        ProfileSample s;

        random_stream_init(&rs, 3, true);
        target_init(&t, 600, 0);
        for (int second = 0; second < 3; second++) {
                for (int i = 0; i < 50; i++)
                        target_sample(&t, &rs, &s);
                target_close_second(&t);
        }
        long_window = window(&t, 60, &span);
        ck_assert_uint_eq(span.buckets, 3);
        ck_assert_uint_eq(span.end_usec - span.start_usec, 3 * SECOND);
        all = window(&t, UINT32_MAX, NULL);
        assert_same_tables(all, long_window, true, "60 s of a 3-second history");
        assert_same_tables(t.p, long_window, true, "60 s of a 3-second history against the profile");

        /* No bucket at all: an empty window, all zeros. */
        {
                _cleanup_(target_done) Target fresh;
                _cleanup_(profile_freep) Profile *q = NULL;

                target_init(&fresh, 10, 0);
                q = window(&fresh, 10, &span);
                ck_assert_uint_eq(profile_total(q), 0);
                ck_assert_uint_eq(span.buckets, 0);
                ck_assert_uint_eq(span.start_usec, 0);
                ck_assert_uint_eq(span.end_usec, 0);
        }
}
END_TEST

START_TEST(test_idle_seconds)
{
        _cleanup_(target_done) Target t;
        ProfileWindowSpan span;
        RandomStream rs;
        ProfileSample s;
        size_t before;

        random_stream_init(&rs, 5, false);
        target_init(&t, 100, 0);
        for (int i = 0; i < 100; i++)
                target_sample(&t, &rs, &s);
        target_close_second(&t);
        before = profile_window_bytes(t.w);
        /* Ten idle seconds: headers only. */
        for (int second = 0; second < 10; second++)
                target_close_second(&t);
        ck_assert_uint_eq(profile_window_n_buckets(t.w), 11);
        ck_assert_uint_le(profile_window_bytes(t.w) - before, 16 * 32); /* the ring's first growth at most */
        {
                _cleanup_(profile_freep) Profile *idle = window(&t, 10, &span), *all = window(&t, 11, NULL);
                ProfileValues totals;

                ck_assert_uint_eq(profile_total(idle), 0);
                ck_assert_uint_eq(span.buckets, 10);
                ck_assert_uint_eq(span.end_usec - span.start_usec, 10 * SECOND);
                assert_same_tables(t.p, all, true, "a busy second and ten idle ones");
                ck_assert_int_eq(profile_window_totals(t.w, 10, &totals, &span), 0);
                ck_assert_uint_eq(totals.user_samples + totals.kernel_samples, 0);
                ck_assert_int_eq(profile_window_totals(t.w, 11, &totals, &span), 0);
                ck_assert_uint_eq(totals.user_samples + totals.kernel_samples, profile_total(t.p));
                ck_assert_uint_eq(span.buckets, 11);
        }
}
END_TEST

/* Recursion counts once per sample in a window, as everywhere (docs/COUNTING.md). */
START_TEST(test_recursion_once_per_sample)
{
        _cleanup_(target_done) Target t;
        uint32_t main_id, r, leaf, stack_id;
        size_t n;

        target_init(&t, 10, 0);
        ck_assert_int_eq(profile_intern_function(t.p, "app", "main", &main_id), 0);
        ck_assert_int_eq(profile_intern_function(t.p, "app", "r", &r), 0);
        ck_assert_int_eq(profile_intern_function(t.p, "libx.so", "leaf", &leaf), 0);
        const uint32_t deep[] = { r, r, r, r, main_id };
        const uint32_t to_leaf[] = { leaf, r, r, main_id };

        /* Second 1: 5 samples deep in r; second 2: 3 samples in leaf under r, 2 deep in r. */
        for (int i = 0; i < 5; i++) {
                ProfileSample s = { .tid = 1, .thread_name = "t", .frames = deep, .n_frames = 5 };
                ck_assert_int_eq(profile_add_sample_stack(t.p, &s, &stack_id), 0);
                ck_assert_int_eq(profile_delta_add(t.d, &s, stack_id), 0);
        }
        target_close_second(&t);
        for (int i = 0; i < 5; i++) {
                ProfileSample s = { .tid = 1, .frames = i < 3 ? to_leaf : deep, .n_frames = i < 3 ? 4 : 5 };
                ck_assert_int_eq(profile_add_sample_stack(t.p, &s, &stack_id), 0);
                ck_assert_int_eq(profile_delta_add(t.d, &s, stack_id), 0);
        }
        target_close_second(&t);

        for (uint32_t seconds = 1; seconds <= 2; seconds++) {
                _cleanup_(profile_freep) Profile *q = window(&t, seconds, NULL);
                _cleanup_free_ ProfileRow *f = NULL;
                bool seen_r = false;

                ck_assert_uint_eq(profile_total(q), 5 * seconds);
                ck_assert_int_eq(profile_functions(q, PROFILE_SORT_INCLUSIVE, 0, &f, &n), 0);
                for (size_t i = 0; i < n; i++) {
                        if (strcmp(f[i].name, "r") != 0)
                                continue;
                        seen_r = true;
                        /* Once per sample however deep: never above the total. */
                        ck_assert_uint_eq(f[i].inclusive, 5 * seconds);
                        ck_assert_uint_eq(f[i].exclusive, seconds == 1 ? 2 : 7);
                        ck_assert_uint_eq(f[i].inclusive_values.user_samples, 5 * seconds);
                        ck_assert_uint_eq(f[i].exclusive_values.user_samples, seconds == 1 ? 2 : 7);
                }
                ck_assert(seen_r);
        }
}
END_TEST

/* Past the stack limit samples are counted in the other stack, their entries keeping canonical frames: a window
 * counts them there, with every other count exact. */
START_TEST(test_other_stack_entries)
{
        _cleanup_(target_done) Target t;
        uint32_t id[4], frames[8], stack_id;

        target_init(&t, 10, 0);
        profile_set_limits(t.p, 0, 1);
        for (int i = 0; i < 4; i++) {
                char name[8];
                snprintf(name, sizeof(name), "f%d", i);
                ck_assert_int_eq(profile_intern_function(t.p, "app", name, &id[i]), 0);
        }
        for (int second = 0; second < 3; second++) {
                for (int i = 0; i < 10 * (second + 1); i++) {
                        /* f0 <- (f1|f2)* <- f3, recursion and all: one stack, then others past the limit. */
                        uint32_t n = 0;
                        frames[n++] = id[0];
                        for (int j = 0; j < i % 4; j++)
                                frames[n++] = id[1 + (i + j) % 2];
                        frames[n++] = id[3];
                        ProfileSample s = { .tid = 9, .thread_name = "w", .frames = frames, .n_frames = n };
                        ck_assert_int_eq(profile_add_sample_stack(t.p, &s, &stack_id), 0);
                        ck_assert_int_eq(profile_delta_add(t.d, &s, stack_id), 0);
                }
                target_close_second(&t);
        }
        ck_assert_uint_gt(profile_other_stack_samples(t.p), 0);
        {
                _cleanup_(profile_freep) Profile *all = window(&t, UINT32_MAX, NULL), *last = window(&t, 1, NULL);

                assert_same_tables(t.p, all, true, "other-stack entries");
                ck_assert_uint_eq(profile_other_stack_samples(all), profile_other_stack_samples(t.p));
                /* The newest second, 30 samples: its stack's share was the ones with no f1/f2 (i % 4 == 0). */
                ck_assert_uint_eq(profile_total(last), 30);
                ck_assert_uint_eq(profile_other_stack_samples(last), 30 - 8);
        }
}
END_TEST

START_TEST(test_byte_bound)
{
        _cleanup_(target_done) Target t;
        RandomStream rs;
        ProfileSample s;
        size_t max_bytes = 4096;
        uint32_t held;

        random_stream_init(&rs, 17, true);
        target_init(&t, 600, max_bytes);
        for (int second = 0; second < 60; second++) {
                for (int i = 0; i < 60; i++)
                        target_sample(&t, &rs, &s);
                target_close_second(&t);
        }
        held = profile_window_n_buckets(t.w);
        ck_assert_uint_lt(held, 60);
        ck_assert_uint_gt(held, 1);
        {
                /* What it holds is the newest seconds, whole. */
                ProfileWindowSpan span;
                _cleanup_(profile_freep) Profile *q = window(&t, UINT32_MAX, &span);
                ck_assert_ptr_nonnull(q);
                ck_assert_uint_eq(span.buckets, held);
                ck_assert_uint_eq(span.end_usec, T0 + 60 * SECOND);
                ck_assert_uint_eq(span.end_usec - span.start_usec, held * SECOND);
        }

        /* A second that alone passes the bound: kept, everything older dropped. */
        for (int i = 0; i < 6000; i++)
                target_sample(&t, &rs, &s);
        target_close_second(&t);
        ck_assert_uint_eq(profile_window_n_buckets(t.w), 1);
        {
                _cleanup_(profile_freep) Profile *q = window(&t, UINT32_MAX, NULL);
                ck_assert_uint_ge(profile_total(q), 1);
        }
        /* And the next seconds push it out as soon as they fit without it. */
        for (int second = 0; second < 3; second++) {
                for (int i = 0; i < 20; i++)
                        target_sample(&t, &rs, &s);
                target_close_second(&t);
        }
        ck_assert_uint_eq(profile_window_n_buckets(t.w), 3);
}
END_TEST

START_TEST(test_clear)
{
        _cleanup_(target_done) Target t;
        RandomStream rs;
        ProfileSample s;
        size_t empty;

        random_stream_init(&rs, 19, false);
        target_init(&t, 30, 0);
        empty = profile_window_bytes(t.w);
        for (int second = 0; second < 5; second++) {
                for (int i = 0; i < 100; i++)
                        target_sample(&t, &rs, &s);
                target_close_second(&t);
        }
        ck_assert_uint_gt(profile_window_bytes(t.w), empty);
        profile_window_clear(t.w);
        ck_assert_uint_eq(profile_window_n_buckets(t.w), 0);

        /* The target's tables reset: a new profile, at another frequency even; its seconds count from it. */
        profile_free(t.p);
        ck_assert_int_eq(profile_new(99, &t.p), 0);
        profile_delta_begin(t.d, t.p);
        for (int i = 0; i < 40; i++)
                target_sample(&t, &rs, &s);
        target_close_second(&t);
        {
                _cleanup_(profile_freep) Profile *q = window(&t, UINT32_MAX, NULL);
                assert_same_tables(t.p, q, true, "after a clear");
        }
}
END_TEST

START_TEST(test_frequencies_must_agree)
{
        _cleanup_(target_done) Target t;
        _cleanup_(profile_freep) Profile *other = NULL, *q = NULL;
        RandomStream rs;
        ProfileSample s;

        random_stream_init(&rs, 23, false);
        target_init(&t, 30, 0);
        for (int i = 0; i < 10; i++)
                target_sample(&t, &rs, &s);
        target_close_second(&t);
        ck_assert_int_eq(profile_new(99, &other), 0);
        ck_assert_int_eq(profile_new(99, &q), 0);
        /* dst at another frequency than the base */
        ck_assert_int_eq(profile_window_count(t.w, t.p, 1, q, NULL), -EINVAL);
        /* a base at another frequency than the buckets */
        ck_assert_int_eq(profile_window_count(t.w, other, 1, q, NULL), -EINVAL);
        /* a delta of another frequency pushed without a clear */
        profile_delta_begin(t.d, other);
        profile_delta_end(t.d, other);
        ck_assert_int_eq(profile_window_push(t.w, t.d, T0, T0 + SECOND), -EINVAL);
        ck_assert_int_eq(profile_merge(q, t.p), -EINVAL);
        ck_assert_int_eq(profile_merge(t.p, t.p), -EINVAL);
}
END_TEST

/* The compact encoding, measured: bytes per entry against the journal's 44-byte records. */
START_TEST(test_encoding_size)
{
        _cleanup_(target_done) Target t;
        uint32_t frames[32], stack_id;
        uint64_t rs_state = 42, entries = 0;
        size_t start;

        target_init(&t, 600, 0);
        for (int i = 0; i < 300; i++) {
                char name[16];
                snprintf(name, sizeof(name), "f%d", i);
                ck_assert_int_eq(profile_intern_function(t.p, "app", name, &frames[0]), 0);
        }
        start = profile_window_bytes(t.w);
        /* 60 s of 1998 samples a second over 10,000 stacks and 8 threads (bench/window-memory.c at length). */
        for (int second = 0; second < 60; second++) {
                for (int i = 0; i < 1998; i++) {
                        uint32_t stack, depth;
                        rs_state = rs_state * 6364136223846793005u + 1442695040888963407u;
                        stack = (uint32_t)(rs_state >> 33) % 10000;
                        depth = 4 + stack % 20;
                        for (uint32_t j = 0; j < depth; j++)
                                frames[j] = (stack * 7 + j * 13) % 300;
                        frames[0] = stack % 300;
                        frames[1] = stack / 300;
                        ProfileSample s = { .tid = 1000 + (uint32_t)(rs_state >> 20) % 8, .frames = frames,
                                            .n_frames = depth };
                        OK(profile_add_sample_stack(t.p, &s, &stack_id));
                        OK(profile_delta_add(t.d, &s, stack_id));
                }
                profile_delta_end(t.d, t.p);
                entries += profile_delta_n_entries(t.d);
                target_close_second(&t);
        }
        {
                double per_entry = (double)(profile_window_bytes(t.w) - start) / (double)entries;
                printf("window encoding: %" PRIu64 " entries in %zu bytes, %.2f bytes an entry (the journal: 44)\n",
                       entries, profile_window_bytes(t.w) - start, per_entry);
                ck_assert(per_entry * 4 < 44);
        }
}
END_TEST

/* Windows by time, for several targets of one clock: the seconds that end after a moment, whoever stopped
 * closing seconds earlier. */
START_TEST(test_windows_by_time)
{
        _cleanup_(target_done) Target long_lived, short_lived;
        ProfileWindowSpan span;
        ProfileValues totals;
        RandomStream rs;
        ProfileSample s;
        uint64_t after;

        random_stream_init(&rs, 29, true);
        target_init(&long_lived, 60, 0);
        target_init(&short_lived, 60, 0);
        ck_assert_uint_eq(profile_window_end_usec(long_lived.w), 0);
        for (int second = 0; second < 10; second++) {
                for (int i = 0; i < 30; i++)
                        target_sample(&long_lived, &rs, &s);
                target_close_second(&long_lived);
                /* The other one exits after five seconds: no more seconds of its own. */
                if (second < 5) {
                        for (int i = 0; i < 30; i++)
                                target_sample(&short_lived, &rs, &s);
                        target_close_second(&short_lived);
                }
        }
        ck_assert_uint_eq(profile_window_end_usec(long_lived.w), T0 + 10 * SECOND);
        ck_assert_uint_eq(profile_window_end_usec(short_lived.w), T0 + 5 * SECOND);

        /* The last three seconds of the two: the long-lived one's last three, none of the other's. */
        after = T0 + 10 * SECOND - 3 * SECOND + SECOND / 2;
        {
                _cleanup_(profile_freep) Profile *q = NULL, *by_count = window(&long_lived, 3, NULL);

                ck_assert_int_eq(profile_new(997, &q), 0);
                ck_assert_int_eq(profile_window_count_between(long_lived.w, long_lived.p, after, UINT64_MAX, q, &span), 0);
                ck_assert_uint_eq(span.buckets, 3);
                ck_assert_uint_eq(span.start_usec, T0 + 7 * SECOND);
                assert_same_tables(by_count, q, true, "three seconds by time and by count");
                ck_assert_int_eq(profile_window_count_between(short_lived.w, short_lived.p, after, UINT64_MAX, q, &span), 0);
                ck_assert_uint_eq(span.buckets, 0);
                assert_same_tables(by_count, q, true, "nothing of the target that stopped");
                ck_assert_int_eq(profile_window_totals_between(long_lived.w, after, UINT64_MAX, &totals, &span), 0);
                ck_assert_uint_eq(totals.user_samples + totals.kernel_samples, profile_total(by_count));
        }
        /* The last seven: the short-lived one's two that end within them (its fourth and fifth), and seven of the
         * other's. */
        after = T0 + 10 * SECOND - 7 * SECOND + SECOND / 2;
        ck_assert_int_eq(profile_window_totals_between(short_lived.w, after, UINT64_MAX, &totals, &span), 0);
        ck_assert_uint_eq(span.buckets, 2);
        ck_assert_uint_eq(span.end_usec, T0 + 5 * SECOND);
        ck_assert_int_eq(profile_window_totals_between(long_lived.w, after, UINT64_MAX, &totals, &span), 0);
        ck_assert_uint_eq(span.buckets, 7);
        /* Nothing ends after the end of time. */
        ck_assert_int_eq(profile_window_totals_between(long_lived.w, UINT64_MAX, UINT64_MAX, &totals, &span), 0);
        ck_assert_uint_eq(span.buckets, 0);
        ck_assert_uint_eq(totals.user_samples + totals.kernel_samples + totals.blocked_ns + totals.preempted_ns, 0);
}
END_TEST

/* The sum of a window's buckets per (stack, thread): what the samples of those seconds counted, thread by thread,
 * with the profile's stack ids (the other stack's entries with theirs); over every bucket, each stack's sum is its
 * count in the tables. */
#define SUM_STACKS 31 /* the limit's 30, the other stack last */
#define SUM_TIDS 5    /* random_sample()'s threads, from 100 */
typedef struct Tally {
        uint64_t samples[SUM_STACKS][SUM_TIDS], off_ns[SUM_STACKS][SUM_TIDS];
} Tally;

static void tally_add(Tally *t, uint32_t stack_id, uint32_t tid, uint64_t samples, uint64_t off_ns)
{
        size_t s = stack_id == PROFILE_STACK_OTHER ? SUM_STACKS - 1 : stack_id;

        ck_assert_uint_lt(s, SUM_STACKS);
        ck_assert_uint_ge(tid, 100);
        ck_assert_uint_lt(tid - 100, SUM_TIDS);
        t->samples[s][tid - 100] += samples;
        t->off_ns[s][tid - 100] += off_ns;
}

static void assert_sum_is(const ProfileWindow *w, const Profile *p, uint64_t after, const Tally *want,
                          uint32_t buckets)
{
        _cleanup_(profile_delta_freep) ProfileDelta *sum = NULL;
        ProfileWindowSpan span;
        Tally have = {};

        ck_assert_int_eq(profile_delta_new(&sum), 0);
        profile_delta_begin(sum, p);
        ck_assert_int_eq(profile_window_sum_between(w, p, after, UINT64_MAX, sum, &span), 0);
        ck_assert_uint_eq(span.buckets, buckets);
        for (size_t i = 0; i < profile_delta_n_entries(sum); i++) {
                ProfileDeltaEntry e;

                profile_delta_entry(sum, i, &e);
                tally_add(&have, e.stack_id, e.tid, e.values.user_samples + e.values.kernel_samples,
                          e.values.blocked_ns + e.values.preempted_ns);
        }
        ck_assert_mem_eq(&have, want, sizeof(Tally));
}

START_TEST(test_sum_per_thread)
{
        _cleanup_(target_done) Target t;
        _cleanup_free_ Tally *all = calloc(1, sizeof(Tally)), *last = calloc(1, sizeof(Tally));
        RandomStream rs;

        ck_assert_ptr_nonnull(all);
        ck_assert_ptr_nonnull(last);
        random_stream_init(&rs, 41, true);
        target_init(&t, 1000, 0);
        profile_set_limits(t.p, 40, 30);
        for (int second = 0; second < 12; second++) {
                for (int i = 0; i < 200; i++) {
                        static uint32_t frames[RANDOM_MAX_FRAMES];
                        ProfileSample s;
                        uint32_t stack_id;
                        bool on;

                        random_sample(&rs, t.p, frames, &s, &stack_id);
                        OK(profile_delta_add(t.d, &s, stack_id));
                        on = IN_SET(s.kind, PROFILE_SAMPLE_USER, PROFILE_SAMPLE_KERNEL);
                        tally_add(all, stack_id, s.tid, on, on ? 0 : s.duration_ns);
                        if (second >= 9)
                                tally_add(last, stack_id, s.tid, on, on ? 0 : s.duration_ns);
                }
                target_close_second(&t);
        }
        ck_assert_uint_gt(profile_other_stack_samples(t.p), 0);
        assert_sum_is(t.w, t.p, 0, all, 12);
        assert_sum_is(t.w, t.p, T0 + 9 * SECOND + SECOND / 2, last, 3);

        /* Every stack's sum over the threads is its count in the tables, off-CPU time included. */
        for (uint32_t id = 0; id <= profile_n_stacks(t.p); id++) {
                bool other = id == profile_n_stacks(t.p);
                uint64_t samples = 0, off_ns = 0, want_samples;
                ProfileValues v;

                if (other) {
                        want_samples = profile_other_stack_samples(t.p);
                        v = *profile_other_stack_values(t.p);
                } else
                        OK(profile_stack_counts(t.p, id, &want_samples, &v));
                for (size_t k = 0; k < SUM_TIDS; k++) {
                        samples += all->samples[other ? SUM_STACKS - 1 : id][k];
                        off_ns += all->off_ns[other ? SUM_STACKS - 1 : id][k];
                }
                ck_assert_uint_eq(samples, want_samples);
                ck_assert_uint_eq(off_ns, v.blocked_ns + v.preempted_ns);
        }
        ck_assert_int_eq(profile_stack_counts(t.p, (uint32_t)profile_n_stacks(t.p), &(uint64_t){ 0 },
                                              &(ProfileValues){}), -ENOENT);
}
END_TEST

/* Merge: two profiles of disjoint samples into one equals one profile fed both. */
static void merge_streams(uint64_t seed, bool off_cpu)
{
        _cleanup_(target_done) Target a, b;
        _cleanup_(profile_freep) Profile *both = NULL, *merged = NULL, *into_a = NULL, *windows = NULL;
        RandomStream ra, rb;
        ProfileSample s;

        random_stream_init(&ra, seed, off_cpu);
        random_stream_init(&rb, seed + 1000, off_cpu);
        target_init(&a, 100, 0);
        target_init(&b, 100, 0);
        ck_assert_int_eq(profile_new(997, &both), 0);
        /* Some functions interned in another order in b, so that ids differ. */
        for (int i = 0; i < 5; i++) {
                uint32_t id;
                char name[16];
                snprintf(name, sizeof(name), "only_b%d", i);
                ck_assert_int_eq(profile_intern_function(b.p, "libb.so", name, &id), 0);
        }
        for (int second = 0; second < 10; second++) {
                for (int i = 0; i < 100; i++) {
                        target_sample(&a, &ra, &s);
                        feed_by_name(a.p, &s, both);
                }
                target_close_second(&a);
        }
        /* b's samples after a's, so that a thread both name (their tids are alike) ends with b's name. */
        for (int second = 0; second < 10; second++) {
                for (int i = 0; i < 100; i++) {
                        target_sample(&b, &rb, &s);
                        feed_by_name(b.p, &s, both);
                }
                target_close_second(&b);
        }

        ck_assert_int_eq(profile_new(997, &merged), 0);
        ck_assert_int_eq(profile_merge(merged, a.p), 0);
        ck_assert_int_eq(profile_merge(merged, b.p), 0);
        assert_same_tables(both, merged, true, "a merge into an empty profile");

        /* Into a profile with counts and ids of its own. */
        ck_assert_int_eq(profile_new(997, &into_a), 0);
        ck_assert_int_eq(profile_merge(into_a, a.p), 0);
        assert_same_tables(a.p, into_a, true, "a merge into an empty profile is a copy");
        ck_assert_int_eq(profile_merge(into_a, b.p), 0);
        assert_same_tables(both, into_a, true, "a merge into a profile with counts");

        /* The windows of both targets into one profile: the same. */
        ck_assert_int_eq(profile_new(997, &windows), 0);
        ck_assert_int_eq(profile_window_count(a.w, a.p, UINT32_MAX, windows, NULL), 0);
        ck_assert_int_eq(profile_window_count(b.w, b.p, UINT32_MAX, windows, NULL), 0);
        assert_same_tables(both, windows, true, "two targets' windows into one profile");
}

START_TEST(test_merge_equals_one_profile)
{
        for (uint64_t seed = 1; seed <= 6; seed++)
                merge_streams(seed, seed % 2);
}
END_TEST

/* A merge of tables past their limits: "[other]" and the other stack carried as they are. */
START_TEST(test_merge_past_limits)
{
        _cleanup_(target_done) Target a;
        _cleanup_(profile_freep) Profile *copy = NULL, *twice = NULL;
        RandomStream rs;
        ProfileSample s;

        random_stream_init(&rs, 31, true);
        target_init(&a, 10, 0);
        profile_set_limits(a.p, 20, 25);
        for (int i = 0; i < 2000; i++)
                target_sample(&a, &rs, &s);
        ck_assert_uint_gt(profile_other_stack_samples(a.p), 0);
        ck_assert_uint_gt(profile_other_function_samples(a.p), 0);
        ck_assert_int_eq(profile_new(997, &copy), 0);
        ck_assert_int_eq(profile_merge(copy, a.p), 0);
        assert_same_tables(a.p, copy, true, "a merge past the limits");
        ck_assert_uint_eq(profile_other_function_samples(copy), profile_other_function_samples(a.p));

        /* Twice: every count doubles. */
        ck_assert_int_eq(profile_new(997, &twice), 0);
        ck_assert_int_eq(profile_merge(twice, a.p), 0);
        ck_assert_int_eq(profile_merge(twice, copy), 0);
        ck_assert_uint_eq(profile_total(twice), 2 * profile_total(a.p));
        ck_assert_uint_eq(profile_other_stack_samples(twice), 2 * profile_other_stack_samples(a.p));
        ck_assert_uint_eq(profile_other_function_samples(twice), 2 * profile_other_function_samples(a.p));
        ck_assert_uint_eq(profile_total_values(twice)->blocked_ns, 2 * profile_total_values(a.p)->blocked_ns);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("profile-window");
        TCase *tc = tcase_create("window");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_whole_history_equals_profile);
        tcase_add_test(tc, test_last_seconds_equal_their_samples);
        tcase_add_test(tc, test_wrap_around);
        tcase_add_test(tc, test_windows_before_now);
        tcase_add_test(tc, test_window_longer_than_history);
        tcase_add_test(tc, test_idle_seconds);
        tcase_add_test(tc, test_recursion_once_per_sample);
        tcase_add_test(tc, test_other_stack_entries);
        tcase_add_test(tc, test_byte_bound);
        tcase_add_test(tc, test_clear);
        tcase_add_test(tc, test_frequencies_must_agree);
        tcase_add_test(tc, test_encoding_size);
        tcase_add_test(tc, test_windows_by_time);
        tcase_add_test(tc, test_sum_per_thread);
        tcase_add_test(tc, test_merge_equals_one_profile);
        tcase_add_test(tc, test_merge_past_limits);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
