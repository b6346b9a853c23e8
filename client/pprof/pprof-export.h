/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

/* The pprof profile of target (a PID or a group's spec, as the other calls take it) over the last window_usec
 * (0: since the attach): vprofd's GetProfile reply, checked, as a gzip-compressed profile.proto, which
 * go tool pprof, Parca and Pyroscope read. -EFBIG when the file would pass max_bytes (0: no bound). Bus errors as
 * the other bus_* calls: a negative errno, with *error filled when the daemon gave one (a reply that cannot be
 * parsed is -EBADMSG with error saying so). The caller frees *ret_data. sources: each Function also gets its file
 * and start line (Line.line the same: vprof keeps one line per function) from GetFunctionSources, which reads
 * the DWARF line tables of the functions' files once per function (Python functions have theirs already). */
int pprof_export(sd_bus *bus, const char *target, uint64_t window_usec, bool sources, size_t max_bytes,
                 sd_bus_error *error, void **ret_data, size_t *ret_size);
