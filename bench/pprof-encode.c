/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cost of a pprof file (client/pprof/): the time pprof_build() and pprof_gzip() take for a profile of
 * --stacks distinct stacks (100,000 by default) over --functions functions (2,000) in 5 modules, --min-depth to
 * --max-depth frames (8 to 40: the depth of a C++ or Python service's stacks), a tenth of them with kernel frames,
 * on 8 threads, each stack 1 to 50 samples: the median of --runs runs. And the size of the file against the folded
 * text of the same stacks (vprofctl report --by stack: frames outermost first joined by ';', kernel ones with
 * _[k], a space and the count a line). The stacks are distinct by construction: the leaf and its caller together
 * are the stack's number. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macros.h"
#include "pprof-build.h"
#include "pprof-gzip.h"

static unsigned arg_stacks = 100000;
static unsigned arg_functions = 2000;
static unsigned arg_min_depth = 8;
static unsigned arg_max_depth = 40;
static unsigned arg_runs = 5;

#define MODULES 5
#define KERNEL_FUNCTIONS 50

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
        /* xorshift64*: repeatable runs. */
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1du;
}

static uint32_t below(uint32_t n)
{
        return (uint32_t)((rng() >> 32) % n);
}

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_double(const void *x, const void *y)
{
        double a = *(const double *)x, b = *(const double *)y;
        return a < b ? -1 : a > b;
}

static const char *const modules[MODULES] = { "server", "libc.so.6", "libstdc++.so.6", "libssl.so.3",
                                              "libz.so.1" };

