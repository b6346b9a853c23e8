/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pprof reader (client/pprof/pprof-read.c), which vprofctl diff --base-pprof points at a file of any origin:
 * the input as that file (gzip-compressed or not), then every frame of every stack it made looked at. Seeds:
 * vprof's own files, raw and compressed, of two processes with kernel, inlined and Python frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "macros.h"
#include "pprof-build.h"
#include "pprof-gzip.h"
#include "pprof-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(pprof_read_freep) PprofRead *p = NULL;
        size_t bytes = 0;

        if (pprof_read(data, size, &p) < 0)
                return 0;
        for (size_t i = 0; i < p->n_stacks; i++) {
                const PprofReadStack *s = &p->stacks[i];

                if (s->n_kernel > s->n_frames || s->samples == 0)
                        abort();
                for (size_t j = 0; j < s->n_frames; j++) {
                        if (s->frames[j] >= p->n_functions)
                                abort();
                        bytes += strlen(p->functions[s->frames[j]].module) +
                                 strlen(p->functions[s->frames[j]].name);
                }
                if (s->thread)
                        bytes += strlen(s->thread);
        }
        return bytes == SIZE_MAX;
}

static int write_seeds(const char *dir)
{
        static const uint32_t kernel[] = { 3, 0, 1 }, inlined[] = { 2, 0, 1 }, python[] = { 4, 1 };
        static PprofMapping mappings[] = { { "app", "/usr/bin/app", "0123abcd", 0x400000, 0x401000, 0x1000 } };
        static PprofFunction functions[] = {
                { "app", "work", "", 0x400100 },
                { "app", "main", "", 0x400200 },
                { "app", "leaf", "", 0x400100, true },
                { "[kernel]", "do_syscall_64", "", UINT64_C(0xffffffff81000000) },
                { "/srv/app.py", "handler", "", 0, false, "/srv/app.py", 12, 14 },
        };
        static PprofThread threads[] = { { 11, "worker" }, { 10, "app" } };
        static PprofStack stacks[] = {
                { kernel, 3, 1, 11, 5, 0 },
                { inlined, 3, 0, 10, 3, 0 },
                { python, 2, 0, 0, 2, 0 },
        };
        PprofProcess processes[] = {
                { .pid = 10, .comm = "app", .unit = "app.service", .mappings = mappings, .n_mappings = 1,
                  .functions = functions, .n_functions = ELEMENTSOF(functions), .threads = threads,
                  .n_threads = ELEMENTSOF(threads), .stacks = stacks, .n_stacks = ELEMENTSOF(stacks) },
        };
        PprofData d = { .total_samples = 10, .start_usec = 1000000, .end_usec = 3500000, .frequency = 99,
                        .processes = processes, .n_processes = 1 };
        _cleanup_free_ uint8_t *raw = NULL;
        _cleanup_free_ void *gz = NULL;
        size_t raw_size, gz_size;

        if (pprof_build(&d, "seed", &raw, &raw_size) < 0 || pprof_gzip(raw, raw_size, 0, &gz, &gz_size) < 0)
                return -1;
        if (fuzz_write_file(dir, "vprof.pb", raw, raw_size) < 0 || fuzz_write_file(dir, "vprof.pb.gz", gz, gz_size) < 0)
                return -1;
        return 0;
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
