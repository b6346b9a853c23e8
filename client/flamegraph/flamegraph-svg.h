/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "flamegraph-buffer.h"
#include "flamegraph-tree.h"
#include "flamegraph.h"

/* Frames narrower than this share of the window's total (per mille) are not drawn: their samples stay in their
 * caller's width. */
#define FLAMEGRAPH_MIN_PER_MILLE 1

/* Writes the flame graph of tree t (of target's stacks) into b, as a standalone SVG document or an HTML page;
 * o as flamegraph_export() takes it (NULL: the defaults). The error is b's. */
void flamegraph_write(FlameBuffer *b, const FlameTree *t, const char *target, FlamegraphFormat format,
                      const FlamegraphOptions *o);

/* Whether node n is drawn. */
bool flamegraph_node_drawn(const FlameTree *t, const FlameNode *n);
