/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "bus-client-stacks.h"
#include "macros.h"

/* A target's stacks merged into a tree of frames, one node per distinct call path: the root (every sample of
 * the window), its callers outermost, their callees below. Samples that are in no stack of the reply hang under
 * the root as nodes of their own, so that each node's width in samples is true against the window's total. */

typedef enum FlameNodeKind {
        FLAME_NODE_ROOT,
        FLAME_NODE_USER,
        FLAME_NODE_KERNEL,
        FLAME_NODE_OTHER,    /* samples past the daemon's per-target stack limit */
        FLAME_NODE_LEFT_OUT, /* samples of stacks too rare to fit in the daemon's reply */
} FlameNodeKind;

#define FLAME_NO_FUNCTION UINT32_MAX

typedef struct FlameNode {
        uint32_t function; /* into the StackTable's functions; FLAME_NO_FUNCTION for the root and the others */
        FlameNodeKind kind;
        uint32_t parent; /* the root is its own parent */
        uint32_t depth;  /* the root's is 0 */
        uint64_t inclusive; /* samples of the stacks through this path */
        uint64_t exclusive; /* those that end here */
        uint64_t start;     /* the samples left of it in the picture, its callers' siblings' first */
        uint64_t key;       /* a hash of the path, the same for the same path in another tree */
        size_t first_child; /* into FlameTree.children, n_children of them sorted by name */
        size_t n_children;
} FlameNode;

typedef struct FlameTree {
        const StackTable *table; /* borrowed: the names */
        FlameNode *nodes;        /* a parent before its children; nodes[0] the root */
        size_t n_nodes;
        uint32_t *children;
        uint32_t max_depth;
        uint64_t total; /* the root's inclusive: the window's total */
} FlameTree;

FlameTree *flame_tree_free(FlameTree *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(FlameTree *, flame_tree_free);

/* -E2BIG when the table has more functions or frames than a tree indexes (2^31). */
int flame_tree_build(const StackTable *table, FlameTree **ret);

/* The node's function name (or the label of the root and the other nodes) and module ("" for those). */
const char *flame_node_name(const FlameTree *t, const FlameNode *n);
const char *flame_node_module(const FlameTree *t, const FlameNode *n);

/* Percent of the window's total, as report computes them; 0 for an empty window. */
double flame_tree_percent(const FlameTree *t, uint64_t samples);
