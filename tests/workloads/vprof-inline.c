/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Inlined functions, for the inline reader (common/symbols/inline-frames.c) and the drain's expansion of them:
 * built by GCC with -O2 -g and without frame pointers. run_batch() holds two always_inline stages, stage_hash()
 * (which holds mix_round()) and stage_sum(), so an address of run_batch() expands into up to three functions.
 *
 * vprof-inline [--seconds S] [--truth FILE] [--wait-stdin]: works S seconds (default 1) and prints a checksum.
 * With --truth it measures each stage's share of its thread's CPU time (CLOCK_THREAD_CPUTIME_ID around each
 * stage: a system call each, under a microsecond, against milliseconds of each stage: a few hundredths of a
 * percent) and writes it to FILE
 * as JSON: inclusive and exclusive percent per function (stage_hash's with mix_round's, which the clock cannot
 * part), and the rest (run_batch's own code, main's loop, the clock reads). With --wait-stdin it prints "ready PID" and waits for a line first;
 * SIGUSR1 starts the measure over. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline __attribute__((always_inline)) uint64_t mix_round(uint64_t h, uint64_t v)
{
        h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        return h * 0xff51afd7ed558ccdull;
}

static inline __attribute__((always_inline)) uint64_t stage_hash(uint64_t seed, unsigned n)
{
        uint64_t h = seed;

        for (unsigned i = 0; i < n; i++)
                h = mix_round(h, i);
        return h;
}

static inline __attribute__((always_inline)) uint64_t stage_sum(uint64_t seed, unsigned n)
{
        uint64_t s = seed;

        for (unsigned i = 0; i < n; i++)
                s += (s >> 3) ^ (s * i);
        return s;
}

static volatile sig_atomic_t restart;
static double hash_seconds, sum_seconds;

static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t run_batch(uint64_t seed);
__attribute__((noinline)) uint64_t run_batch(uint64_t seed)
{
        double t0 = cpu_now(), t1, t2;
        uint64_t h = stage_hash(seed, 1000000);

        t1 = cpu_now();
        h = stage_sum(h, 1000000);
        t2 = cpu_now();
        hash_seconds += t1 - t0;
        sum_seconds += t2 - t1;
        return h;
}

static void on_usr1(int sig)
{
        (void)sig;
        restart = 1;
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_truth(const char *path, double cpu)
{
        double hash = 100.0 * hash_seconds / cpu, sum = 100.0 * sum_seconds / cpu;
        FILE *f = fopen(path, "we");

        if (!f) {
                perror(path);
                exit(EXIT_FAILURE);
        }
        fprintf(f,
                "{\"cpu_seconds\": %.6f, \"functions\": {"
                "\"stage_hash\": {\"inclusive_percent\": %.4f, \"exclusive_percent\": %.4f}, "
                "\"stage_sum\": {\"inclusive_percent\": %.4f, \"exclusive_percent\": %.4f}}, "
                "\"rest_percent\": %.4f}\n",
                cpu, hash, hash, sum, sum, 100.0 - hash - sum);
        fclose(f);
}

int main(int argc, char **argv)
{
        double seconds = 1.0, end, start_cpu;
        const char *truth = NULL;
        uint64_t sum = 0;
        char line[16];

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
                        seconds = atof(argv[++i]);
                else if (strcmp(argv[i], "--truth") == 0 && i + 1 < argc)
                        truth = argv[++i];
                else if (strcmp(argv[i], "--wait-stdin") == 0) {
                        printf("ready %d\n", (int)getpid());
                        fflush(stdout);
                        if (!fgets(line, sizeof(line), stdin))
                                return EXIT_FAILURE;
                }
        signal(SIGUSR1, on_usr1);
        end = now() + seconds;
        start_cpu = cpu_now();
        do {
                if (restart) {
                        restart = 0;
                        hash_seconds = sum_seconds = 0;
                        start_cpu = cpu_now();
                }
                sum = run_batch(sum);
        } while (now() < end);
        if (truth)
                write_truth(truth, cpu_now() - start_cpu);
        printf("%llu\n", (unsigned long long)sum);
        return 0;
}
