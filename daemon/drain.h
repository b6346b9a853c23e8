/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "drain-python.h"
#include "hashmap.h"
#include "maps-change.h"
#include "inline-cache.h"
#include "line-source.h"
#include "symbolizer.h"
#include "target.h"
#include "unwind-pending.h"
#include "unwind-self-check.h"
#include "vprof-abi.h"

/* Where a record of the ring buffer becomes counts: the record is checked, its target found, its user stack
 * completed from the CFI (unwinder.h), every frame named (symbolizer.h, address-space.h) through the
 * target's frame caches, and the stack counted in the target's tables (profile.h) and in its journal delta.
 * Nothing here knows of BPF, the bus or the manager: the sampler hands the records over, and a test can
 * feed its own. */

/* The records that counted in no table, and why. The bus shows them (manager_get_stats()). */
typedef struct DrainStats {
        uint64_t malformed;         /* shorter than their depths say, or deeper than the ABI allows */
        uint64_t samples_unclaimed; /* of no target: drained after their target was detached */
        uint64_t samples_failed;    /* not counted: out of memory */
        uint64_t off_cpu_unclaimed; /* intervals of no target */
        uint64_t off_cpu_failed_blocked; /* not counted: out of memory */
        uint64_t off_cpu_failed_preempted;
        uint64_t forks_malformed;   /* fork records shorter than struct vprof_fork (cannot happen) */
        uint64_t forks_lost;        /* fork records not kept for want of memory: their children no members */
        MapsChangeStats maps;       /* changes of executable mappings (maps-change.h) */
        UnwindPendingStats pending; /* samples that came with their stack, their walk finished here or not */
        uint64_t inline_expansions; /* new user addresses looked up in their file's DWARF for inlined functions */
        uint64_t inline_addresses;  /* of those, in inlined code: expanded into several frames */
        DrainPythonStats python;    /* the Python frames of the records (drain-python.h) */
} DrainStats;

/* A record whose user stack the BPF walk could not finish with the tables it had: addr is the lookup address
 * (a return address minus 1) of the first frame that took the frame-pointer step for want of a table, 0 when
 * none did; unknown_pc says that a pc was outside the mappings the walk was given. */
typedef void (*drain_unwind_fn)(void *userdata, Target *t, uint64_t addr, bool unknown_pc);

/* A record of a process that no target has, carrying a group (nonzero): a sample of a process in an attached
 * cgroup, or a fork of a target that follows its children (fork; NULL for a sample or an off-CPU interval).
 * Returns the target that the process now is, a member of the group, which counts the record; NULL when it is
 * none (refused, gone, or the group detached): the record counts as unclaimed. Called by drain_members(), after
 * the ring buffer's read, never inside it: making a target writes BPF maps and may detach others. */
typedef Target *(*drain_member_fn)(void *userdata, uint32_t group, uint32_t tgid, const struct vprof_fork *fork);

/* The records that wait for their process to be made a target (drain_members()), in the order they came. */
typedef struct DrainPending {
        uint8_t *data; /* records one after the other, each after its size (uint64_t), 8-byte aligned */
        size_t size, allocated;
        size_t sample_bytes; /* of data, samples' and stack copies' (bounded; forks are not) */
        Hashmap *pids;       /* the processes that have records here: their later ones wait too, in order */
} DrainPending;

typedef struct Drain {
        Hashmap *targets;       /* pid -> Target: whose records count; not owned */
        Symbolizer *symbolizer; /* kernel names, and a target's files after its exec(); not owned */
        drain_unwind_fn on_unwind; /* NULL: none asked (the unwind tables, unwind-tables.h) */
        void *unwind_userdata;
        drain_member_fn on_member; /* NULL: records of no target are unclaimed (the manager's groups) */
        void *member_userdata;
        DrainStats stats;
        /* PythonInterpreterFrames=: the evaluation loop's native frames stay below the Python frames they run,
         * rather than being replaced by them. */
        bool python_interpreter_frames;
        UnwindSelfCheck self_check; /* the stack copies' comparisons (UnwindSelfCheck=); idle without copies */
        DrainPending pending;
        /* The DWARF of the files whose inlined functions new addresses were looked up in (made on first use,
         * started over past DRAIN_INLINE_FILES_MAX files or half the symbol cache's budget of file bytes: the
         * names it gives are copied into the profiles). */
        LineReader *inline_reader;
        uint64_t inline_read_usec; /* CLOCK_MONOTONIC of its last lookup */
        /* What the DWARF said of each address, shared by the targets (inline-cache.h): made on first use. */
        InlineCache *inline_cache;
} Drain;

/* Addresses whose inlined functions are kept: about 100 bytes each. */
#define DRAIN_INLINE_CACHE_MAX 65536

#define DRAIN_INLINE_FILES_MAX 16

/* Frees the records still waiting. */
void drain_done(Drain *d);
/* The DWARF files of the inlined functions closed and what they said forgotten: no target runs any more. */
void drain_release_dwarf(Drain *d);
/* The DWARF files closed when no new address was looked up in them for DRAIN_INLINE_IDLE_USEC (what they said
 * stays cached): a profile past its warm-up sees few new addresses, and a debug file's DWARF is tens of MB. */
void drain_release_idle_dwarf(Drain *d, uint64_t now);

#define DRAIN_INLINE_IDLE_USEC (30 * UINT64_C(1000000))

/* One record as the ring buffer holds it: size bytes at data, 8-byte aligned, its struct vprof_record_header
 * saying which: a sample, an off-CPU interval, a stack copy of the unwind self-check or a fork (struct vprof_fork,
 * for on_member). Never fails: a record that is not counted is counted in d->stats (a stack copy, in
 * d->self_check). A record for on_member (a fork, a sample of a group's process that is no target yet), and every
 * later one of its process, is copied to wait for drain_members(); past DRAIN_PENDING_MAX bytes of samples
 * waiting, a sample counts as unclaimed. */
void drain_record(Drain *d, const void *data, size_t size);

/* What the ring buffer's read left waiting, after it: the members made (on_member), their records counted, in
 * the order they came. */
void drain_members(Drain *d);

#define DRAIN_PENDING_MAX ((size_t)16 << 20)

/* The part of drain_record() after the checks and the lookup: s, a well-formed record of t, symbolized and
 * counted. 0, or -ENOMEM: not counted. */
int drain_sample(Drain *d, Target *t, const struct vprof_sample *s);
