/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The small protocol of the symbol workloads, as vprof-demo's: "--seconds N" to run for, "--wait-stdin" to
 * print "ready PID" and wait for a line on stdin (so the test attaches first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
