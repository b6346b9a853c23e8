/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "flamegraph-diff.h"
#include "hashmap.h"

struct FlameDiff {
        const FlameTree *new;
        uint64_t base_total;
        Hashmap *base; /* path key -> the base's inclusive samples + 1 */
        double largest; /* the largest |points| of a frame */
};

FlameDiff *flame_diff_free(FlameDiff *d)
{
        if (!d)
                return NULL;
        hashmap_free(d->base);
        free(d);
        return NULL;
}

double flame_diff_points(const FlameDiff *d, const FlameNode *n, double *ret_base_percent)
{
        void *found = hashmap_get(d->base, UINT64_TO_PTR(n->key));
        uint64_t base = found ? PTR_TO_UINT64(found) - 1 : 0;
        double base_percent = d->base_total > 0 ? 100.0 * (double)base / (double)d->base_total : 0.0;

        if (ret_base_percent)
                *ret_base_percent = base_percent;
        return flame_tree_percent(d->new, n->inclusive) - base_percent;
}

int flame_diff_new(const FlameTree *new, const FlameTree *base, FlameDiff **ret)
{
        _cleanup_(flame_diff_freep) FlameDiff *d = calloc(1, sizeof(FlameDiff));
        int r;

        if (!d)
                return -ENOMEM;
        d->new = new;
        d->base_total = base->total;
        d->base = hashmap_new(&uint64_hash_ops);
        if (!d->base)
                return -ENOMEM;
        for (size_t i = 0; i < base->n_nodes; i++) {
                /* Two paths of one key (a collision of 64-bit hashes): the first one's samples. */
                r = hashmap_put(d->base, UINT64_TO_PTR(base->nodes[i].key),
                                UINT64_TO_PTR(base->nodes[i].inclusive + 1));
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        /* Of every frame, drawn or not (too narrow now, it may have been wide in the base), as difffolded does. */
        for (size_t i = 0; i < new->n_nodes; i++)
                d->largest = MAX(d->largest, fabs(flame_diff_points(d, &new->nodes[i], NULL)));
        *ret = TAKE_PTR(d);
        return 0;
}

void flame_diff_colour(const FlameDiff *d, const FlameNode *n, char *buf, size_t size)
{
        double points = flame_diff_points(d, n, NULL), depth;

        if (n->function == FLAME_NO_FUNCTION) {
                snprintf(buf, size, "hsl(0,0%%,75%%)");
                return;
        }
        /* White for no change, through to a full red (grown) or blue (shrunk) for the largest change drawn. */
        depth = d->largest > 0 ? fabs(points) / d->largest : 0.0;
        snprintf(buf, size, "hsl(%u,85%%,%.0f%%)", points >= 0 ? 0u : 220u, 97.0 - 47.0 * depth);
}
