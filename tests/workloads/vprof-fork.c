/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Processes that fork, for attaching a process with its children and a whole service:
 *
 *   vprof-fork storm [--children N] [--per-second R] [--child-ms MS] [--child-sleep-ms MS] [--wait-stdin]
 *       forks N children (500) at R a second (500), each burning MS ms of CPU (3) in fork_child_spin(), then
 *       sleeping the sleep's MS (0), and exiting; the parent, which burns nothing, reaps them and prints
 *       "child PID" for each once all are gone, then "done N".
 *   vprof-fork service [--workers W] [--worker-seconds S] [--log FILE] [--wait-stdin]
 *       a service's main process: keeps W workers (2), each burning CPU in fork_worker_spin() for S seconds (2)
 *       and exiting; each is replaced as it exits, until SIGTERM. Each worker appends "worker PID" to FILE as it
 *       starts (and the main process "main PID"), so that a test knows which started when.
 *
 * With --wait-stdin the process prints "ready PID" and waits for a line before it starts. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload-util.h"

#define ITERATIONS_PER_MS 10000 /* about 0.05 ms a unit: fine enough steps */

static volatile sig_atomic_t stopping;

__attribute__((noinline)) static uint64_t fork_child_spin(uint64_t ms)
{
        WORKLOAD_SPIN(ms, 1, ITERATIONS_PER_MS);
}

__attribute__((noinline)) static uint64_t fork_worker_spin(uint64_t ms)
{
        WORKLOAD_SPIN(ms, 2, ITERATIONS_PER_MS);
}

/* Burn CPU in fn until seconds of wall time have passed, a millisecond's worth at a time. */
static void burn(uint64_t (*fn)(uint64_t), double seconds)
{
        double end = workload_now() + seconds;

        while (workload_now() < end)
                (void)fn(1);
}

/* Burn ms milliseconds of CPU time (the process's own clock: preemption does not shorten it). */
static void burn_cpu(uint64_t (*fn)(uint64_t), double ms)
{
        struct timespec ts;
        double end;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        end = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 + ms;
        do {
                (void)fn(1);
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        } while ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 < end);
}

static void wait_stdin(void)
{
        char line[64];

        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                exit(1);
}

