/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-client-stacks.h"
#include "bus-client-window.h"
#include "duration.h"
#include "flamegraph-diff.h"
#include "flamegraph-svg.h"
#include "flamegraph-tree.h"
#include "flamegraph.h"

int flamegraph_export(sd_bus *bus, const char *target, uint64_t window_usec, FlamegraphFormat format,
                      const FlamegraphOptions *o, size_t max_bytes, sd_bus_error *error, char **ret_data,
                      size_t *ret_size)
{
        _cleanup_(stack_table_freep) StackTable *stacks = NULL;
        _cleanup_(flame_tree_freep) FlameTree *tree = NULL;
        _cleanup_(flame_buffer_done) FlameBuffer b = { .max = max_bytes };
        TableQuery q = { .target = target, .window_usec = window_usec };
        int r;

        if (!target || !ret_data || !ret_size || (format != FLAMEGRAPH_SVG && format != FLAMEGRAPH_HTML))
                return -EINVAL;
        r = bus_get_stacks(bus, &q, 0, error, &stacks);
        if (r < 0)
                return r;
        r = flame_tree_build(stacks, &tree);
        if (r < 0)
                return r;
        flamegraph_write(&b, tree, target, format, o);
        if (b.error < 0)
                return b.error;
        *ret_data = TAKE_PTR(b.data);
        *ret_size = b.size;
        return 0;
}

int flamegraph_render_diff(const WindowTables *base, const WindowTables *new, const char *target,
                           FlamegraphFormat format, const FlamegraphOptions *o, size_t max_bytes, char **ret_data,
                           size_t *ret_size)
{
        _cleanup_(flame_tree_freep) FlameTree *new_tree = NULL, *base_tree = NULL;
        _cleanup_(flame_diff_freep) FlameDiff *diff = NULL;
        _cleanup_(flame_buffer_done) FlameBuffer b = { .max = max_bytes };
        _cleanup_free_ char *title = NULL;
        FlamegraphOptions options = o ? *o : (FlamegraphOptions){};
        char window[32], base_window[32];
        int r;

        if (!target || !ret_data || !ret_size || (format != FLAMEGRAPH_SVG && format != FLAMEGRAPH_HTML))
                return -EINVAL;
        r = flame_tree_build(new->stacks, &new_tree);
        if (r >= 0)
                r = flame_tree_build(base->stacks, &base_tree);
        if (r >= 0)
                r = flame_diff_new(new_tree, base_tree, &diff);
        if (r < 0)
                return r;
        if (!options.title) {
                duration_format(window, sizeof(window), new->window_usec);
                duration_format(base_window, sizeof(base_window), base->window_usec);
                if (asprintf(&title, "vprof differential flame graph of %s: the last %s against %s ending %.0f s "
                                     "earlier",
                             target, window, base_window,
                             (double)(new->stacks->window_end_usec -
                                      MIN(new->stacks->window_end_usec, base->stacks->window_end_usec)) / 1e6) < 0)
                        return -ENOMEM;
                options.title = title;
        }
        options.diff = diff;
        flamegraph_write(&b, new_tree, target, format, &options);
        if (b.error < 0)
                return b.error;
        *ret_data = TAKE_PTR(b.data);
        *ret_size = b.size;
        return 0;
}

int flamegraph_export_diff(sd_bus *bus, const char *target, uint64_t window_usec, uint64_t base_window_usec,
                           uint64_t base_ago_usec, FlamegraphFormat format, const FlamegraphOptions *o,
                           size_t max_bytes, sd_bus_error *error, char **ret_data, size_t *ret_size)
{
        _cleanup_(window_tables_done) WindowTables base = {}, new = {};
        uint64_t until;
        int r;

        if (!target)
                return -EINVAL;
        /* The base counted back from the end the new window reported (vprofctl diff does the same). */
        r = bus_get_window_tables(bus, target, window_usec, 0, 0, error, &new);
        if (r < 0)
                return r;
        until = new.stacks->window_end_usec;
        r = bus_get_window_tables(bus, target, base_window_usec, until - MIN(until, base_ago_usec), 0, error, &base);
        if (r < 0)
                return r;
        return flamegraph_render_diff(&base, &new, target, format, o, max_bytes, ret_data, ret_size);
}
