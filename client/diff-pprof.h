/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "bus-client-window.h"

/* One side of a diff as a pprof file (gzip-compressed profile.proto) at path, for
 * `go tool pprof -diff_base BASE NEW`: the window's stacks with their functions' names, one process named
 * target, no mappings or addresses (the names are the daemon's; pprof matches functions by them). */
int diff_write_pprof(const WindowTables *w, const char *target, const char *path);
