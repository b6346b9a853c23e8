/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

#include "hashmap.h"
#include "sampler.h"
#include "target.h"

/* The unwind tables the BPF program walks user stacks with, loaded lazily: a file's table is compiled
 * (unwinder.h, unwind-table.h) when a target's sample first falls back to the frame pointer in it, in slices
 * of a low-priority event source, and published in the sampler's arena (unwind-arena.h). One table per CFI,
 * known by the SHA-256 digest of the bytes it is compiled from (eh_frame_digest(); a file without CFI by its
 * device and inode), shared by every file of that CFI and every target that maps one: each target's
 * executable mappings, pushed to the BPF program, reference the tables, and a table that no mapping
 * references goes first when the arena is full; else the least recently walked one. A file without CFI, or
 * whose table failed or would take more than half the arena, is marked so, and its frames take the
 * frame-pointer step without asking again. */

typedef struct UnwindTablesStats {
        uint32_t tables;        /* loaded now */
        uint64_t bytes;         /* of the arena, used by them */
        uint64_t arena_bytes;   /* its size */
        uint64_t compiled;      /* tables compiled so far */
        uint64_t evicted;       /* tables evicted for room */
        uint64_t too_big;       /* files whose table would take more than half the arena */
        uint64_t failed;        /* files whose table could not be compiled (damaged CFI, out of memory) */
        uint64_t no_cfi;        /* files without call frame information */
        uint64_t build_usec;    /* spent compiling */
        uint64_t mappings_dropped; /* executable mappings past VPROF_MAX_MAPPINGS, not pushed */
        uint64_t prefetched;    /* files whose table was asked for at a target's start or when its maps were read
                                 * anew, before any sample fell back in them */
        uint64_t prefetch_unfinished; /* targets whose files' builds outlasted the attach's budget: finished in
                                       * the background, their first samples walked as they could be */
        uint64_t memory;        /* the daemon's own bytes (asked of malloc()): slots, maps, tables waiting for room;
                                 * the arena is kernel memory, outside the daemon's RSS */
} UnwindTablesStats;

typedef struct UnwindTables UnwindTables;

/* On the sampler's arena (sampler_unwind_arena_entries() > 0, else -EOPNOTSUPP); targets: the manager's running
 * ones, by PID, whose mappings it pushes; builds run on event. */
int unwind_tables_new(Sampler *sampler, sd_event *event, Hashmap *targets, UnwindTables **ret);
UnwindTables *unwind_tables_free(UnwindTables *u);
DEFINE_TRIVIAL_CLEANUP_FUNC(UnwindTables *, unwind_tables_free);

/* What a record's walk asks of the daemon: the frame at addr (its lookup address: a return address minus 1)
 * fell back for want of a table (0: none did), unknown_pc: a pc was outside the pushed mappings. Cheap when
 * the file is known already; the compile itself comes later. */
void unwind_tables_note(UnwindTables *u, Target *t, uint64_t addr, bool unknown_pc);
/* A new target, before its samples are kept: the tables of every file of code it maps are asked for and
 * compiled now, for at most 250 ms of CPU (then the rest in slices on the event loop, counted in
 * prefetch_unfinished), and its mappings pushed with them. The new files of a target whose maps were read
 * anew are asked for at the next sync and compiled in slices. */
void unwind_tables_prefetch(UnwindTables *u, Target *t);
/* Push the mappings of every running target whose maps were read anew or whose tables changed. After each
 * drain. */
void unwind_tables_sync(UnwindTables *u);
/* The target is detached or exited: its mappings no longer hold tables. */
void unwind_tables_forget(UnwindTables *u, pid_t pid);

void unwind_tables_get_stats(const UnwindTables *u, UnwindTablesStats *ret);
