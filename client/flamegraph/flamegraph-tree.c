/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph-tree.h"
#include "hashmap.h"

FlameTree *flame_tree_free(FlameTree *t)
{
        if (!t)
                return NULL;
        free(t->nodes);
        free(t->children);
        free(t);
        return NULL;
}

const char *flame_node_name(const FlameTree *t, const FlameNode *n)
{
        switch (n->kind) {
        case FLAME_NODE_ROOT:
                return "all";
        case FLAME_NODE_OTHER:
                return "[stacks past the daemon's per-target limit]";
        case FLAME_NODE_LEFT_OUT:
                return "[stacks too rare to fit in the daemon's reply]";
        default:
                return t->table->functions[n->function].function;
        }
}

const char *flame_node_module(const FlameTree *t, const FlameNode *n)
{
        if (n->function == FLAME_NO_FUNCTION)
                return "";
        return t->table->functions[n->function].module;
}

double flame_tree_percent(const FlameTree *t, uint64_t samples)
{
        return t->total > 0 ? 100.0 * (double)samples / (double)t->total : 0.0;
}

typedef struct Builder {
        FlameTree *tree;
        size_t allocated;
} Builder;

static int add_node(Builder *b, uint32_t parent, uint32_t function, FlameNodeKind kind, uint32_t *ret)
{
        FlameTree *t = b->tree;

        if (t->n_nodes >= UINT32_MAX)
                return -E2BIG;
        if (t->n_nodes == b->allocated) {
                size_t want = MAX(b->allocated * 2, (size_t)64);
                FlameNode *n = reallocarray(t->nodes, want, sizeof(FlameNode));
                if (!n)
                        return -ENOMEM;
                t->nodes = n;
                b->allocated = want;
        }
        t->nodes[t->n_nodes] = (FlameNode){
                .function = function,
                .kind = kind,
                .parent = parent,
                .depth = t->n_nodes == 0 ? 0 : t->nodes[parent].depth + 1,
        };
        t->max_depth = MAX(t->max_depth, t->nodes[t->n_nodes].depth);
        *ret = (uint32_t)t->n_nodes++;
        return 0;
}

/* A frame as the tree tells frames apart: its function, and whether it ran in the kernel. */
static uint64_t frame_key(const StackEntry *s, size_t i)
{
        return (uint64_t)s->frames[i] << 1 | (uint64_t)stack_entry_is_kernel(s, i);
}

static int compare_stacks(const void *a, const void *b)
{
        const StackEntry *x = *(const StackEntry *const *)a, *y = *(const StackEntry *const *)b;

        for (size_t i = 0; i < x->n_frames && i < y->n_frames; i++) {
                uint64_t kx = frame_key(x, i), ky = frame_key(y, i);
                if (kx != ky)
                        return kx < ky ? -1 : 1;
        }
        return x->n_frames < y->n_frames ? -1 : x->n_frames > y->n_frames ? 1 : 0;
}

/* The stacks in order, so that those sharing a path from the root are neighbours: each stack reuses the nodes
 * of the path it shares with the one before and makes the rest, with no lookup (flamegraph.pl's way, on
 * indices). path[d]: the node at depth d of the previous stack. */
static int add_stacks(Builder *b, const StackTable *table)
{
        _cleanup_free_ const StackEntry **sorted = NULL;
        _cleanup_free_ uint32_t *path = NULL;
        const StackEntry *previous = NULL;
        size_t max_frames = 0;
        int r;

        sorted = calloc(MAX(table->n_stacks, (size_t)1), sizeof(StackEntry *));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < table->n_stacks; i++) {
                sorted[i] = &table->stacks[i];
                max_frames = MAX(max_frames, table->stacks[i].n_frames);
        }
        if (max_frames >= UINT32_MAX)
                return -E2BIG;
        path = calloc(max_frames + 1, sizeof(uint32_t));
        if (!path)
                return -ENOMEM;
        qsort(sorted, table->n_stacks, sizeof(StackEntry *), compare_stacks);

        for (size_t i = 0; i < table->n_stacks; i++) {
                const StackEntry *s = sorted[i];
                size_t shared = 0;

                if (previous)
                        while (shared < s->n_frames && shared < previous->n_frames &&
                               frame_key(s, shared) == frame_key(previous, shared))
                                shared++;
                for (size_t d = shared; d < s->n_frames; d++) {
                        r = add_node(b, path[d], s->frames[d],
                                     stack_entry_is_kernel(s, d) ? FLAME_NODE_KERNEL : FLAME_NODE_USER, &path[d + 1]);
                        if (r < 0)
                                return r;
                }
                for (size_t d = 0; d <= s->n_frames; d++)
                        b->tree->nodes[path[d]].inclusive += s->samples;
                b->tree->nodes[path[s->n_frames]].exclusive += s->samples;
                previous = s;
        }
        return 0;
}

