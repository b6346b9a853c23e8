/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "vprof-abi.h"

/* The BPF side: the skeleton, one perf_event per online CPU and the ring buffer of samples. */

typedef enum SamplerEvent {
        SAMPLER_EVENT_AUTO,
        SAMPLER_EVENT_CYCLES,
        SAMPLER_EVENT_CPU_CLOCK,
        _SAMPLER_EVENT_MAX,
        _SAMPLER_EVENT_INVALID = -1,
} SamplerEvent;

const char *sampler_event_to_string(SamplerEvent e);
SamplerEvent sampler_event_from_string(const char *s);

typedef struct SamplerConfig {
        uint32_t frequency;  /* Hz per CPU */
        SamplerEvent event;
        size_t ring_size;    /* bytes, a power of two */
        uint32_t max_targets;
        uint32_t max_off_cpu_threads; /* target threads off the CPU at once, for off-CPU tracking */
        bool off_cpu_default;         /* Attach tracks off-CPU time unless told otherwise */
        bool python_interpreter_frames; /* the drain keeps the evaluation loop's frames (drain.h) */
        uint32_t unwind_table_mib;    /* the unwind tables' arena; 0: the kernel's frame-pointer walk */
        uint32_t unwind_self_check;   /* copy the user stack of 1 in N kept samples (struct vprof_stack_copy);
                                       * 0: never. Only with the unwind tables. */
} SamplerConfig;

/* Called for every record the ring buffer yields, size bytes at data (a record as the BPF program wrote it,
 * struct vprof_record_header first, unchecked: drain.h checks it); returns 0 to go on. libbpf's
 * ring_buffer_sample_fn. */
typedef int (*sampler_record_fn)(void *userdata, void *data, size_t size);

typedef struct Sampler Sampler;

int sampler_new(const SamplerConfig *config, sampler_record_fn fn, void *userdata, Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

SamplerEvent sampler_event(const Sampler *s);
const char *sampler_event_reason(const Sampler *s);
unsigned sampler_n_cpus(const Sampler *s);

/* flags: VPROF_TARGET_*. -EEXIST when present, -E2BIG when the targets map is full. Each sets or clears the
 * tgid's bit in the targets' bitmap with its entry in the map: every change of the targets goes through these two
 * (attach, detach, exit, restore; an exec() keeps the tgid). */
int sampler_add_target(Sampler *s, uint32_t tgid, uint64_t flags);
int sampler_remove_target(Sampler *s, uint32_t tgid);
/* tgid as a member of group (nonzero), whose records carry it: added as by sampler_add_target(), or, when the fork
 * program added it already (the child of a target with VPROF_TARGET_CHILDREN), left as it is. */
int sampler_add_member(Sampler *s, uint32_t tgid, uint64_t flags, uint32_t group);

/* Attach or detach the fork program, which makes the children of targets with VPROF_TARGET_CHILDREN targets as
 * they are forked (struct vprof_fork): on while some target has the flag, since it runs on every fork. */
int sampler_follow_forks(Sampler *s, bool on);

/* Attach or detach the programs that send the changes of targets' executable mappings in order with their
 * samples (bpf/maps-change.bpf.h): on while some target runs, since they run on every system call of the machine
 * (and put every task on the kernel's slower system-call path). */
int sampler_follow_maps(Sampler *s, bool on);

/* The samples of processes in cgroup id (cgroup-util.h) and below it, targets or not, are kept for group
 * (nonzero). level: the cgroup's in the daemon's paths (cgroup_path_level()), which the sampler takes from the
 * root of its cgroup namespace to the hierarchy's. -EEXIST when it is attached, -E2BIG when VPROF_MAX_CGROUPS
 * are, -ERANGE too deep, -EOPNOTSUPP when the daemon's cgroup namespace hides the levels (logged at start). */
int sampler_add_cgroup(Sampler *s, uint64_t id, unsigned level, uint32_t group);
int sampler_remove_cgroup(Sampler *s, uint64_t id, unsigned level);
/* The level from the cgroup2 root of the root of the daemon's cgroup namespace: 0 outside one; -1 when it could not
 * be found (no cgroup can be attached). */
int sampler_cgroup_root_level(const Sampler *s);

/* Attach or detach the context-switch program: on while some target tracks off-CPU time, since it runs on
 * every context switch of the machine. */
int sampler_track_off_cpu(Sampler *s, bool on);
bool sampler_tracks_off_cpu(const Sampler *s);
/* Off-CPU intervals still open when the program was detached (their targets had all gone), dropped. */
uint64_t sampler_off_cpu_dropped(const Sampler *s);

/* The fd that turns readable when the BPF program asks for a wakeup. */
int sampler_wakeup_fd(const Sampler *s);
/* Hand every waiting record to the callback; returns the number of records, or -errno. */
int sampler_drain(Sampler *s);
/* Counters summed over CPUs. Records still in the ring count as kept. */
int sampler_read_stats(const Sampler *s, uint64_t ret[_VPROF_STAT_MAX]);

/* The unwind tables the BPF program walks user stacks with (common/vprof-abi.h). All -EOPNOTSUPP when the walk
 * is off (unwind_table_mib 0, or not x86-64). */

/* Entries of the arena, 0 when the walk is off. */
uint32_t sampler_unwind_arena_entries(const Sampler *s);
/* The user stack walk in use and why, for status: "unwind tables", or "frame pointers (REASON)". */
const char *sampler_unwind_walk(const Sampler *s);
/* N of the self-check's 1 in N as loaded: 0 when it is off (unwind_self_check 0, or the walk off). */
uint32_t sampler_unwind_self_check(const Sampler *s);
/* Table id (1 .. VPROF_UNWIND_TABLES_MAX - 1) from now on: its index and rows copied to the arena at first, then
 * its descriptor published. The range and the id must be free: never published, or retired a second ago or more
 * (a walk may still read a retired table for a short while). -EINVAL on a bad id or an empty table, -ERANGE past
 * the arena's end, -EBUSY when the id is published. */
int sampler_publish_unwind_table(Sampler *s, uint32_t id, uint32_t first, const struct vprof_unwind_entry *index,
                                 uint32_t n_index, const struct vprof_unwind_entry *rows, uint32_t n_rows);
/* Walks no longer use table id: its frames take the frame-pointer step. */
int sampler_retire_unwind_table(Sampler *s, uint32_t id);
/* bpf_ktime_get_ns() of a walk through table id, to within a second; 0 when none went through it. */
uint64_t sampler_unwind_table_last_used(const Sampler *s, uint32_t id);
/* The executable mappings of target tgid, as the walk finds a pc's table: at most VPROF_MAX_MAPPINGS, sorted by
 * start, not overlapping, below 2^63 (no [vsyscall]; -EINVAL otherwise, -E2BIG for too many). Replaces those pushed before; generation is
 * the caller's. */
int sampler_set_mappings(Sampler *s, uint32_t tgid, const struct vprof_mapping *m, size_t n, uint32_t generation);
/* No mappings for tgid: its walks take frame-pointer steps only. 0 when it had none. */
int sampler_drop_mappings(Sampler *s, uint32_t tgid);

/* The target's CPython interpreter for the Python frame walk (python_procs in common/vprof-abi.h): replaced
 * whole; dropped by an exec() in BPF, and here when the daemon finds none in its maps any more or it leaves
 * (-ENOENT ignored). */
int sampler_set_python(Sampler *s, uint32_t tgid, const struct vprof_python_proc *p);
int sampler_drop_python(Sampler *s, uint32_t tgid);
