/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The off-CPU workload: a thread whose wall time splits in known proportions between computing and waiting,
 * or one that lives in a system call. It measures its own truth (wall time in each function, the process's
 * user and system CPU time) so that tests compare the elapsed and application values with what happened.
 *
 *   cycle mode (default):  main -> run_cycles -> run_cycle -> compute_hot   --cpu-ms of spinning
 *                                                          -> wait_sleep    --sleep-ms in clock_nanosleep()
 *                                                          -> wait_read     --read-ms in read() of a timerfd
 *   --syscalls:            main -> write_null_loop -> write() of 64 KiB to /dev/null, over and over
 *
 * The waits go through libc, as real programs do: Debian's libc has no frame pointers, so the profiler must
 * find the caller of read() and clock_nanosleep() without them. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

enum { COMPUTE, SLEEP, READ, WRITE_NULL, N_FUNCTIONS };
static const char *const function_names[N_FUNCTIONS] = { "compute_hot", "wait_sleep", "wait_read",
                                                         "write_null_loop" };

static double arg_seconds = 5;
static double arg_cpu_ms = 10, arg_sleep_ms = 20, arg_read_ms = 10;
static int arg_syscalls;
static int arg_wait_stdin;
static const char *arg_report;

static double wall_seconds[N_FUNCTIONS];
static uint64_t sink;

static double monotonic_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec timespec_from_ms(double ms)
{
        return (struct timespec){ .tv_sec = (time_t)(ms / 1000),
                                  .tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6) };
}

/* Spins for ms of wall time, reading the clock (a vDSO call) only every few thousand iterations so that
 * nearly every sample lands in this function's own code. */
NOINLINE uint64_t compute_hot(double ms)
{
        double end = monotonic_now() + ms / 1000;
        uint64_t x = sink;

        do {
                for (int i = 0; i < 20000; i++) {
                        x = x * 6364136223846793005ull + 1442695040888963407ull;
                        __asm__ volatile("" : "+r"(x));
                }
        } while (monotonic_now() < end);
        return x;
}

NOINLINE void wait_sleep(double ms)
{
        struct timespec ts = timespec_from_ms(ms);

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

NOINLINE void wait_read(int timer_fd, double ms)
{
        struct itimerspec its = { .it_value = timespec_from_ms(ms) };
        uint64_t expirations;

        if (timerfd_settime(timer_fd, 0, &its, NULL) < 0)
                abort();
        /* Blocks in the kernel until the timer fires. */
        while (read(timer_fd, &expirations, sizeof(expirations)) < 0 && errno == EINTR)
                ;
}

NOINLINE void run_cycle(int timer_fd)
{
        double t;

        t = monotonic_now();
        sink += compute_hot(arg_cpu_ms);
        wall_seconds[COMPUTE] += monotonic_now() - t;

        /* A zero timer would disarm the timerfd and block the read forever. */
        if (arg_sleep_ms > 0) {
                t = monotonic_now();
                wait_sleep(arg_sleep_ms);
                wall_seconds[SLEEP] += monotonic_now() - t;
        }
        if (arg_read_ms > 0) {
                t = monotonic_now();
                wait_read(timer_fd, arg_read_ms);
                wall_seconds[READ] += monotonic_now() - t;
        }
}

NOINLINE uint64_t run_cycles(double deadline)
{
        uint64_t cycles = 0;
        int timer_fd;

        timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (timer_fd < 0) {
                perror("vprof-wait: timerfd_create");
                exit(1);
        }
        do {
                run_cycle(timer_fd);
                cycles++;
        } while (monotonic_now() < deadline);
        close(timer_fd);
        return cycles;
}

NOINLINE uint64_t write_null_loop(double deadline)
{
        static char buffer[65536];
        uint64_t writes = 0;
        double t = monotonic_now();
        int fd;

        fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                perror("vprof-wait: /dev/null");
                exit(1);
        }
        do {
                for (int i = 0; i < 1000; i++)
                        if (write(fd, buffer, sizeof(buffer)) == sizeof(buffer))
                                writes++;
        } while (monotonic_now() < deadline);
        close(fd);
        wall_seconds[WRITE_NULL] += monotonic_now() - t;
        return writes;
}

