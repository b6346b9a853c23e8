/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "diff-table.h"
#include "output.h"

/* vprofctl diff's output: a line per profile (what was compared), then the rows, at most limit (0: all), as a
 * table for people or JSON (flags). */
int output_diff(const DiffTable *t, size_t limit, OutputFlags flags);
