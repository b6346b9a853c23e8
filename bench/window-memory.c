/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the time windows' ring (common/profile/profile-window.h) holds for one target, and what counting a window
 * costs a query.
 *
 * A target as vprofd keeps one, without BPF: its profile, the per-second delta and the ring, fed --rate samples a
 * second for --seconds seconds (600 s at 999 Hz on two busy CPUs: 1998 a second), each a stack drawn uniformly
 * from --stacks distinct ones (--depth frames at most over --functions functions, some with kernel frames) on one
 * of --threads threads. Each second closes as the daemon's manager_close_second() closes it: the delta ends, is
 * pushed into the ring, begins anew. Prints the ring's bytes, per second and per entry, against the 44 bytes an
 * entry takes in the journal's record, and the time profile_window_count() takes for windows of 1, 10, 60 and
 * all the seconds (the median of 5 runs, each into a fresh profile as a query), and profile_window_totals() for
 * all. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "macros.h"
#include "profile-delta.h"
#include "profile-window.h"
#include "profile.h"

/* A journal entry (DENT): stack id, tid, kernel frames, four 64-bit values. */
#define JOURNAL_ENTRY_BYTES 44

static unsigned arg_seconds = 600;
static unsigned arg_rate = 1998;
static unsigned arg_stacks = 10000;
static unsigned arg_functions = 3000;
static unsigned arg_depth = 32;
static unsigned arg_threads = 8;
static unsigned arg_kernel_percent = 10;
static bool arg_json = false;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
        /* xorshift64*: repeatable runs. */
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1du;
}

static uint32_t below(uint32_t n)
{
        return (uint32_t)((rng() >> 32) % n);
}

static double now_sec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct Stack {
        uint32_t n, n_kernel;
        uint32_t *frames;
} Stack;

static void stacks_free(Stack **stacks);

