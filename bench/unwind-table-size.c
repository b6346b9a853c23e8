/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The size and compile time of the unwind tables of ELF files (common/unwind/unwind-table.h), as vprofd
 * would compile them for the BPF program: FDEs, rows of the CFA programs, rows of the table, index entries,
 * bytes (index + rows) and bytes per row, the rules by kind, and the time to load .eh_frame and to compile
 * it (the best of --repeat runs, each in slices of 200 FDEs as the daemon does); of the load, the SHA-256
 * digest that keys a shared table (eh_frame_digest()), timed again on its own, and the bytes it hashes.
 *
 *   unwind-table-size [--repeat N] FILE...     default: Debian's libc.so.6 and python3.11 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eh-frame.h"
#include "unwind-table.h"

#define SLICE_FDES 200

static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compile(const EhFrame *e, UnwindTable **ret)
{
        _cleanup_(unwind_table_builder_freep) UnwindTableBuilder *b = NULL;
        int r;

        r = unwind_table_builder_new(e, &b);
        if (r < 0)
                return r;
        do
                r = unwind_table_builder_step(b, SLICE_FDES);
        while (r == 0);
        if (r < 0)
                return r;
        return unwind_table_builder_finish(b, ret);
}

static int measure(const char *path, unsigned repeat)
{
        static const char *const reasons[] = { "cfa", "register", "range", "ra", "rbp", "malformed" };
        double load_ms = 1e300, compile_ms = 1e300, digest_ms = 1e300;
        uint8_t digest[EH_FRAME_DIGEST_SIZE];
        size_t hashed = 0;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
        size_t bytes;
        int r;

        for (unsigned i = 0; i < repeat; i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                UnwindTable *table = NULL;
                double t0 = now_ms(), t1;

                r = eh_frame_load_path(path, &e);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", path, strerror(-r));
                        return r;
                }
                t1 = now_ms();
                hashed = eh_frame_digest_compute(e, digest);
                digest_ms = MIN(digest_ms, now_ms() - t1);
                t1 = now_ms();
                r = compile(e, &table);
                if (r < 0) {
                        fprintf(stderr, "%s: compiling: %s\n", path, strerror(-r));
                        return r;
                }
                load_ms = MIN(load_ms, t1 - t0);
                compile_ms = MIN(compile_ms, now_ms() - t1);
                unwind_table_free(t);
                t = table;
        }

        bytes = unwind_table_size(t);
        printf("%s\n", path);
        printf("  FDEs %u (skipped %u, overlapping %u, bad %u), CFA rows %u\n", t->stats.fdes,
               t->stats.fdes_skipped, t->stats.fdes_overlapping, t->stats.fdes_bad, t->stats.cfa_rows);
        printf("  rows %u + index %u (1 KiB spans of %#llx..%#llx) = %zu bytes, %.2f bytes per row\n", t->n_rows,
               t->n_index, (unsigned long long)t->base, (unsigned long long)t->end, bytes,
               (double)bytes / t->n_rows);
        printf("  kinds:");
        for (uint32_t k = 0; k < ELEMENTSOF(t->stats.by_kind); k++)
                if (t->stats.by_kind[k] > 0)
                        printf(" %s %u", unwind_table_kind_name(k), t->stats.by_kind[k]);
        printf("\n  unsupported CFA rows by reason:");
        for (size_t k = 0; k < ELEMENTSOF(reasons); k++)
                printf(" %s %u", reasons[k], t->stats.unsupported[k]);
        printf("\n  load %.2f ms (the digest %.2f ms of it, %.1f KiB hashed), compile %.2f ms (best of %u)\n",
               load_ms, digest_ms, (double)hashed / 1024, compile_ms, repeat);
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "repeat", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        static const char *const defaults[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11" };
        unsigned repeat = 5;
        int c, status = 0;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        repeat = (unsigned)strtoul(optarg, NULL, 10);
                        if (repeat == 0)
                                repeat = 1;
                        break;
                case 'h':
                        printf("%s [--repeat N] [FILE...]\n", argv[0]);
                        return 0;
                default:
                        return 2;
                }
        if (optind == argc) {
                for (size_t i = 0; i < ELEMENTSOF(defaults); i++)
                        if (measure(defaults[i], repeat) < 0)
                                status = 1;
                return status;
        }
        for (int i = optind; i < argc; i++)
                if (measure(argv[i], repeat) < 0)
                        status = 1;
        return status;
}
