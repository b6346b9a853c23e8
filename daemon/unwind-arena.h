/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* Where the unwind tables go in the BPF arena (unwind-tables.h): ranges of entries, first fit, and table ids.
 * A BPF walk may still read a table for a short while after it is retired, so a released range or id is
 * reused only after a quarantine. Pure: the caller says what time it is. */

typedef struct UnwindArena UnwindArena;

/* size entries, ids 1 .. n_ids - 1; quarantine_usec before a released range or id is reused. */
int unwind_arena_new(uint32_t size, uint32_t n_ids, uint64_t quarantine_usec, UnwindArena **ret);
UnwindArena *unwind_arena_free(UnwindArena *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(UnwindArena *, unwind_arena_free);

/* n > 0 entries, the first free range that holds them: -ENOSPC when none does now, -ENOMEM. */
int unwind_arena_alloc(UnwindArena *a, uint32_t n, uint64_t now_usec, uint32_t *ret_first);
/* A range of unwind_arena_alloc(), free from now + the quarantine on. */
int unwind_arena_release(UnwindArena *a, uint32_t first, uint32_t n, uint64_t now_usec);
/* The lowest free id: -ENOSPC when every id is in use or in quarantine. */
int unwind_arena_alloc_id(UnwindArena *a, uint64_t now_usec, uint32_t *ret_id);
void unwind_arena_release_id(UnwindArena *a, uint32_t id, uint64_t now_usec);

uint32_t unwind_arena_size(const UnwindArena *a);
/* The bookkeeping's own bytes, in the daemon (the arena itself is the BPF map's). */
size_t unwind_arena_memory(const UnwindArena *a);
/* Entries allocated, and released but still in quarantine. */
uint32_t unwind_arena_used(const UnwindArena *a);
uint32_t unwind_arena_quarantined(const UnwindArena *a);
/* The largest range free now (quarantines over by now_usec count as free). */
uint32_t unwind_arena_largest_free(UnwindArena *a, uint64_t now_usec);
/* When the next quarantined range becomes free; 0 when none is in quarantine. */
uint64_t unwind_arena_next_release(const UnwindArena *a);