/* A node for samples the reply has in no stack, under the root. */
static int add_unlisted(Builder *b, FlameNodeKind kind, uint64_t samples)
{
        uint32_t node;
        int r;

        if (samples == 0)
                return 0;
        r = add_node(b, 0, FLAME_NO_FUNCTION, kind, &node);
        if (r < 0)
                return r;
        b->tree->nodes[node].inclusive = b->tree->nodes[node].exclusive = samples;
        b->tree->nodes[0].inclusive += samples;
        return 0;
}

static int compare_children(const void *a, const void *b, void *userdata)
{
        const FlameTree *t = userdata;
        const FlameNode *x = &t->nodes[*(const uint32_t *)a], *y = &t->nodes[*(const uint32_t *)b];
        int c;

        /* The unlisted samples last, then by name: a frame keeps its place from one refresh to the next. */
        if ((x->function == FLAME_NO_FUNCTION) != (y->function == FLAME_NO_FUNCTION))
                return x->function == FLAME_NO_FUNCTION ? 1 : -1;
        c = strcmp(flame_node_name(t, x), flame_node_name(t, y));
        if (c == 0)
                c = strcmp(flame_node_module(t, x), flame_node_module(t, y));
        if (c == 0)
                c = (int)x->kind - (int)y->kind;
        return c;
}

static uint64_t path_key(const FlameTree *t, const FlameNode *n)
{
        const char *name = flame_node_name(t, n), *module = flame_node_module(t, n);
        uint64_t h = t->nodes[n->parent].key ^ (uint64_t)n->kind;

        h = hash_bytes(name, strlen(name) + 1, h);
        return hash_bytes(module, strlen(module) + 1, h);
}

/* Children sorted by name, and each node's place: a parent comes before its children, so one pass in index
 * order places every node before its children need it. */
static int layout(FlameTree *t)
{
        _cleanup_free_ size_t *fill = NULL;
        size_t pos = 0;

        t->children = calloc(MAX(t->n_nodes, (size_t)1), sizeof(uint32_t));
        fill = calloc(t->n_nodes, sizeof(size_t));
        if (!t->children || !fill)
                return -ENOMEM;
        for (size_t i = 1; i < t->n_nodes; i++)
                t->nodes[t->nodes[i].parent].n_children++;
        for (size_t i = 0; i < t->n_nodes; i++) {
                t->nodes[i].first_child = pos;
                pos += t->nodes[i].n_children;
        }
        for (size_t i = 1; i < t->n_nodes; i++) {
                FlameNode *p = &t->nodes[t->nodes[i].parent];
                t->children[p->first_child + fill[t->nodes[i].parent]++] = (uint32_t)i;
        }
        for (size_t i = 0; i < t->n_nodes; i++) {
                FlameNode *n = &t->nodes[i];
                uint64_t start = n->start;

                if (i > 0)
                        n->key = path_key(t, n);
                qsort_r(t->children + n->first_child, n->n_children, sizeof(uint32_t), compare_children, t);
                for (size_t c = 0; c < n->n_children; c++) {
                        FlameNode *k = &t->nodes[t->children[n->first_child + c]];
                        k->start = start;
                        start += k->inclusive;
                }
        }
        return 0;
}

int flame_tree_build(const StackTable *table, FlameTree **ret)
{
        _cleanup_(flame_tree_freep) FlameTree *t = calloc(1, sizeof(FlameTree));
        Builder b = { .tree = t };
        uint32_t root;
        int r;

        if (!t)
                return -ENOMEM;
        if (table->n_functions > INT32_MAX)
                return -E2BIG;
        if (table->other_samples > table->total_samples ||
            table->listed_samples > table->total_samples - table->other_samples)
                return -EINVAL;
        t->table = table;
        r = add_node(&b, 0, FLAME_NO_FUNCTION, FLAME_NODE_ROOT, &root);
        if (r < 0)
                return r;
        r = add_stacks(&b, table);
        if (r < 0)
                return r;
        r = add_unlisted(&b, FLAME_NODE_OTHER, table->other_samples);
        if (r >= 0)
                r = add_unlisted(&b, FLAME_NODE_LEFT_OUT,
                                 table->total_samples - table->other_samples - table->listed_samples);
        if (r < 0)
                return r;
        r = layout(t);
        if (r < 0)
                return r;
        t->total = t->nodes[0].inclusive;
        *ret = TAKE_PTR(t);
        return 0;
}
