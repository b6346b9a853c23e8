/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time windows' workload: one thread that burns CPU in phase_one() for --first seconds, then in phase_two()
 * for --second seconds, and writes the CLOCK_REALTIME microseconds of the switch to --switch-file (a line, then
 * a line with those of the start of phase_one), so that a test knows what share of any window each phase should
 * have.
 *
 *   main -> phase_one   --first seconds (6)
 *        -> phase_two   --second seconds (10)
 *
 * --wait-stdin prints "ready PID" and waits for a line first (so the test attaches before the work). Each phase
 * reads the clock only every few million iterations, so that nearly every sample lands in its own code.
 *
 * --timeline PATH: at the exit, lines "REALTIME_USEC CPU_USEC", the thread's CPU time at moments every 20 ms or
 * so: on a busy machine the process does not get a whole CPU, and its samples follow its CPU time, not the
 * wall clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static uint64_t sink;

/* The timeline: (realtime, thread CPU time) in microseconds. */
#define TIMELINE_MAX 100000
static struct {
        uint64_t realtime_usec, cpu_usec;
} timeline[TIMELINE_MAX];
static size_t n_timeline;

static uint64_t usec_of(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

static void timeline_note(void)
{
        if (n_timeline < TIMELINE_MAX &&
            (n_timeline == 0 || usec_of(CLOCK_REALTIME) >= timeline[n_timeline - 1].realtime_usec + 20000)) {
                timeline[n_timeline].realtime_usec = usec_of(CLOCK_REALTIME);
                timeline[n_timeline].cpu_usec = usec_of(CLOCK_THREAD_CPUTIME_ID);
                n_timeline++;
        }
}

static double now(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spins until the monotonic time end. */
#define SPIN_UNTIL(end)                                                                                       \
        do {                                                                                                   \
                uint64_t x = sink;                                                                             \
                do {                                                                                           \
                        for (int i = 0; i < 2000000; i++) {                                                    \
                                x = x * 6364136223846793005ull + 1442695040888963407ull;                       \
                                __asm__ volatile("" : "+r"(x));                                                \
                        }                                                                                      \
                        timeline_note();                                                                       \
                } while (now(CLOCK_MONOTONIC) < (end));                                                        \
                sink = x;                                                                                      \
        } while (0)

NOINLINE void phase_one(double end)
{
        SPIN_UNTIL(end);
}

NOINLINE void phase_two(double end)
{
        SPIN_UNTIL(end);
}

int main(int argc, char *argv[])
{
        double first = 6, second = 10, start;
        const char *switch_file = NULL, *timeline_file = NULL;
        int wait = 0;
        struct timespec realtime, started;
        FILE *f;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
                        first = atof(argv[++i]);
                else if (strcmp(argv[i], "--second") == 0 && i + 1 < argc)
                        second = atof(argv[++i]);
                else if (strcmp(argv[i], "--switch-file") == 0 && i + 1 < argc)
                        switch_file = argv[++i];
                else if (strcmp(argv[i], "--timeline") == 0 && i + 1 < argc)
                        timeline_file = argv[++i];
                else if (strcmp(argv[i], "--wait-stdin") == 0)
                        wait = 1;
                else {
                        fprintf(stderr, "usage: %s [--first SEC] [--second SEC] [--switch-file PATH] "
                                        "[--timeline PATH] [--wait-stdin]\n", argv[0]);
                        return 2;
                }
        }
        if (wait) {
                char line[64];
                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        return 1;
        }

        clock_gettime(CLOCK_REALTIME, &started);
        start = now(CLOCK_MONOTONIC);
        timeline_note();
        phase_one(start + first);
        clock_gettime(CLOCK_REALTIME, &realtime);
        if (switch_file) {
                f = fopen(switch_file, "we");
                if (!f ||
                    fprintf(f, "%llu\n%llu\n",
                            (unsigned long long)realtime.tv_sec * 1000000ull + (unsigned long long)realtime.tv_nsec / 1000,
                            (unsigned long long)started.tv_sec * 1000000ull + (unsigned long long)started.tv_nsec / 1000) < 0 ||
                    fclose(f) != 0) {
                        perror(switch_file);
                        return 1;
                }
        }
        phase_two(start + first + second);
        n_timeline = n_timeline < TIMELINE_MAX ? n_timeline : TIMELINE_MAX - 1;
        timeline[n_timeline].realtime_usec = usec_of(CLOCK_REALTIME);
        timeline[n_timeline].cpu_usec = usec_of(CLOCK_THREAD_CPUTIME_ID);
        n_timeline++;
        if (timeline_file) {
                f = fopen(timeline_file, "we");
                if (!f)
                        return 1;
                for (size_t i = 0; i < n_timeline; i++)
                        fprintf(f, "%llu %llu\n", (unsigned long long)timeline[i].realtime_usec,
                                (unsigned long long)timeline[i].cpu_usec);
                if (fclose(f) != 0)
                        return 1;
        }
        return 0;
}
