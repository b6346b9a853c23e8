/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include <systemd/sd-bus.h>

#include "report-table.h"

/* The function tables of every target, merged into one (top and report without a PID). */

/* Sampling counts (GetFunctions) for sort inclusive or exclusive, values (GetFunctionValues) for a values
 * key; the result is sorted by sort, whole. A target detached or exited between ListTargets and its call is
 * left out, as is one the caller may not read; the latter are counted in *ret_n_denied. window_usec as
 * TableQuery's. Logs its own
 * errors. */
int fetch_all_functions(sd_bus *bus, ProfileSort sort, uint64_t window_usec, ReportTable **ret,
                        size_t *ret_n_targets, size_t *ret_n_denied);

/* "2 targets", or "2 targets, 1 not permitted": the note of the total line. */
void format_targets_note(char *buf, size_t size, size_t n_targets, size_t n_denied);
