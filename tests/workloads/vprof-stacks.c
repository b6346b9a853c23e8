/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A workload with a near endless number of distinct stacks, for the daemon's memory limits: every step
 * recurses to a random depth (1..MAX_DEPTH) through eight functions picked at random, then spins briefly in
 * the last. With eight functions and depths up to 100, nearly every sample has a stack never seen before, while
 * the set of functions stays small. With --distinct=N every step takes one of N fixed paths instead (each path
 * seeded by its number), so that the stacks are about N distinct ones, seen again and again.
 *
 *   main -> run_steps -> hop_0..hop_7 -> hop_? -> ... -> spin (the leaf) */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_DEPTH 100

static double arg_seconds = 5;
static int arg_threads = 1;
static int arg_wait_stdin;
static uint32_t arg_distinct; /* 0: a fresh random path every step */
static volatile uint64_t sink;

static double monotonic_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift: cheap, and each thread its own. */
static uint32_t next_random(uint32_t *state)
{
        uint32_t x = *state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return *state = x;
}

NOINLINE void spin(uint32_t n)
{
        uint64_t x = sink;
        for (uint32_t i = 0; i < n; i++)
                x = x * 6364136223846793005u + 1442695040888963407u;
        sink = x;
}

typedef void (*hop_fn)(uint32_t *state, int depth);
static const hop_fn hops[8];

static void hop_next(uint32_t *state, int depth)
{
        if (depth <= 0) {
                spin(20000);
                return;
        }
        hops[next_random(state) & 7](state, depth - 1);
}

/* Eight copies, so that the stack is a random word over eight letters. The empty asm keeps each call a real
 * call, not a tail jump, so that every hop stays on the stack. */
#define HOP(i)                                                                                                 \
        NOINLINE void hop_##i(uint32_t *state, int depth)                                                      \
        {                                                                                                      \
                hop_next(state, depth);                                                                        \
                __asm__ volatile("" ::: "memory");                                                             \
        }
HOP(0)
HOP(1)
HOP(2)
HOP(3)
HOP(4)
HOP(5)
HOP(6)
HOP(7)

static const hop_fn hops[8] = { hop_0, hop_1, hop_2, hop_3, hop_4, hop_5, hop_6, hop_7 };

NOINLINE void *run_steps(void *arg)
{
        uint32_t state = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
        double end = monotonic_now() + arg_seconds;

        while (monotonic_now() < end)
                for (int i = 0; i < 64; i++) {
                        if (arg_distinct) {
                                uint32_t path = (next_random(&state) % arg_distinct) * 2654435761u + 0x9e3779b9u;

                                path = path ?: 1; /* xorshift stays at 0 */
                                hop_next(&path, 1 + (int)(next_random(&path) % MAX_DEPTH));
                        } else
                                hop_next(&state, 1 + (int)(next_random(&state) % MAX_DEPTH));
                }
        return NULL;
}

static void usage(void)
{
        printf("Usage: vprof-stacks [OPTIONS]\n\n"
               "Workload whose samples have nearly all distinct stacks, for vprofd's memory limits.\n\n"
               "  -s, --seconds=S      run for S seconds of wall time (default 5)\n"
               "  -t, --threads=N      threads (default 1)\n"
               "      --distinct=N     about N distinct stacks, each seen again and again\n"
               "                       (default: nearly every step a new one)\n"
               "      --wait-stdin     wait for a line on stdin before working (attach first)\n"
               "  -h, --help           show this help\n");
}

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "seconds", required_argument, NULL, 's' },
                { "threads", required_argument, NULL, 't' },
                { "wait-stdin", no_argument, NULL, 'w' },
                { "distinct", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        pthread_t threads[64];
        char line[64];
        int c;

        while ((c = getopt_long(argc, argv, "s:t:h", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        arg_seconds = atof(optarg);
                        break;
                case 't':
                        arg_threads = atoi(optarg);
                        break;
                case 'w':
                        arg_wait_stdin = 1;
                        break;
                case 'd':
                        arg_distinct = (uint32_t)strtoul(optarg, NULL, 10);
                        break;
                case 'h':
                        usage();
                        return 0;
                default:
                        fprintf(stderr, "vprof-stacks: unknown option; see --help\n");
                        return 2;
                }
        if (arg_seconds <= 0 || arg_threads < 1 || arg_threads > 64) {
                fprintf(stderr, "vprof-stacks: --seconds must be > 0 and --threads 1..64\n");
                return 2;
        }
        if (arg_wait_stdin) {
                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        return 1;
        }
        for (int i = 1; i < arg_threads; i++)
                if (pthread_create(&threads[i], NULL, run_steps, (void *)(uintptr_t)i) != 0) {
                        fprintf(stderr, "vprof-stacks: pthread_create failed\n");
                        return 1;
                }
        run_steps(NULL);
        for (int i = 1; i < arg_threads; i++)
                pthread_join(threads[i], NULL);
        return 0;
}