static int parse_argv(int argc, char *argv[])
{
        static const struct option options[] = {
                { "seconds", required_argument, NULL, 's' },  { "rate", required_argument, NULL, 'r' },
                { "stacks", required_argument, NULL, 'k' },   { "functions", required_argument, NULL, 'f' },
                { "depth", required_argument, NULL, 'd' },    { "threads", required_argument, NULL, 't' },
                { "kernel-percent", required_argument, NULL, 'K' },
                { "json", no_argument, NULL, 'j' },           { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                unsigned long v = 0;
                if (optarg) {
                        char *end;
                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || *end || end == optarg || v == 0 || v > 100000000) {
                                fprintf(stderr, "Invalid number: %s\n", optarg);
                                return -EINVAL;
                        }
                }
                switch (c) {
                case 's': arg_seconds = (unsigned)MIN(v, 86400ul); break;
                case 'r': arg_rate = (unsigned)v; break;
                case 'k': arg_stacks = (unsigned)v; break;
                case 'f': arg_functions = (unsigned)MAX(v, 16ul); break;
                case 'd': arg_depth = (unsigned)MIN(MAX(v, 2ul), 127ul); break;
                case 't': arg_threads = (unsigned)v; break;
                case 'K': arg_kernel_percent = (unsigned)MIN(v, 100ul); break;
                case 'j': arg_json = true; break;
                case 'h':
                        printf("%s [--seconds=N] [--rate=N] [--stacks=N] [--functions=N] [--depth=N] [--threads=N]\n"
                               "   [--kernel-percent=N] [--json]\n\n"
                               "The time windows' ring of one target: its bytes for N seconds at a rate of samples\n"
                               "(default 600 s of 1998 a second over 10000 stacks, 8 threads), and the time to\n"
                               "count its windows.\n", program_invocation_short_name);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        return 1;
}

#define TIMED_RUNS 5

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* A window of n seconds counted into a fresh profile, as a query does: the median milliseconds of a few runs
 * (the fresh profile's allocation included), and the samples counted. */
static int time_window(const ProfileWindow *w, const Profile *p, uint32_t n, double *ret_ms, uint64_t *ret_total)
{
        double ms[TIMED_RUNS];

        for (unsigned i = 0; i < TIMED_RUNS; i++) {
                _cleanup_(profile_freep) Profile *q = NULL;
                double start = now_sec();
                int r;

                r = profile_new(profile_frequency(p), &q);
                if (r >= 0)
                        r = profile_window_count(w, p, n, q, NULL);
                if (r < 0)
                        return r;
                ms[i] = (now_sec() - start) * 1e3;
                *ret_total = profile_total(q);
        }
        qsort(ms, TIMED_RUNS, sizeof(double), compare_double);
        *ret_ms = ms[TIMED_RUNS / 2];
        return 0;
}

static int run(int argc, char *argv[])
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        _cleanup_(profile_window_freep) ProfileWindow *w = NULL;
        _cleanup_(stacks_free) Stack *stacks = NULL;
        static const uint32_t windows[] = { 1, 10, 60, UINT32_MAX };
        double ms[ELEMENTSOF(windows)], totals_ms, start;
        uint64_t counted[ELEMENTSOF(windows)], entries = 0, usec = 0;
        ProfileValues totals;
        size_t bytes;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;
        r = profile_new(999, &p);
        if (r >= 0)
                r = profile_delta_new(&d);
        if (r >= 0)
                r = profile_window_new(arg_seconds, 0, &w); /* no byte bound: what the seconds take */
        stacks = calloc(arg_stacks, sizeof(Stack));
        if (r < 0 || !stacks)
                return -ENOMEM;

        /* The functions, then the stacks, as the daemon's tables name them: "lib%u.so" functions, and "[kernel]"
         * ones at the innermost end of a share of the stacks. */
        for (unsigned i = 0; i < arg_functions; i++) {
                char module[32], function[32];
                uint32_t id;
                snprintf(module, sizeof(module), i < 200 ? "[kernel]" : "lib%u.so", i % 12);
                snprintf(function, sizeof(function), "f%u", i);
                r = profile_intern_function(p, module, function, &id);
                if (r < 0)
                        return r;
        }
        for (unsigned i = 0; i < arg_stacks; i++) {
                Stack *s = stacks + i;
                s->n = 2 + below(arg_depth - 1);
                s->n_kernel = below(100) < arg_kernel_percent ? 1 + below(MIN(s->n - 1, 6u)) : 0;
                s->frames = malloc(s->n * sizeof(uint32_t));
                if (!s->frames)
                        return -ENOMEM;
                for (uint32_t j = 0; j < s->n; j++)
                        s->frames[j] = j < s->n_kernel ? below(200) : 200 + below(arg_functions - 200);
                /* Distinct: the outermost frame says which stack it is. */
                s->frames[s->n - 1] = 200 + i % (arg_functions - 200);
                s->frames[s->n - 2] = 200 + i / (arg_functions - 200);
        }

        profile_delta_begin(d, p);
        for (unsigned second = 0; second < arg_seconds; second++) {
                for (unsigned i = 0; i < arg_rate; i++) {
                        const Stack *s = stacks + below(arg_stacks);
                        ProfileSample sample = {
                                .tid = 1000 + below(arg_threads),
                                .frames = s->frames,
                                .n_frames = s->n,
                                .n_kernel_frames = s->n_kernel,
                                .kind = s->n_kernel ? PROFILE_SAMPLE_KERNEL : PROFILE_SAMPLE_USER,
                        };
                        uint32_t stack_id;

                        r = profile_add_sample_stack(p, &sample, &stack_id);
                        if (r >= 0)
                                r = profile_delta_add(d, &sample, stack_id);
                        if (r < 0)
                                return r;
                }
                profile_delta_end(d, p);
                entries += profile_delta_n_entries(d);
                r = profile_window_push(w, d, usec, usec + 1000000);
                if (r < 0)
                        return r;
                usec += 1000000;
                profile_delta_begin(d, p);
        }
        bytes = profile_window_bytes(w);

        for (size_t i = 0; i < ELEMENTSOF(windows); i++) {
                r = time_window(w, p, windows[i], &ms[i], &counted[i]);
                if (r < 0)
                        return r;
        }
        start = now_sec();
        r = profile_window_totals(w, UINT32_MAX, &totals, NULL);
        if (r < 0)
                return r;
        totals_ms = (now_sec() - start) * 1e3;

        if (arg_json) {
                printf("{\"seconds\": %u, \"rate\": %u, \"stacks\": %u, \"threads\": %u, \"kernel_percent\": %u, "
                       "\"profile_stacks\": %zu, \"entries\": %" PRIu64 ", \"ring_bytes\": %zu, "
                       "\"bytes_per_second\": %.0f, \"bytes_per_entry\": %.2f, \"journal_entry_bytes\": %d, "
                       "\"count_ms\": {\"1\": %.3f, \"10\": %.3f, \"60\": %.3f, \"all\": %.3f}, "
                       "\"totals_ms\": %.3f}\n",
                       arg_seconds, arg_rate, arg_stacks, arg_threads, arg_kernel_percent, profile_n_stacks(p),
                       entries, bytes, (double)bytes / arg_seconds, (double)bytes / (double)entries,
                       JOURNAL_ENTRY_BYTES, ms[0], ms[1], ms[2], ms[3], totals_ms);
                return 0;
        }
        printf("workload: %u s at %u samples/s over %u distinct stacks (%zu in the tables), %u threads, %u%% with "
               "kernel frames\n", arg_seconds, arg_rate, arg_stacks, profile_n_stacks(p), arg_threads,
               arg_kernel_percent);
        printf("ring: %zu bytes (%.2f MiB) for %u buckets: %.0f bytes a second, %" PRIu64 " entries, %.2f bytes an "
               "entry (the journal's record: %d, %.1f MiB for the same entries)\n",
               bytes, (double)bytes / (1 << 20), profile_window_n_buckets(w), (double)bytes / arg_seconds, entries,
               (double)bytes / (double)entries, JOURNAL_ENTRY_BYTES,
               (double)entries * JOURNAL_ENTRY_BYTES / (1 << 20));
        for (size_t i = 0; i < ELEMENTSOF(windows); i++) {
                char label[16] = "all";
                if (windows[i] != UINT32_MAX)
                        snprintf(label, sizeof(label), "%u", windows[i]);
                printf("count a window of %s s: %.2f ms (%" PRIu64 " samples)\n", label, ms[i], counted[i]);
        }
        printf("totals of all the seconds: %.3f ms (%" PRIu64 " samples)\n", totals_ms,
               totals.user_samples + totals.kernel_samples);
        return 0;
}

static void stacks_free(Stack **stacks)
{
        for (unsigned i = 0; *stacks && i < arg_stacks; i++)
                free((*stacks)[i].frames);
        free(*stacks);
}

int main(int argc, char *argv[])
{
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
