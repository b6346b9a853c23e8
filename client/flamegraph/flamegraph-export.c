/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "bus-client-stacks.h"
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
