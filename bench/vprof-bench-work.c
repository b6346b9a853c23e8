/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The profiler benchmark's workload (bench/profilers.py): a fixed amount of CPU work over a known call tree, so
 * that a profiler's slowdown is the change in the time this work takes, and its accuracy the distance between
 * its percents and the shares below.
 *
 *   main -> (thread) bench_worker -> work_round -> leaf_a              5 units  (50%)
 *                                              -> mid_b -> leaf_c     3 units  (30%)
 *                                              -> leaf_d              2 units  (20%)
 *
 * Every unit is the same loop, so time is proportional to units. The main thread only starts the workers and
 * waits for them, off the CPU. It prints one JSON line with the wall time of the work phase alone (from the
 * moment it is told to go to the moment the last worker ends, so a profiler's start-up and shutdown are not in
 * it) and the CPU time of the whole process.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "workload-util.h"

#define NOINLINE __attribute__((noinline))
#define ITERATIONS_PER_UNIT 100000
#define UNITS_PER_ROUND 10

static uint64_t arg_units = 20000;
static unsigned arg_threads = 1;
static int arg_wait_stdin;

/* The workers stay until the end: bpftrace names a stack's frames from the maps of the thread that took it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static unsigned workers_done;
static int release_workers;

typedef struct Worker {
        pthread_t thread;
        uint64_t rounds;
        uint64_t sink;
} Worker;

#define SPIN(units, seed) WORKLOAD_SPIN(units, seed, ITERATIONS_PER_UNIT)

NOINLINE uint64_t leaf_a(unsigned units, uint64_t seed) { SPIN(units, seed); }
NOINLINE uint64_t leaf_c(unsigned units, uint64_t seed) { SPIN(units, seed); }
NOINLINE uint64_t leaf_d(unsigned units, uint64_t seed) { SPIN(units, seed); }

NOINLINE uint64_t mid_b(unsigned units, uint64_t seed)
{
        uint64_t r = leaf_c(units, seed);
        __asm__ volatile("" : "+r"(r)); /* not a tail call: mid_b stays on the stack */
        return r;
}

NOINLINE void work_round(Worker *w)
{
        w->sink += leaf_a(5, w->sink);
        w->sink += mid_b(3, w->sink);
        w->sink += leaf_d(2, w->sink);
}

static void *bench_worker(void *userdata)
{
        Worker *w = userdata;

        for (uint64_t i = 0; i < w->rounds; i++)
                work_round(w);

        pthread_mutex_lock(&lock);
        workers_done++;
        pthread_cond_broadcast(&changed);
        while (!release_workers)
                pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
        return NULL;
}

static double process_cpu_seconds(void)
{
        struct rusage ru;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return -1;
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void help(void)
{
        printf("Usage: vprof-bench-work [OPTIONS]\n\n"
               "A fixed amount of CPU work over a known call tree, for bench/profilers.py.\n\n"
               "  -t, --threads=N      worker threads sharing the work (default 1)\n"
               "  -u, --units=N        total units of work, a multiple of %d (default 20000)\n"
               "      --wait-stdin     print \"ready PID\" and wait for a line on stdin before working, and for\n"
               "                       another line (or the end of stdin) after it before exiting\n"
               "  -h, --help           show this help\n\n"
               "Prints {\"wall_seconds\": ..., \"cpu_seconds\": ..., ...} when done.\n",
               UNITS_PER_ROUND);
}

int main(int argc, char *argv[])
{
        enum { ARG_WAIT_STDIN = 0x100 };
        static const struct option options[] = {
                { "threads", required_argument, NULL, 't' },
                { "units", required_argument, NULL, 'u' },
                { "wait-stdin", no_argument, NULL, ARG_WAIT_STDIN },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        uint64_t rounds, sink = 0;
        double cpu_before, start, wall;
        Worker *workers;
        int c;

        while ((c = getopt_long(argc, argv, "t:u:h", options, NULL)) >= 0)
                switch (c) {
                case 't':
                        arg_threads = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'u':
                        arg_units = strtoull(optarg, NULL, 10);
                        break;
                case ARG_WAIT_STDIN:
                        arg_wait_stdin = 1;
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        return 2;
                }
        rounds = arg_units / UNITS_PER_ROUND;
        if (arg_threads < 1 || arg_threads > 256 || rounds < arg_threads) {
                fprintf(stderr, "vprof-bench-work: --threads must be 1..256 and --units at least %d per thread\n",
                        UNITS_PER_ROUND);
                return 2;
        }

        workers = calloc(arg_threads, sizeof(Worker));
        if (!workers)
                return 1;
        for (unsigned i = 0; i < arg_threads; i++) {
                /* The rounds split as evenly as they go: the first threads take the remainder. */
                workers[i].rounds = rounds / arg_threads + (i < rounds % arg_threads);
                workers[i].sink = i;
        }

        if (arg_wait_stdin) {
                char line[16];
                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        return 1;
        }

        cpu_before = process_cpu_seconds();
        start = workload_now();
        for (unsigned i = 0; i < arg_threads; i++)
                if (pthread_create(&workers[i].thread, NULL, bench_worker, &workers[i]) != 0) {
                        fprintf(stderr, "vprof-bench-work: cannot start a thread\n");
                        return 1;
                }
        pthread_mutex_lock(&lock);
        while (workers_done < arg_threads)
                pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
        wall = workload_now() - start;
        for (unsigned i = 0; i < arg_threads; i++)
                sink += workers[i].sink;

        printf("{\"pid\": %d, \"threads\": %u, \"units\": %llu, \"wall_seconds\": %.6f, \"cpu_seconds\": %.6f, "
               "\"sink\": %llu}\n",
               (int)getpid(), arg_threads, (unsigned long long)(rounds * UNITS_PER_ROUND), wall,
               process_cpu_seconds() - cpu_before, (unsigned long long)(sink & 0xffff));
        fflush(stdout);

        /* Alive until told, threads and all: bcc and bpftrace name the functions of a stack from the process's
         * (bpftrace: the thread's) maps when they print, after the work. */
        if (arg_wait_stdin) {
                char line[16];
                (void)!fgets(line, sizeof(line), stdin);
        }
        pthread_mutex_lock(&lock);
        release_workers = 1;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        for (unsigned i = 0; i < arg_threads; i++)
                pthread_join(workers[i].thread, NULL);
        free(workers);
        return 0;
}
