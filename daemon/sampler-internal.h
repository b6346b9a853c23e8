/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sampler's state, shared by sampler.c (events, programs, targets) and sampler-unwind.c (the unwind
 * tables' descriptors, arena and mappings). Not for use outside them. */

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "sampler.h"
#include "vprof-abi.h"

struct Sampler {
        struct vprof_bpf *skel;
        struct bpf_program *sample_prog; /* vprof_sample, or vprof_sample_pidns in a PID namespace */
        struct ring_buffer *ring;
        int *perf_fds;
        struct bpf_link **links;
        struct bpf_link *switch_link; /* off-CPU tracking, while attached */
        struct bpf_link *exec_link;   /* counts targets' exec() calls */
        struct bpf_link *maps_links[2]; /* changes of targets' executable mappings (bpf/maps-change.bpf.h) */
        bool maps_unsupported;          /* no bpf_find_vma(): those programs not loaded */
        struct bpf_link *fork_link;   /* follows the forks of targets that follow their children, while some do */
        uint64_t off_cpu_dropped;
        /* The unwind tables: n_arena entries (0: the walk is off), written through bpf_array_write() and never
         * kept mapped (32 MiB of RSS by default), and the descriptors through mmap(); arena_on once both are
         * there. */
        bool arena_on;
        uint32_t n_arena;
        const char *walk; /* the user stack walk in use, and why: a constant string for status */
        uint32_t self_check; /* 1 in N samples copied for the unwind self-check; 0: off */
        struct vprof_unwind_table *tables;
        struct vprof_mappings *mappings; /* what sampler_set_mappings() fills in for the map */
        /* target_bits through mmap(): bit tgid % 64 of word tgid / 64 set while tgid is in the targets map. */
        uint64_t *target_bits;
        uint32_t n_target_words;
        struct vprof_cpu_counter *discards; /* discards through mmap(), n_possible_cpus of them */
        /* Attached cgroups at each level from the cgroup2 root, whose bits make cgroup_levels; the level of the
         * root of the daemon's cgroup namespace, which its cgroup paths start from (-1: not known). */
        unsigned n_cgroups_at_level[VPROF_MAX_CGROUP_LEVEL + 1];
        int cgroup_root_level;
        unsigned n_events;
        SamplerEvent event;
        char reason[256];
        int n_possible_cpus;
};
