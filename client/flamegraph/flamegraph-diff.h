/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "flamegraph-tree.h"
#include "macros.h"

/* A differential flame graph's colours (vprofctl diff --format svg): the new profile's tree drawn as it is,
 * widths its samples, each frame coloured by how its share of the samples changed against the same call path
 * (FlameNode.key) in the base tree, as flamegraph.pl's difffolded does: red where it grew, blue where it shrank,
 * the deeper the larger the change against the largest one, white where nothing changed. */
typedef struct FlameDiff FlameDiff;

int flame_diff_new(const FlameTree *new, const FlameTree *base, FlameDiff **ret);
FlameDiff *flame_diff_free(FlameDiff *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(FlameDiff *, flame_diff_free);

/* The node's share of the new samples minus its path's share of the base's, in points; the base's share. */
double flame_diff_points(const FlameDiff *d, const FlameNode *n, double *ret_base_percent);
/* Its colour, "hsl(...)", into buf. */
void flame_diff_colour(const FlameDiff *d, const FlameNode *n, char *buf, size_t size);
