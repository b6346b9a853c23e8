/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"
#include "vprof-abi.h"

/* Changes of a target's executable mappings, in the ring buffer in order with its samples (struct
 * vprof_maps_change, bpf/maps-change.bpf.h): each is made to the target's address space as it was at that point
 * of the ring, and its frame cache of user addresses dropped, so that the samples after it are named with the new
 * mappings and those before it were named with the old ones. /proc is read only for a file that no snapshot had
 * yet; the new maps reach the BPF walk at the next push (unwind-tables.h), right after the ring's read. */

typedef struct MapsChangeStats {
        uint64_t stale;         /* the maps read for a change already showed a later one */
        uint64_t samples_stale; /* samples of a generation older than their target's: named with later maps */
        uint64_t missed;        /* samples of a newer generation than the last record: maps read for them */
} MapsChangeStats;

/* c, a whole record of t: made to t's address space. True when it mapped code, whose table the caller looks for
 * at c->start (so that the push after the read has it). */
bool maps_change_apply(Target *t, const struct vprof_maps_change *c, MapsChangeStats *stats);

/* s, of t, carries another generation than t's last record: older, a record of before a change that came late
 * (an off-CPU interval), named with the later maps and counted; newer, a record lost for want of room in the ring
 * buffer: the maps are read for it. */
void maps_change_sample(Target *t, const struct vprof_sample *s, MapsChangeStats *stats);
