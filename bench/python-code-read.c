/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What reading CPython code objects costs the daemon (common/python/code-reader.h, python-code-cache.h): a live
 * /usr/bin/python3.11 that imported a part of its standard library prints the addresses of its functions' code
 * objects; each is read through process_vm_readv() as the daemon will read them. Prints the time of a whole read
 * (names, first line, line table decoded), of a cache hit (the first of a generation reads the fingerprint
 * again, the others read nothing), of a line lookup, and
 * the bytes a cached object takes: the medians over --runs passes over every object. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "code-reader.h"
#include "macros.h"
#include "python-code-cache.h"

static unsigned arg_runs = 5;
static unsigned arg_max_codes = 20000;
static bool arg_json = false;

/* Debian's python3.11 (3.11.2) on x86-64, from /usr/include/python3.11; the interpreter detection's table
 * replaces it. */
static const PythonLayout layout_3_11 = {
        .version_hex = 0x030b02f0,
        .object_type = 8,
        .code_filename = 112,
        .code_name = 120,
        .code_qualname = 128,
        .code_firstlineno = 72,
        .code_linetable = 136,
        .code_bytecode = 184,
        .unicode_length = 16,
        .unicode_state = 32,
        .unicode_ascii_data = 48,
        .unicode_compact_data = 72,
        .bytes_size = 16,
        .bytes_data = 32,
};

static const char script[] =
        "import gc, sys, types\n"
        "import json, http.server, email.parser, asyncio, argparse, logging, decimal, unittest, xml.dom.minidom\n"
        "codes = {id(f.__code__): f.__code__ for f in gc.get_objects() if isinstance(f, types.FunctionType)}\n"
        "print('types', id(types.CodeType), id(str), id(bytes))\n"
        "for a, c in codes.items(): print('code', a, len(c.co_code) // 2)\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n";

typedef struct Code {
        uint64_t address;
        uint32_t units;
} Code;

static int read_memory(void *ctx, uint64_t addr, void *buf, size_t len)
{
        pid_t pid = *(pid_t *)ctx;
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

        if (n < 0)
                return negative_errno();
        return (size_t)n == len ? 0 : -EFAULT;
}

static double now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
        qsort(v, n, sizeof(double), compare_double);
        return v[n / 2];
}

