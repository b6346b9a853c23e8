/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The small protocol of the symbol workloads, as vprof-demo's: "--seconds N" to run for, "--wait-stdin" to
 * print "ready PID" and wait for a line on stdin (so the test attaches first). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The body of a leaf that burns CPU: units * iterations_per_unit rounds of the same loop, so that time is in
 * proportion to units in every leaf; the empty asm keeps the compiler from folding or vectorizing it. */
#define WORKLOAD_SPIN(units, seed, iterations_per_unit)                                                       \
        do {                                                                                                   \
                uint64_t x = (seed);                                                                           \
                for (uint64_t i = 0; i < (uint64_t)(units) * (iterations_per_unit); i++) {                     \
                        x = x * 6364136223846793005ull + 1442695040888963407ull;                               \
                        __asm__ volatile("" : "+r"(x));                                                        \
                }                                                                                              \
                return x;                                                                                      \
        } while (0)

static inline double workload_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The seconds to run; waits first when asked to. */
static inline double workload_start(int argc, char **argv)
{
        double seconds = 5;
        int wait = 0;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
                        seconds = atof(argv[++i]);
                else if (strcmp(argv[i], "--wait-stdin") == 0)
                        wait = 1;
        }
        if (wait) {
                char line[64];

                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        exit(1);
        }
        return seconds;
}
