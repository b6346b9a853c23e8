/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "drain.h"
#include "vprof-abi.h"

/* Changes of a target's executable mappings, in the ring buffer in order with its samples (struct
 * vprof_maps_change, bpf/maps-change.bpf.h): at each, the target's maps are read afresh and its frame cache of user
 * addresses dropped, so that the samples after it are named with the new mappings and those before it were named
 * with the old ones. The new maps reach the BPF walk at the next push (unwind-tables.h), right after the read.
 * Counted in d->stats. */

/* A struct vprof_maps_change of size bytes; of no target, ignored. */
void maps_change_record(Drain *d, const struct vprof_maps_change *c, size_t size);

/* s, of t, carries another generation than t's last record: older, a record of before a change that came late
 * (an off-CPU interval), named with the later maps and counted; newer, a record lost for want of room in the ring
 * buffer: the maps are read for it. */
void maps_change_sample(Drain *d, Target *t, const struct vprof_sample *s);
