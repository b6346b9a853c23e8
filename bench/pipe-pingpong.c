/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Two processes bounce a byte over a pair of pipes, both on CPU 0: every round trip is two context switches
 * and nothing else of note (no idle CPU to wake across a VM's virtual CPUs), so the time of a round trip
 * shows what a sched_switch probe costs. Prints ns per round trip.
 *   pipe-pingpong ROUNDS [--wait-stdin] */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char *argv[])
{
        long rounds = argc > 1 ? atol(argv[1]) : 100000;
        int ping[2], pong[2];
        char byte = 0, line[16];
        double start;
        pid_t child;

        cpu_set_t cpu0;

        CPU_ZERO(&cpu0);
        CPU_SET(0, &cpu0);
        if (rounds <= 0 || pipe(ping) < 0 || pipe(pong) < 0 || sched_setaffinity(0, sizeof(cpu0), &cpu0) < 0)
                return 2;
        if (argc > 2 && strcmp(argv[2], "--wait-stdin") == 0) {
                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        return 1;
        }
        child = fork();
        if (child < 0)
                return 1;
        if (child == 0) {
                for (long i = 0; i < rounds; i++)
                        if (read(ping[0], &byte, 1) != 1 || write(pong[1], &byte, 1) != 1)
                                _exit(1);
                _exit(0);
        }
        start = now();
        for (long i = 0; i < rounds; i++)
                if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1)
                        return 1;
        printf("%.1f\n", (now() - start) / (double)rounds);
        waitpid(child, NULL, 0);
        return 0;
}
