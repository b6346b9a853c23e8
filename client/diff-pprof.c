/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "array-util.h"
#include "diff-pprof.h"
#include "hashmap.h"
#include "log.h"
#include "pprof-build.h"
#include "pprof-gzip.h"
#include "report-file.h"

/* A mapping named by each native module, addresses unknown (a window's tables have none): the file names each
 * frame's module as GetProfile's do, for pprof's views by file and for --base-pprof to read back. */
static int add_module_mappings(PprofProcess *p)
{
        _cleanup_(hashmap_freep) Hashmap *seen = hashmap_new(&string_hash_ops);
        size_t allocated = 0;
        int r;

        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_functions; i++) {
                const char *module = p->functions[i].module;

                if (p->functions[i].filename || hashmap_contains(seen, module))
                        continue;
                r = hashmap_put(seen, module, NULL);
                if (r >= 0)
                        r = array_grow_one(&p->mappings, &allocated, p->n_mappings, sizeof(PprofMapping));
                if (r < 0)
                        return r;
                p->mappings[p->n_mappings++] = (PprofMapping){ .module = module, .path = module, .build_id = "" };
        }
        return 0;
}

int diff_write_pprof(const WindowTables *w, const char *target, const char *path)
{
        const StackTable *s = w->stacks;
        _cleanup_(pprof_data_done) PprofData d = {
                .total_samples = s->total_samples,
                .other_samples = s->total_samples - s->listed_samples,
                .start_usec = s->window_start_usec,
                .end_usec = s->window_end_usec,
                .frequency = w->frequency,
        };
        _cleanup_free_ uint32_t *frames = NULL;
        _cleanup_free_ uint8_t *packed = NULL;
        _cleanup_free_ void *data = NULL;
        PprofProcess *p;
        size_t n_frames = 0, size, packed_size;
        uint32_t *next;
        int r;

        for (size_t i = 0; i < s->n_stacks; i++)
                n_frames += s->stacks[i].n_frames;
        d.processes = p = calloc(1, sizeof(PprofProcess));
        frames = calloc(MAX(n_frames, (size_t)1), sizeof(uint32_t));
        if (!p || !frames)
                return log_error_errno(-ENOMEM, "Out of memory.");
        d.n_processes = 1;
        *p = (PprofProcess){ .comm = target, .unit = "" };
        p->functions = calloc(MAX(s->n_functions, (size_t)1), sizeof(PprofFunction));
        p->stacks = calloc(MAX(s->n_stacks, (size_t)1), sizeof(PprofStack));
        if (!p->functions || !p->stacks)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (size_t i = 0; i < s->n_functions; i++)
                p->functions[i] = (PprofFunction){ .module = s->functions[i].module,
                                                   .name = s->functions[i].function,
                                                   .system_name = "",
                                                   .inlined = s->functions[i].inlined,
                                                   /* A Python function's module is its source file. */
                                                   .filename = s->functions[i].python ? s->functions[i].module
                                                                                      : NULL };
        p->n_functions = s->n_functions;
        r = add_module_mappings(p);
        if (r < 0)
                return log_error_errno(r, "Out of memory.");
        /* A pprof sample's locations are innermost first, GetWindowTables' frames outermost first. */
        next = frames;
        for (size_t i = 0; i < s->n_stacks; i++) {
                const StackEntry *e = &s->stacks[i];

                for (size_t j = 0; j < e->n_frames; j++)
                        next[j] = e->frames[e->n_frames - 1 - j];
                p->stacks[i] = (PprofStack){ .frames = next, .n_frames = e->n_frames, .n_kernel = e->n_kernel,
                                             .samples = e->samples };
                next += e->n_frames;
        }
        p->n_stacks = s->n_stacks;
        r = pprof_build(&d, "vprof " VPROF_VERSION " diff", &packed, &packed_size);
        if (r >= 0)
                r = pprof_gzip(packed, packed_size, 0, &data, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to make the pprof file of '%s': %m", path);
        r = report_write_file(path, data, size);
        if (r < 0)
                return log_error_errno(r, "Failed to write '%s': %m", path);
        return 0;
}
