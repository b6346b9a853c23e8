/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one ABI shared by bpf/vprof.bpf.c and the daemon: fixed-width types only. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VPROF_MAX_USER_FRAMES 127
#define VPROF_MAX_KERNEL_FRAMES 127
#define VPROF_COMM_LEN 16
#define VPROF_MAX_TARGETS_DEFAULT 1024

#define VPROF_MAX_FRAMES (VPROF_MAX_KERNEL_FRAMES + VPROF_MAX_USER_FRAMES)

/* One record in the ring buffer per kept sample, cut after its last frame: a record is
 * VPROF_SAMPLE_SIZE(kernel_depth + user_depth) bytes, a few hundred for usual stacks instead of the 2 KiB
 * that room for the deepest ones takes. frames holds the kernel stack then the user stack, each innermost
 * first: frames[0] is the interrupted instruction (kernel or user), frames[kernel_depth] the interrupted user
 * instruction, or the one that entered the kernel. */
struct vprof_sample {
        __u32 tgid;
        __u32 tid;
        __u32 cpu;
        __u32 flags;          /* VPROF_SAMPLE_* */
        __u64 period;         /* event count since the previous sample (ns for cpu-clock) */
        __u64 time_ns;        /* bpf_ktime_get_ns() */
        __u16 kernel_depth;
        __u16 user_depth;
        __u32 reserved;
        char comm[VPROF_COMM_LEN];
        __u64 frames[VPROF_MAX_FRAMES];
};

#define VPROF_SAMPLE_HEADER_SIZE __builtin_offsetof(struct vprof_sample, frames)
#define VPROF_SAMPLE_SIZE(n_frames) (VPROF_SAMPLE_HEADER_SIZE + (n_frames) * sizeof(__u64))

enum {
        VPROF_SAMPLE_KERNEL_MODE = 1u << 0,     /* the CPU was executing kernel code for the target */
        VPROF_SAMPLE_USER_TRUNCATED = 1u << 1,  /* the user stack filled the buffer */
        VPROF_SAMPLE_KERNEL_TRUNCATED = 1u << 2,
        VPROF_SAMPLE_USER_STACK_ERROR = 1u << 3,
        VPROF_SAMPLE_KERNEL_STACK_ERROR = 1u << 4,
};

/* Per-CPU outcome counters. Every run of the BPF program ends in exactly one of KEPT, DISCARDED, RING_FULL
 * and NO_BUFFER, so their sum is every sample seen: a separate "seen" counter could not be read together with
 * them while samples keep coming. The stack counters qualify kept samples. */
enum vprof_stat {
        VPROF_STAT_KEPT,
        VPROF_STAT_DISCARDED,        /* the CPU ran no target: dropped in the kernel by design */
        VPROF_STAT_RING_FULL,        /* a target sample lost because the ring buffer was full */
        VPROF_STAT_NO_BUFFER,        /* a target sample lost for want of the scratch entry (cannot happen) */
        VPROF_STAT_USER_STACK_EFAULT,
        VPROF_STAT_USER_STACK_ERROR, /* any other bpf_get_stack() failure on the user stack */
        VPROF_STAT_KERNEL_STACK_ERROR,
        VPROF_STAT_USER_TRUNCATED,
        VPROF_STAT_KERNEL_TRUNCATED,
        _VPROF_STAT_MAX,
};

/* Value of the targets map, keyed by tgid. */
struct vprof_target {
        __u64 flags; /* reserved for per-target options */
};
