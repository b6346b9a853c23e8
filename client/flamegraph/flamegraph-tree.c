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
        Hashmap *index; /* (parent, function, kernel) -> node index + 1 */
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

/* The child of parent for the frame, made on first sight. */
static int child(Builder *b, uint32_t parent, uint32_t function, bool kernel, uint32_t *ret)
{
        uint64_t key = (uint64_t)parent << 32 | (uint64_t)function << 1 | kernel;
        void *v = hashmap_get(b->index, UINT64_TO_PTR(key));
        int r;

        if (v) {
                *ret = (uint32_t)(PTR_TO_UINT64(v) - 1);
                return 0;
        }
        r = add_node(b, parent, function, kernel ? FLAME_NODE_KERNEL : FLAME_NODE_USER, ret);
        if (r < 0)
                return r;
        return hashmap_put(b->index, UINT64_TO_PTR(key), UINT64_TO_PTR((uint64_t)*ret + 1));
}

static int add_stack(Builder *b, const StackEntry *s)
{
        uint32_t node = 0;
        int r;

        b->tree->nodes[0].inclusive += s->samples;
        for (size_t i = 0; i < s->n_frames; i++) {
                r = child(b, node, s->frames[i], stack_entry_is_kernel(s, i), &node);
                if (r < 0)
                        return r;
                b->tree->nodes[node].inclusive += s->samples;
        }
        b->tree->nodes[node].exclusive += s->samples;
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
        _cleanup_(hashmap_freep) Hashmap *index = hashmap_new(&uint64_hash_ops);
        Builder b = { .tree = t, .index = index };
        uint32_t root;
        int r;

        if (!t || !index)
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
        for (size_t i = 0; i < table->n_stacks; i++) {
                r = add_stack(&b, &table->stacks[i]);
                if (r < 0)
                        return r;
        }
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
