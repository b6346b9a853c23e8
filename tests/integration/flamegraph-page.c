/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The flame graph's HTML page (flamegraph_write(), as the exporter serves it) of folded stacks read on standard
 * input, "outer;...;inner COUNT" lines with kernel frames suffixed "_[k]", inlined ones "_[i]" (vprofctl report
 * --by stack), for integration-flamegraph to load in a browser. Usage: flamegraph-page TARGET REFRESH_SECONDS < FOLDED > HTML */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph-svg.h"
#include "flamegraph-tree.h"
#include "hashmap.h"

static uint32_t function_index(StackTable *t, Hashmap *names, const char *name)
{
        void *v = hashmap_get(names, name);

        if (v)
                return (uint32_t)(PTR_TO_UINT64(v) - 1);
        t->functions = reallocarray(t->functions, t->n_functions + 1, sizeof(StackFunction));
        if (!t->functions)
                abort();
        t->functions[t->n_functions] = (StackFunction){ .module = strdup("?"), .function = strdup(name) };
        if (!t->functions[t->n_functions].function ||
            hashmap_put(names, t->functions[t->n_functions].function, UINT64_TO_PTR(t->n_functions + 1)) < 0)
                abort();
        return (uint32_t)t->n_functions++;
}

static void add_line(StackTable *t, Hashmap *names, char *line)
{
        char *space = strrchr(line, ' '), *saveptr = NULL;
        StackEntry s = {};

        if (!space)
                return;
        *space = '\0';
        s.samples = strtoull(space + 1, NULL, 10);
        for (char *frame = strtok_r(line, ";", &saveptr); frame; frame = strtok_r(NULL, ";", &saveptr)) {
                size_t n = strlen(frame);

                if (n > 4 && strcmp(frame + n - 4, "_[k]") == 0) {
                        frame[n - 4] = '\0';
                        s.n_kernel++;
                } else if (n > 4 && strcmp(frame + n - 4, "_[i]") == 0) {
                        frame[n - 4] = '\0'; /* the page marks no inlined frame: its names are what is checked */
                }
                s.frames = reallocarray(s.frames, s.n_frames + 1, sizeof(uint32_t));
                if (!s.frames)
                        abort();
                s.frames[s.n_frames++] = function_index(t, names, frame);
        }
        t->stacks = reallocarray(t->stacks, t->n_stacks + 1, sizeof(StackEntry));
        if (!t->stacks)
                abort();
        t->stacks[t->n_stacks++] = s;
        t->listed_samples += s.samples;
        t->total_samples += s.samples;
}

int main(int argc, char *argv[])
{
        _cleanup_(stack_table_freep) StackTable *t = calloc(1, sizeof(StackTable));
        _cleanup_(hashmap_freep) Hashmap *names = hashmap_new(&string_hash_ops);
        _cleanup_(flame_tree_freep) FlameTree *tree = NULL;
        _cleanup_(flame_buffer_done) FlameBuffer b = {};
        FlamegraphOptions o = {};
        char line[65536];

        if (argc != 3 || !t || !names) {
                fprintf(stderr, "usage: flamegraph-page TARGET REFRESH_SECONDS < FOLDED\n");
                return 2;
        }
        o.refresh_seconds = (uint32_t)strtoul(argv[2], NULL, 10);
        while (fgets(line, sizeof(line), stdin)) {
                line[strcspn(line, "\n")] = '\0';
                add_line(t, names, line);
        }
        if (flame_tree_build(t, &tree) < 0)
                return 1;
        flamegraph_write(&b, tree, argv[1], FLAMEGRAPH_HTML, &o);
        if (b.error < 0 || fwrite(b.data, 1, b.size, stdout) != b.size)
                return 1;
        return 0;
}
