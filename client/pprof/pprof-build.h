/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "pprof-data.h"

/* The pure part of the pprof export: a profile.proto (perftools.profiles.Profile) from the decoded GetProfile
 * data, packed, not compressed. Sample types samples/count and cpu/nanoseconds (a sample is 1e9/frequency ns),
 * plus off-cpu/nanoseconds when d->off_cpu; one Mapping per module of each process, kernel code in one mapping
 * of its own ([kernel.kallsyms], spanning the kernel functions' addresses); one Location per (process, function),
 * leaf first in a sample, except that a run of inlined user frames and the frame they are inlined into are one
 * Location with a Line each, innermost first (pprof's rule: the last Line is the caller); one Function per
 * (module, name); labels pid, tid (when known), comm (the thread's name when known, else the process's) and unit.
 * comment names the producer. The frames' indices must be in range (pprof-export.c checks them): -EINVAL
 * otherwise. -ENOMEM. The caller frees *ret_data. */
int pprof_build(const PprofData *d, const char *comment, uint8_t **ret_data, size_t *ret_size);