static int parse_args(int argc, char *argv[])
{
        static const struct option options[] = {
                { "runs", required_argument, NULL, 'r' },
                { "max-codes", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        arg_runs = MAX(1u, (unsigned)strtoul(optarg, NULL, 10));
                        break;
                case 'm':
                        arg_max_codes = MAX(1u, (unsigned)strtoul(optarg, NULL, 10));
                        break;
                case 'j':
                        arg_json = true;
                        break;
                default:
                        fprintf(stderr, "usage: %s [--runs N] [--max-codes N] [--json]\n", argv[0]);
                        return -EINVAL;
                }
        return 0;
}

int main(int argc, char *argv[])
{
        _cleanup_free_ Code *codes = NULL;
        _cleanup_free_ double *read_ns = NULL, *hit_ns = NULL, *same_ns = NULL, *line_ns = NULL;
        _cleanup_free_ char *line = NULL;
        PythonTypes types = {};
        size_t n_codes = 0, n = 0, failed = 0, bytes = 0, kept = 0;
        int in[2], out[2], status;
        PythonMemory m;
        pid_t pid;
        FILE *f;

        if (parse_args(argc, argv) < 0)
                return EXIT_FAILURE;
        codes = calloc(arg_max_codes, sizeof(Code));
        read_ns = calloc(arg_runs, sizeof(double));
        hit_ns = calloc(arg_runs, sizeof(double));
        same_ns = calloc(arg_runs, sizeof(double));
        line_ns = calloc(arg_runs, sizeof(double));
        if (!codes || !read_ns || !hit_ns || !same_ns || !line_ns || pipe(in) < 0 || pipe(out) < 0)
                return EXIT_FAILURE;

        pid = fork();
        if (pid < 0)
                return EXIT_FAILURE;
        if (pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                close(in[1]);
                close(out[0]);
                execl("/usr/bin/python3.11", "python3.11", "-E", "-B", "-c", script, (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        f = fdopen(out[0], "r");
        while (f && getline(&line, &n, f) > 0 && strncmp(line, "ready", 5) != 0) {
                Code c;

                if (sscanf(line, "types %" SCNu64 " %" SCNu64 " %" SCNu64, &types.code, &types.unicode,
                           &types.bytes) == 3)
                        continue;
                if (sscanf(line, "code %" SCNu64 " %" SCNu32, &c.address, &c.units) == 2 &&
                    n_codes < arg_max_codes)
                        codes[n_codes++] = c;
        }
        if (n_codes == 0 || types.code == 0) {
                fprintf(stderr, "python3.11 printed no code objects\n");
                return EXIT_FAILURE;
        }
        m = (PythonMemory){ .read = read_memory, .ctx = &pid };

        for (unsigned run = 0; run < arg_runs; run++) {
                _cleanup_(python_code_cache_freep) PythonCodeCache *cache = NULL;
                const PythonCode *c;
                PythonCodeCacheStats stats;
                double t0, t1, t2, t3;
                size_t lookups = 0;
                int sum = 0, ln;

                cache = python_code_cache_new(n_codes, SIZE_MAX);
                if (!cache)
                        return EXIT_FAILURE;
                failed = 0;
                t0 = now_ns();
                for (size_t i = 0; i < n_codes; i++)
                        if (python_code_cache_get(cache, &layout_3_11, &types, &m, codes[i].address, &c) < 0)
                                failed++;
                t1 = now_ns();
                read_ns[run] = (t1 - t0) / n_codes;
                t2 = now_ns();
                /* Hits within the generation: no read. */
                for (size_t i = 0; i < n_codes; i++)
                        (void)python_code_cache_get(cache, &layout_3_11, &types, &m, codes[i].address, &c);
                t3 = now_ns();
                same_ns[run] = (t3 - t2) / n_codes;
                python_code_cache_next_generation(cache);
                /* A checked hit: the fingerprint read again. */
                t1 = now_ns();
                for (size_t i = 0; i < n_codes; i++)
                        (void)python_code_cache_get(cache, &layout_3_11, &types, &m, codes[i].address, &c);
                t2 = now_ns();
                hit_ns[run] = (t2 - t1) / n_codes;
                /* Lookups, through hits of the generation. */
                t2 = now_ns();
                for (size_t i = 0; i < n_codes; i++) {
                        if (python_code_cache_get(cache, &layout_3_11, &types, &m, codes[i].address, &c) < 0)
                                continue;
                        for (uint32_t u = 0; u < codes[i].units; u += 7, lookups++)
                                if (python_code_line(c, c->bytecode + 2 * u, &ln) == 0)
                                        sum += ln;
                }
                t3 = now_ns();
                python_code_cache_stats(cache, &stats);
                /* The lookups' pass, less its hits. */
                line_ns[run] = lookups ? MAX(0.0, (t3 - t2) - same_ns[run] * n_codes) / lookups : 0;
                bytes = stats.bytes;
                kept = stats.entries;
                (void)sum;
        }
        close(in[1]);
        waitpid(pid, &status, 0);

        if (arg_json)
                printf("{\"codes\": %zu, \"failed\": %zu, \"read_us\": %.2f, \"hit_us\": %.2f, "
                       "\"hit_same_generation_ns\": %.1f, \"line_ns\": %.1f, \"bytes_per_code\": %.0f}\n",
                       n_codes, failed, median(read_ns, arg_runs) / 1e3, median(hit_ns, arg_runs) / 1e3,
                       median(same_ns, arg_runs), median(line_ns, arg_runs), kept ? (double)bytes / kept : 0.0);
        else {
                printf("code objects of python3.11:  %zu (%zu failed to read)\n", n_codes, failed);
                printf("whole read (miss):           %.2f us\n", median(read_ns, arg_runs) / 1e3);
                printf("cache hit, checked:          %.2f us (the first of a generation: the head read again)\n",
                       median(hit_ns, arg_runs) / 1e3);
                printf("cache hit, same generation:  %.1f ns\n", median(same_ns, arg_runs));
                printf("line lookup (decoded table): %.1f ns\n", median(line_ns, arg_runs));
                printf("bytes per cached object:     %.0f (%zu objects, %zu bytes)\n",
                       kept ? (double)bytes / kept : 0.0, kept, bytes);
        }
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