static double rusage_seconds(int who)
{
        struct rusage u;

        if (getrusage(who, &u) < 0)
                return 0;
        return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static int storm(unsigned n, unsigned per_second, double child_ms, double sleep_ms)
{
        pid_t *pids = calloc(n, sizeof(pid_t));
        double t0 = workload_now(), late = 0, last_fork = t0;
        unsigned reaped = 0;

        if (!pids)
                return 1;
        for (unsigned i = 0; i < n; i++) {
                double at = t0 + (double)i / per_second;

                while (workload_now() < at) {
                        struct timespec ts = { 0, 200 * 1000 };

                        nanosleep(&ts, NULL);
                }
                /* How far behind its schedule the storm fell: a machine that starves it, or a daemon. */
                last_fork = workload_now();
                if (last_fork - at > late)
                        late = last_fork - at;
                pids[i] = fork();
                if (pids[i] < 0) {
                        perror("fork");
                        return 1;
                }
                if (pids[i] == 0) {
                        struct timespec ts = { (time_t)(sleep_ms / 1e3),
                                               (long)((sleep_ms - (double)(time_t)(sleep_ms / 1e3) * 1e3) * 1e6) };

                        burn_cpu(fork_child_spin, child_ms);
                        if (sleep_ms > 0)
                                nanosleep(&ts, NULL);
                        _exit(0);
                }
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        reaped++;
        }
        while (reaped < n && waitpid(-1, NULL, 0) > 0)
                reaped++;
        for (unsigned i = 0; i < n; i++)
                printf("child %d\n", (int)pids[i]);
        /* The CPU the storm itself took (its children too): whether the machine had room for it and a daemon. */
        printf("done %u in %.3f s (forks at most %.3f s late, the last child reaped %.3f s after the last fork; "
               "CPU %.2f s)\n",
               n, workload_now() - t0, late, workload_now() - last_fork,
               rusage_seconds(RUSAGE_SELF) + rusage_seconds(RUSAGE_CHILDREN));
        free(pids);
        return 0;
}

static void on_term(int sig __attribute__((unused)))
{
        stopping = 1;
}

static void log_line(const char *path, const char *what)
{
        char line[64];
        int fd, n;

        if (!path)
                return;
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        n = snprintf(line, sizeof(line), "%s %d\n", what, (int)getpid());
        if (write(fd, line, (size_t)n) != n) { /* one write: whole lines from every worker */
        }
        close(fd);
}

static pid_t start_worker(double seconds, const char *log)
{
        pid_t pid = fork();

        if (pid == 0) {
                signal(SIGTERM, SIG_DFL);
                log_line(log, "worker");
                burn(fork_worker_spin, seconds);
                _exit(0);
        }
        return pid;
}

static int service(unsigned workers, double seconds, const char *log)
{
        struct sigaction sa = { .sa_handler = on_term };
        pid_t *pids = calloc(workers, sizeof(pid_t));

        if (!pids)
                return 1;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        log_line(log, "main");
        for (unsigned i = 0; i < workers; i++)
                if ((pids[i] = start_worker(seconds, log)) < 0)
                        return 1;
        while (!stopping) {
                pid_t pid = wait(NULL);

                if (pid < 0) {
                        if (errno == EINTR)
                                continue;
                        return 1;
                }
                for (unsigned i = 0; i < workers; i++)
                        if (pids[i] == pid) {
                                pids[i] = stopping ? 0 : start_worker(seconds, log);
                                if (pids[i] < 0)
                                        return 1;
                        }
        }
        /* The service manager sends SIGTERM to the workers too; run by hand, they hear it from here. */
        for (unsigned i = 0; i < workers; i++)
                if (pids[i] > 0)
                        kill(pids[i], SIGTERM);
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        free(pids);
        return 0;
}

int main(int argc, char **argv)
{
        unsigned children = 500, per_second = 500, workers = 2;
        double child_ms = 3, sleep_ms = 0, worker_seconds = 2;
        const char *log = NULL;
        int wait = 0;

        if (argc < 2 || (strcmp(argv[1], "storm") != 0 && strcmp(argv[1], "service") != 0)) {
                fprintf(stderr, "usage: vprof-fork storm|service [OPTIONS]\n");
                return 2;
        }
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

                if (strcmp(a, "--wait-stdin") == 0)
                        wait = 1;
                else if (!v) {
                        fprintf(stderr, "vprof-fork: %s needs a value\n", a);
                        return 2;
                } else if (strcmp(a, "--children") == 0)
                        children = (unsigned)atoi(v), i++;
                else if (strcmp(a, "--per-second") == 0)
                        per_second = (unsigned)atoi(v), i++;
                else if (strcmp(a, "--child-ms") == 0)
                        child_ms = atof(v), i++;
                else if (strcmp(a, "--child-sleep-ms") == 0)
                        sleep_ms = atof(v), i++;
                else if (strcmp(a, "--workers") == 0)
                        workers = (unsigned)atoi(v), i++;
                else if (strcmp(a, "--worker-seconds") == 0)
                        worker_seconds = atof(v), i++;
                else if (strcmp(a, "--log") == 0)
                        log = v, i++;
                else {
                        fprintf(stderr, "vprof-fork: unknown option %s\n", a);
                        return 2;
                }
        }
        if (children == 0 || per_second == 0 || workers == 0) {
                fprintf(stderr, "vprof-fork: counts must be positive\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (wait)
                wait_stdin();
        if (strcmp(argv[1], "storm") == 0)
                return storm(children, per_second, child_ms, sleep_ms);
        return service(workers, worker_seconds, log);
}
