/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "bus-client-window.h"

/* A diff's base from a pprof file written earlier (vprofctl diff --base-pprof): the file's samples as the tables
 * of a window, made as vprofd makes them (docs/COUNTING.md: a function inclusive once per sample, exclusive in
 * the leaf), so that diff_tables() compares them with a window of today. Threads are matched by name. */

/* data: the file's bytes; errors as pprof_read()'s (client/pprof/pprof-read.h). */
int window_tables_from_pprof(const uint8_t *data, size_t size, WindowTables *ret);
/* The file at path, read (a regular file of at most 64 MiB: -EBADFD, -EFBIG otherwise). */
int window_tables_from_pprof_file(const char *path, WindowTables *ret);
