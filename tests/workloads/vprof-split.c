/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A workload whose work is split in known shares between functions of the program and of a shared library,
 * with recursion through both, for the accuracy test (tests/integration/test_accuracy.py). Built by GCC
 * twice, without frame pointers and with them (tests/workloads/meson.build). Its units of work, out of 100 a
 * round:
 *
 *   main -> split_run -> split_round -> split_alpha                                   30  (leaf)
 *                                    -> split_lib_outer [lib]                         10  (its own)
 *                                         -> split_lib_inner [lib]                    20  (leaf)
 *                                    -> split_recurse (depth 4)                       2 a level, 10
 *                                         -> split_lib_bounce [lib] (depth 4)         2 a level, 8
 *                                              -> split_recurse (depth 3) -> ...
 *                                                   -> split_recurse (depth 0) -> split_beta  22  (leaf)
 *
 * It times each piece of work with the thread's CPU clock and writes the truth at exit (--truth FILE): every
 * function's inclusive and exclusive share of the CPU time since the start or since the last SIGUSR1, which
 * starts the count again (sent after the profile's reset, so that both cover the same time).
 *
 * Usage: vprof-split [--seconds N] [--wait-stdin] [--truth FILE] */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "vprof-split.h"
#include "workload-util.h"

static const char *const split_names[_SPLIT_FUNCTION_MAX] = {
        [SPLIT_ROUND] = "split_round",         [SPLIT_ALPHA] = "split_alpha",
        [SPLIT_LIB_OUTER] = "split_lib_outer", [SPLIT_LIB_INNER] = "split_lib_inner",
        [SPLIT_RECURSE] = "split_recurse",     [SPLIT_LIB_BOUNCE] = "split_lib_bounce",
        [SPLIT_BETA] = "split_beta",
};

static volatile sig_atomic_t restart_count;

SPLIT_NOINLINE uint64_t split_alpha(uint64_t x)
{
        return split_spin(x, 30);
}

SPLIT_NOINLINE uint64_t split_beta(uint64_t x)
{
        return split_spin(x, 22);
}

SPLIT_NOINLINE uint64_t split_recurse(unsigned depth, uint64_t x)
{
        uint64_t r;

        x = split_self(SPLIT_RECURSE, x, 2);
        if (depth == 0)
                r = SPLIT_TIMED_LEAF(SPLIT_BETA, split_beta(x));
        else if (depth == SPLIT_DEPTH) /* the outermost split_lib_bounce */
                r = SPLIT_TIMED_CALL(SPLIT_LIB_BOUNCE, split_lib_bounce(depth, x, split_recurse));
        else
                r = split_lib_bounce(depth, x, split_recurse);
        __asm__ volatile("" : "+r"(r)); /* not a tail call */
        return r + depth;
}

SPLIT_NOINLINE uint64_t split_round(uint64_t x)
{
        x = SPLIT_TIMED_LEAF(SPLIT_ALPHA, split_alpha(x));
        x = SPLIT_TIMED_CALL(SPLIT_LIB_OUTER, split_lib_outer(x));
        x = SPLIT_TIMED_CALL(SPLIT_RECURSE, split_recurse(SPLIT_DEPTH, x));
        return x;
}

static void on_usr1(int sig)
{
        (void)sig;
        restart_count++;
}

/* Rounds until end; the CPU time of the count (since the start or the last SIGUSR1) in *ret_total_ns. */
SPLIT_NOINLINE uint64_t split_run(double end, uint64_t *ret_total_ns)
{
        sig_atomic_t seen = restart_count;
        uint64_t x = 1, start = split_cpu_ns();

        do {
                if (restart_count != seen) {
                        seen = restart_count;
                        memset(&split_truth, 0, sizeof(split_truth));
                        start = split_cpu_ns();
                }
                x = SPLIT_TIMED_CALL(SPLIT_ROUND, split_round(x));
        } while (workload_now() < end);
        *ret_total_ns = split_cpu_ns() - start;
        return x;
}

static int write_truth(const char *path, uint64_t total_ns)
{
        uint64_t exclusive_sum = 0;
        FILE *f;

        f = fopen(path, "we");
        if (!f) {
                fprintf(stderr, "vprof-split: cannot write %s: %m\n", path);
                return -1;
        }
        fprintf(f, "{\"cpu_seconds\": %.6f,\n \"functions\": {", (double)total_ns / 1e9);
        for (int k = 0; k < _SPLIT_FUNCTION_MAX; k++) {
                fprintf(f, "%s\n  \"%s\": {\"inclusive_percent\": %.4f, \"exclusive_percent\": %.4f}",
                        k ? "," : "", split_names[k],
                        100.0 * (double)split_truth.inclusive_ns[k] / (double)total_ns,
                        100.0 * (double)split_truth.exclusive_ns[k] / (double)total_ns);
                exclusive_sum += split_truth.exclusive_ns[k];
        }
        /* What no function above holds: the loop, the clock reads (system calls), the signal. */
        fprintf(f, "},\n \"unmeasured_percent\": %.4f}\n",
                100.0 * (double)(total_ns - exclusive_sum) / (double)total_ns);
        return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
        struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
        const char *truth = NULL;
        uint64_t total_ns, sink;
        double seconds;

        for (int i = 1; i + 1 < argc; i++)
                if (strcmp(argv[i], "--truth") == 0)
                        truth = argv[++i];
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL) < 0) {
                perror("vprof-split: SIGUSR1");
                return 1;
        }
        seconds = workload_start(argc, argv);
        sink = split_run(workload_now() + seconds, &total_ns);
        if (truth && write_truth(truth, total_ns) < 0)
                return 1;
        printf("done %llu\n", (unsigned long long)(sink & 1));
        return 0;
}