static double timeval_seconds(struct timeval tv)
{
        return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int write_report(double wall, uint64_t cycles)
{
        struct rusage ru;
        FILE *f;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return -1;
        f = strcmp(arg_report, "-") == 0 ? stdout : fopen(arg_report, "we");
        if (!f) {
                fprintf(stderr, "vprof-wait: cannot write %s: %m\n", arg_report);
                return -1;
        }
        fprintf(f, "{\"pid\": %d, \"cycles\": %llu, \"wall_seconds\": %.6f, \"user_seconds\": %.6f, "
                   "\"system_seconds\": %.6f,\n \"functions\": {",
                (int)getpid(), (unsigned long long)cycles, wall, timeval_seconds(ru.ru_utime),
                timeval_seconds(ru.ru_stime));
        for (int k = 0; k < N_FUNCTIONS; k++)
                fprintf(f, "%s\"%s\": {\"wall_seconds\": %.6f, \"percent\": %.3f}", k ? ", " : "",
                        function_names[k], wall_seconds[k], wall > 0 ? 100.0 * wall_seconds[k] / wall : 0.0);
        fprintf(f, "}}\n");
        if (f != stdout)
                fclose(f);
        return 0;
}

static void help(void)
{
        printf("Usage: vprof-wait [OPTIONS]\n\n"
               "Workload that alternates computing and waiting, for vprof's elapsed and application values.\n\n"
               "  -s, --seconds=S      run for S seconds of wall time (default 5)\n"
               "      --cpu-ms=MS      milliseconds of computing per cycle (default 10)\n"
               "      --sleep-ms=MS    milliseconds in clock_nanosleep() per cycle (default 20)\n"
               "      --read-ms=MS     milliseconds blocked in read() of a timerfd per cycle (default 10)\n"
               "      --syscalls       write 64 KiB to /dev/null in a loop instead\n"
               "      --report=FILE    write the measured times as JSON (- for stdout)\n"
               "      --wait-stdin     wait for a line on stdin before working (attach first)\n"
               "  -h, --help           show this help\n");
}

int main(int argc, char *argv[])
{
        enum { ARG_CPU_MS = 0x100, ARG_SLEEP_MS, ARG_READ_MS, ARG_SYSCALLS, ARG_REPORT, ARG_WAIT_STDIN };
        static const struct option options[] = {
                { "seconds", required_argument, NULL, 's' },
                { "cpu-ms", required_argument, NULL, ARG_CPU_MS },
                { "sleep-ms", required_argument, NULL, ARG_SLEEP_MS },
                { "read-ms", required_argument, NULL, ARG_READ_MS },
                { "syscalls", no_argument, NULL, ARG_SYSCALLS },
                { "report", required_argument, NULL, ARG_REPORT },
                { "wait-stdin", no_argument, NULL, ARG_WAIT_STDIN },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        double start, deadline;
        uint64_t cycles;
        int c;

        while ((c = getopt_long(argc, argv, "s:h", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        arg_seconds = strtod(optarg, NULL);
                        break;
                case ARG_CPU_MS:
                        arg_cpu_ms = strtod(optarg, NULL);
                        break;
                case ARG_SLEEP_MS:
                        arg_sleep_ms = strtod(optarg, NULL);
                        break;
                case ARG_READ_MS:
                        arg_read_ms = strtod(optarg, NULL);
                        break;
                case ARG_SYSCALLS:
                        arg_syscalls = 1;
                        break;
                case ARG_REPORT:
                        arg_report = optarg;
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
        if (arg_seconds <= 0 || arg_cpu_ms < 0 || arg_sleep_ms < 0 || arg_read_ms < 0) {
                fprintf(stderr, "vprof-wait: times must be positive\n");
                return 2;
        }

        if (arg_wait_stdin) {
                char line[16];
                printf("ready %d\n", (int)getpid());
                fflush(stdout);
                if (!fgets(line, sizeof(line), stdin))
                        return 1;
        }

        start = monotonic_now();
        deadline = start + arg_seconds;
        cycles = arg_syscalls ? write_null_loop(deadline) : run_cycles(deadline);
        if (arg_report && write_report(monotonic_now() - start, cycles) < 0)
                return 1;
        return 0;
}
