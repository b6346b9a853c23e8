/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "macros.h"

/* The symbols a JIT compiler writes for its code in /tmp/perf-PID.map, the format perf reads: one
 * "START SIZE name" line per function, START and SIZE in hex (with or without 0x), name to the end of the line.
 * Later lines win where code was replaced at the same start. */
typedef struct PerfMap PerfMap;

/* Lines that do not parse are skipped: the file is written while we read it, and the last line may be cut.
 * -ENOMEM, or a read error. */
int perf_map_parse(FILE *f, PerfMap **ret);
/* The file at path, read whole into memory first: a regular file of at most 256 MiB (-EFBIG); a symbolic
 * link, a FIFO or a device is not opened (-EBADFD). */
int perf_map_load(const char *path, PerfMap **ret);
/* The function holding addr and the offset into it; NULL when none. */
const char *perf_map_lookup(const PerfMap *m, uint64_t addr, uint64_t *ret_offset);
size_t perf_map_count(const PerfMap *m);
PerfMap *perf_map_free(PerfMap *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(PerfMap *, perf_map_free);
