/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The demo and test workload: CPU-bound threads with a known call tree whose leaf functions get known shares of
 * the work. It measures its own truth (thread CPU time spent in each leaf) so that tests compare a profile
 * against what really happened, not against a hoped-for ratio.
 *
 *   main -> worker -> run_round -> work_alpha                    50 units
 *                              -> work_beta                      30 units
 *                              -> work_gamma                     15 units
 *                              -> recurse_down (x5) -> work_delta 5 units
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "workload-util.h"

#define NOINLINE __attribute__((noinline))
#define ITERATIONS_PER_UNIT 20000

enum { ALPHA, BETA, GAMMA, DELTA, N_WORK };
static const char *const work_names[N_WORK] = { "work_alpha", "work_beta", "work_gamma", "work_delta" };
static const unsigned work_units[N_WORK] = { 50, 30, 15, 5 };

static double arg_seconds = 10;
static uint64_t arg_rounds;
static unsigned arg_threads = 1;
static const char *arg_report;
static int arg_wait_stdin;
static int arg_bystander;
static const char *arg_plugin;
static uint64_t (*plugin_hot)(uint64_t iterations, uint64_t seed);

typedef struct Worker {
        pthread_t thread;
        unsigned index;
        uint64_t rounds;
        double work_seconds[N_WORK];
        double cpu_seconds;
        uint64_t sink;
        unsigned order; /* run_round()'s generator of the leaves' order */
} Worker;

static double thread_cpu_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define SPIN(units, seed) WORKLOAD_SPIN(units, seed, ITERATIONS_PER_UNIT)

NOINLINE uint64_t work_alpha(unsigned units, uint64_t seed) { SPIN(units, seed); }
NOINLINE uint64_t work_beta(unsigned units, uint64_t seed) { SPIN(units, seed); }
NOINLINE uint64_t work_gamma(unsigned units, uint64_t seed) { SPIN(units, seed); }
NOINLINE uint64_t work_delta(unsigned units, uint64_t seed) { SPIN(units, seed); }
NOINLINE uint64_t bystander_spin(unsigned units, uint64_t seed) { SPIN(units, seed); }

/* Recursion: the profiler must count recurse_down once per sample however deep the stack. */
NOINLINE uint64_t recurse_down(unsigned depth, unsigned units, uint64_t seed)
{
        uint64_t r;

        if (depth == 0)
                return work_delta(units, seed);
        r = recurse_down(depth - 1, units, seed + 1);
        __asm__ volatile("" : "+r"(r)); /* not a tail call: keep every level on the stack */
        return r;
}

/* One unit of work of each leaf, in an order that changes from round to round: a round takes about 2 ms, and a
 * fixed order would put each leaf at the same phase of every round, so that a sampling period near a multiple of
 * it (10.1 ms at 99 Hz) would keep hitting the same leaves for seconds. perf record -F 99 found work_beta at 24
 * to 35% (truth 30%) in six 3 s runs of the fixed order. */
NOINLINE void run_round(Worker *w)
{
        unsigned first;
        double t;

        w->order = w->order * 1103515245u + 12345u;
        first = (w->order >> 16) % N_WORK;
        for (unsigned k = 0; k < N_WORK; k++) {
                unsigned which = (first + k) % N_WORK;

                t = thread_cpu_now();
                switch (which) {
                case ALPHA:
                        w->sink += work_alpha(work_units[ALPHA], w->sink);
                        break;
                case BETA:
                        w->sink += work_beta(work_units[BETA], w->sink);
                        break;
                case GAMMA:
                        w->sink += work_gamma(work_units[GAMMA], w->sink);
                        break;
                default:
                        w->sink += recurse_down(5, work_units[DELTA], w->sink);
                        break;
                }
                w->work_seconds[which] += thread_cpu_now() - t;
        }
}

static void *worker(void *userdata)
{
        Worker *w = userdata;
        double start_cpu = thread_cpu_now(), deadline = workload_now() + arg_seconds;
        char name[16];

        /* The main thread keeps the process's name. */
        if (w->index > 0) {
                snprintf(name, sizeof(name), "demo-worker-%u", w->index);
                prctl(PR_SET_NAME, name);
        }

        for (;;) {
                if (plugin_hot)
                        w->sink += plugin_hot(100 * ITERATIONS_PER_UNIT, w->sink);
                else if (arg_bystander)
                        w->sink += bystander_spin(100, w->sink);
                else
                        run_round(w);
                w->rounds++;
                if (arg_rounds ? w->rounds >= arg_rounds : workload_now() >= deadline)
                        break;
        }
        w->cpu_seconds = thread_cpu_now() - start_cpu;
        return NULL;
}

