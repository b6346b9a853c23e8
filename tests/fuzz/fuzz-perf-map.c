/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The perf map parser (perf-map.c): the input as the contents of /tmp/perf-PID.map, which the target writes,
 * then lookups at every entry's edges and at addresses the input holds. Seeds: maps as JITs write them
 * (with and without 0x, names with spaces, overlapping and replaced code, a last line cut short). */
#include <stdio.h>
#include <string.h>

#include "fuzz-input.h"
#include "macros.h"
#include "perf-map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(perf_map_freep) PerfMap *m = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        uint64_t offset;

        if (size == 0)
                return 0;
        f = fmemopen((void *)data, size, "r");
        if (!f || perf_map_parse(f, &m) < 0)
                return 0;
        for (size_t i = 0; i < 16; i++) {
                uint64_t a = fuzz_word(data, size, i);

                (void)perf_map_lookup(m, a, &offset);
                (void)perf_map_lookup(m, a - 1, &offset);
                (void)perf_map_lookup(m, a + 1, NULL);
        }
        (void)perf_map_count(m);
        return 0;
}

static int write_seeds(const char *dir)
{
        static const char jit[] =
                "7f3a5c001000 40 Interpreter\n"
                "0x7f3a5c001040 0x1c0 LazyCompile:~main /srv/app.js:1\n"
                "7f3a5c001200 100 Builtin:ArgumentsAdaptorTrampoline\n"
                "7f3a5c001200 80 replaced at the same start\n"
                "7f3a5c001000 2000 an outer stub covering the others\n"
                "7f3a5c004000 ffffffffffffffff wraps around\n"
                "7f3a5c005000 0 empty\n"
                "7f3a5c006000 10 cut sho";

        return fuzz_write_file(dir, "jit.map", jit, strlen(jit));
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