int main(int argc, char *argv[])
{
        static const struct option options[] = {
                { "stacks", required_argument, NULL, 's' }, { "functions", required_argument, NULL, 'f' },
                { "min-depth", required_argument, NULL, 'm' }, { "max-depth", required_argument, NULL, 'M' },
                { "runs", required_argument, NULL, 'r' }, {},
        };
        size_t n_functions, total_frames = 0, folded_bytes = 0, packed_size = 0, gz_size = 0;
        PprofMapping mappings[MODULES];
        PprofFunction *functions;
        PprofThread threads[8];
        PprofStack *stacks;
        uint32_t *frames;
        double *build_ms, *total_ms;
        char **names;
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                unsigned *target = c == 's' ? &arg_stacks : c == 'f' ? &arg_functions : c == 'm' ? &arg_min_depth
                                   : c == 'M' ? &arg_max_depth : c == 'r' ? &arg_runs : NULL;
                if (!target) {
                        fprintf(stderr, "usage: pprof-encode [--stacks N] [--functions N] [--min-depth N] "
                                        "[--max-depth N] [--runs N]\n");
                        return 2;
                }
                *target = (unsigned)strtoul(optarg, NULL, 10);
        }
        if (arg_functions < 2 || arg_min_depth < 2 || arg_max_depth < arg_min_depth || arg_runs == 0 ||
            (uint64_t)arg_functions * arg_functions < arg_stacks) {
                fprintf(stderr, "pprof-encode: need functions >= 2, functions^2 >= stacks, 2 <= min-depth <= "
                                "max-depth, runs >= 1\n");
                return 2;
        }

        /* Names as long as a C++ service's: a namespace, a class, a method. */
        n_functions = arg_functions + KERNEL_FUNCTIONS;
        functions = calloc(n_functions, sizeof(PprofFunction));
        names = calloc(n_functions, sizeof(char *));
        stacks = calloc(arg_stacks, sizeof(PprofStack));
        frames = calloc((size_t)arg_stacks * arg_max_depth, sizeof(uint32_t));
        build_ms = calloc(arg_runs, sizeof(double));
        total_ms = calloc(arg_runs, sizeof(double));
        if (!functions || !names || !stacks || !frames || !build_ms || !total_ms)
                return 1;
        for (size_t i = 0; i < MODULES; i++)
                mappings[i] = (PprofMapping){ modules[i], modules[i], "3f1c2a9be0d4c7e8a1b2c3d4e5f60718293a4b5c",
                                              0x400000 + i * 0x10000000, 0x400000 + i * 0x10000000 + 0x800000,
                                              0x1000 };
        for (size_t i = 0; i < n_functions; i++) {
                bool kernel = i >= arg_functions;
                size_t module = i % MODULES;

                if (asprintf(&names[i], kernel ? "kernel_function_%zu" : "app::component%zu::Handler::method_%zu",
                             kernel ? i : i % 97, i) < 0)
                        return 1;
                functions[i] = (PprofFunction){
                        .module = kernel ? "[kernel]" : modules[module],
                        .name = names[i],
                        .system_name = "",
                        .address = kernel ? UINT64_C(0xffffffff81000000) + i * 64
                                          : mappings[module].start + 0x1000 + i * 64,
                };
        }
        for (unsigned i = 0; i < 8; i++)
                threads[i] = (PprofThread){ 1000 + i, "worker" };
        for (size_t i = 0; i < arg_stacks; i++) {
                uint32_t *f = frames + total_frames;
                size_t depth = arg_min_depth + below(arg_max_depth - arg_min_depth + 1), n_kernel = 0;

                if (below(10) == 0)
                        n_kernel = 1 + below(4);
                /* Innermost first: the kernel part, then the user leaf and its caller (the stack's number),
                 * then callers at random. */
                for (size_t k = 0; k < n_kernel; k++)
                        f[k] = arg_functions + below(KERNEL_FUNCTIONS);
                f[n_kernel] = (uint32_t)(i % arg_functions);
                f[n_kernel + 1] = (uint32_t)(i / arg_functions);
                for (size_t k = n_kernel + 2; k < depth + n_kernel; k++)
                        f[k] = below(arg_functions);
                stacks[i] = (PprofStack){ .frames = f, .n_frames = depth + n_kernel, .n_kernel = (uint32_t)n_kernel,
                                          .tid = 1000 + below(8), .samples = 1 + below(50) };
                total_frames += depth + n_kernel;

                /* Its line of folded text. */
                for (size_t k = stacks[i].n_frames; k-- > 0;)
                        folded_bytes += strlen(names[f[k]]) + (k < n_kernel ? 4 : 0) + 1;
                folded_bytes += (size_t)snprintf(NULL, 0, "%" PRIu64, stacks[i].samples) + 1;
        }

        PprofProcess process = {
                .pid = 4242, .comm = "server", .unit = "server.service",
                .mappings = mappings, .n_mappings = MODULES,
                .functions = functions, .n_functions = n_functions,
                .threads = threads, .n_threads = 8,
                .stacks = stacks, .n_stacks = arg_stacks,
        };
        PprofData d = { .start_usec = 1, .end_usec = 10000001, .frequency = 99, .processes = &process,
                        .n_processes = 1 };

        for (unsigned run = 0; run < arg_runs; run++) {
                uint8_t *packed;
                void *gz;
                double t0 = now_ms(), t1;
                int r;

                r = pprof_build(&d, "vprof bench", &packed, &packed_size);
                t1 = now_ms();
                if (r >= 0)
                        r = pprof_gzip(packed, packed_size, 0, &gz, &gz_size);
                if (r < 0) {
                        fprintf(stderr, "pprof-encode: %s\n", strerror(-r));
                        return 1;
                }
                build_ms[run] = t1 - t0;
                total_ms[run] = now_ms() - t0;
                free(packed);
                free(gz);
        }
        qsort(build_ms, arg_runs, sizeof(double), compare_double);
        qsort(total_ms, arg_runs, sizeof(double), compare_double);

        printf("stacks %u, functions %zu, frames %zu (%.1f a stack), runs %u\n", arg_stacks, n_functions, total_frames,
               (double)total_frames / arg_stacks, arg_runs);
        printf("encode (build + gzip), median: %.1f ms (pprof_build() alone, median: %.1f ms)\n",
               total_ms[arg_runs / 2], build_ms[arg_runs / 2]);
        printf("sizes: pprof %zu bytes (packed %zu), folded text %zu bytes: pprof is %.1f%% of folded\n", gz_size,
               packed_size, folded_bytes, 100.0 * (double)gz_size / (double)folded_bytes);

        for (size_t i = 0; i < n_functions; i++)
                free(names[i]);
        free(names);
        free(functions);
        free(stacks);
        free(frames);
        free(build_ms);
        free(total_ms);
        return 0;
}