static int write_report(const Worker *workers, double wall)
{
        double per_work[N_WORK] = {}, cpu = 0;
        uint64_t rounds = 0;
        FILE *f;

        for (unsigned i = 0; i < arg_threads; i++) {
                for (int k = 0; k < N_WORK; k++)
                        per_work[k] += workers[i].work_seconds[k];
                cpu += workers[i].cpu_seconds;
                rounds += workers[i].rounds;
        }

        f = strcmp(arg_report, "-") == 0 ? stdout : fopen(arg_report, "we");
        if (!f) {
                fprintf(stderr, "vprof-demo: cannot write %s: %m\n", arg_report);
                return -1;
        }
        fprintf(f, "{\"pid\": %d, \"threads\": %u, \"rounds\": %llu, \"wall_seconds\": %.6f, \"cpu_seconds\": %.6f,\n"
                   " \"functions\": {",
                (int)getpid(), arg_threads, (unsigned long long)rounds, wall, cpu);
        for (int k = 0; k < N_WORK; k++)
                fprintf(f, "%s\"%s\": {\"cpu_seconds\": %.6f, \"percent\": %.3f}", k ? ", " : "", work_names[k],
                        per_work[k], cpu > 0 ? 100.0 * per_work[k] / cpu : 0.0);
        fprintf(f, "}}\n");
        if (f != stdout)
                fclose(f);
        return 0;
}

static void help(void)
{
        printf("Usage: vprof-demo [OPTIONS]\n\n"
               "CPU-bound workload with known hot functions for vprof.\n\n"
               "  -t, --threads=N      worker threads (default 1)\n"
               "  -s, --seconds=S      run for S seconds of wall time (default 10)\n"
               "  -r, --rounds=N       run N rounds per thread instead (a fixed amount of work)\n"
               "      --report=FILE    write the measured time per function as JSON (- for stdout)\n"
               "      --wait-stdin     wait for a line on stdin before working (attach first)\n"
               "      --bystander      spin in bystander_spin() only (a process not to be profiled)\n"
               "      --plugin=LIB     dlopen() LIB once working starts and spin in its plugin_hot()\n"
               "  -h, --help           show this help\n");
}

int main(int argc, char *argv[])
{
        enum { ARG_REPORT = 0x100, ARG_WAIT_STDIN, ARG_BYSTANDER, ARG_PLUGIN };
        static const struct option options[] = {
                { "threads", required_argument, NULL, 't' },
                { "seconds", required_argument, NULL, 's' },
                { "rounds", required_argument, NULL, 'r' },
                { "report", required_argument, NULL, ARG_REPORT },
                { "wait-stdin", no_argument, NULL, ARG_WAIT_STDIN },
                { "bystander", no_argument, NULL, ARG_BYSTANDER },
                { "plugin", required_argument, NULL, ARG_PLUGIN },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        Worker *workers;
        double start;
        int c;

        while ((c = getopt_long(argc, argv, "t:s:r:h", options, NULL)) >= 0)
                switch (c) {
                case 't':
                        arg_threads = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 's':
                        arg_seconds = strtod(optarg, NULL);
                        break;
                case 'r':
                        arg_rounds = strtoull(optarg, NULL, 10);
                        break;
                case ARG_REPORT:
                        arg_report = optarg;
                        break;
                case ARG_WAIT_STDIN:
                        arg_wait_stdin = 1;
                        break;
                case ARG_BYSTANDER:
                        arg_bystander = 1;
                        break;
                case ARG_PLUGIN:
                        arg_plugin = optarg;
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        return 2;
                }
        if (arg_threads < 1 || arg_threads > 256 || arg_seconds <= 0) {
                fprintf(stderr, "vprof-demo: --threads must be 1..256 and --seconds positive\n");
                return 2;
        }

        if (arg_wait_stdin) {
                char line[16];
                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        return 1;
        }

        if (arg_plugin) {
                /* Loaded only now, after a profiler had the chance to attach and read our maps. */
                void *lib = dlopen(arg_plugin, RTLD_NOW);
                if (!lib || !(plugin_hot = (uint64_t(*)(uint64_t, uint64_t))dlsym(lib, "plugin_hot"))) {
                        fprintf(stderr, "vprof-demo: cannot load %s: %s\n", arg_plugin, dlerror());
                        return 1;
                }
        }

        workers = calloc(arg_threads, sizeof(Worker));
        if (!workers)
                return 1;
        start = workload_now();
        /* Thread 0 is the main thread itself, so a one-thread run has a single thread. */
        for (unsigned i = 1; i < arg_threads; i++) {
                workers[i].index = i;
                workers[i].order = i;
                if (pthread_create(&workers[i].thread, NULL, worker, &workers[i]) != 0) {
                        fprintf(stderr, "vprof-demo: cannot start a thread\n");
                        return 1;
                }
        }
        worker(&workers[0]);
        for (unsigned i = 1; i < arg_threads; i++)
                pthread_join(workers[i].thread, NULL);

        if (arg_report && write_report(workers, workload_now() - start) < 0)
                return 1;
        free(workers);
        return 0;
}
