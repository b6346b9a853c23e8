/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one ABI shared by bpf/vprof.bpf.c and the daemon: fixed-width types only. */

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VPROF_MAX_USER_FRAMES 128
#define VPROF_MAX_KERNEL_FRAMES 127
#define VPROF_COMM_LEN 16
#define VPROF_MAX_TARGETS_DEFAULT 1024
#define VPROF_MAX_OFF_CPU_THREADS_DEFAULT 8192
/* Words of user stack copied from the stack pointer up, with every stack: enough for the daemon to find the
 * return address of a leaf function without a frame pointer from its CFI (a libc system call wrapper, a GCC
 * leaf function), which the frame-pointer walk of the kernel skips. */
#define VPROF_STACK_WINDOW_WORDS 16

#define VPROF_MAX_FRAMES (VPROF_MAX_KERNEL_FRAMES + VPROF_MAX_USER_FRAMES)

/* The first 16 bytes of every record in the ring buffer, whatever it is: the process and thread as the daemon sees
 * them, the CPU, and the flags, whose VPROF_RECORD_TYPE_MASK bits say which record follows (none: a struct
 * vprof_sample, a sample or an off-CPU interval). A reader looks at it before it knows the record's type. */
struct vprof_record_header {
        __u32 tgid;
        __u32 tid;
        __u32 cpu;
        __u32 flags; /* VPROF_SAMPLE_*, VPROF_FORK_* */
};

/* The header as the first member of a record, its fields the record's own too (s->tgid is s->header.tgid): the
 * kernel's struct_group(). */
#define VPROF_RECORD_HEADER                               \
        union {                                           \
                struct vprof_record_header header;        \
                struct {                                  \
                        __u32 tgid;                       \
                        __u32 tid;                        \
                        __u32 cpu;                        \
                        __u32 flags;                      \
                };                                        \
        }

/* Every record type: the header at 0, each field where the header has it. */
#define VPROF_ASSERT_RECORD(type)                                                                              \
        _Static_assert(__builtin_offsetof(type, header) == 0 && __builtin_offsetof(type, tgid) == 0 &&         \
                               __builtin_offsetof(type, tid) == 4 && __builtin_offsetof(type, cpu) == 8 &&     \
                               __builtin_offsetof(type, flags) == 12,                                          \
                       #type " begins with struct vprof_record_header")

_Static_assert(sizeof(struct vprof_record_header) == 16, "struct vprof_record_header is 16 bytes");

/* One record in the ring buffer per kept sample or off-CPU interval, cut after its last frame: a record is
 * VPROF_SAMPLE_SIZE(kernel_depth + user_depth) bytes, a few hundred for usual stacks instead of the 2 KiB
 * that room for the deepest ones takes. frames holds the kernel stack then the user stack, each innermost
 * first: frames[0] is the interrupted instruction (kernel or user), frames[kernel_depth] the interrupted user
 * instruction, or the one that entered the kernel. An off-CPU interval (VPROF_SAMPLE_OFF_CPU) has the user
 * stack only, taken when the thread left the CPU. */
struct vprof_sample {
        VPROF_RECORD_HEADER;  /* flags: VPROF_SAMPLE_*, no VPROF_RECORD_TYPE_MASK bit */
        __u64 period;         /* on the CPU: event count since the previous sample (ns for cpu-clock);
                               * off the CPU: nanoseconds off the CPU */
        __u64 time_ns;        /* bpf_ktime_get_ns() of the sample, or of leaving the CPU */
        __u16 kernel_depth;
        __u16 user_depth;
        __u16 window_words;   /* valid words in user_window: 0 when the stack could not be read */
        __u16 exec_count;     /* the target's execs so far (mod 2^16) when the record was made */
        /* The CFI walk (walk_end != VPROF_WALK_NONE): the first user frame (0 for frames[kernel_depth]) whose
         * module had no unwind table yet, which the daemon may then compile; VPROF_NO_FRAME for none. */
        __u16 fallback_frame;
        __u8 walk_end;        /* enum vprof_walk_end */
        __u8 walk_flags;      /* VPROF_WALK_* */
        __u32 group;          /* the group of the target (struct vprof_target), or of the attached cgroup that the
                               * process, not a target yet, is in (cgroup_targets); 0: none */
        char comm[VPROF_COMM_LEN];
        __u64 user_sp;        /* the user registers at the sample or at kernel entry */
        __u64 user_bp;
        __u64 user_window[VPROF_STACK_WINDOW_WORDS]; /* user stack at user_sp, upwards; with the CFI walk, only
                                                      * when frame 0 took the frame-pointer step */
        __u32 maps_generation; /* the target's mapping generation (struct vprof_target) when taken */
        __u16 python_depth;    /* words of Python frames after the user frames (VPROF_PYTHON_FRAME_TAG) */
        __u16 python_reserved; /* 0 */
        __u64 frames[VPROF_MAX_FRAMES];
};

#define VPROF_NO_FRAME 0xffff
/* A user frame after a signal frame is the interrupted instruction, not a return address: the daemon looks it up
 * as it is, not one byte earlier. User addresses never have this bit. */
#define VPROF_FRAME_EXACT (1ull << 63)

/* How the walk of a user stack by the unwind tables ended (bpf/unwind.bpf.h): every walk ends in exactly one. */
enum vprof_walk_end {
        VPROF_WALK_NONE,   /* no CFI walk: the kernel's frame-pointer walk, bpf_get_stack() (UnwindTableMiB=0) */
        VPROF_WALK_END,    /* an end marker (_start, clone) or a zero return address after a CFI step: complete */
        VPROF_WALK_END_FP, /* the frame pointer chain ended (rbp or the return address 0) */
        VPROF_WALK_DEPTH,  /* VPROF_MAX_USER_FRAMES frames and more to go */
        VPROF_WALK_FAULT,  /* a read of the stack failed */
        VPROF_WALK_BAD,    /* no progress: a caller's stack pointer not above the frame's */
        _VPROF_WALK_END_MAX,
};

/* What happened on the way, set once whatever the number of frames. */
enum {
        VPROF_WALK_FELL_BACK = 1u << 0,   /* a frame-pointer step for want of a table (module not compiled, JIT) */
        VPROF_WALK_NO_ROW = 1u << 1,      /* a frame-pointer step at a pc that its table does not cover */
        VPROF_WALK_BAD_RULE = 1u << 2,    /* a frame-pointer step at a rule the walk cannot apply */
        VPROF_WALK_UNKNOWN_PC = 1u << 3,  /* a pc outside every mapping the daemon pushed: dlopen(), a new map */
        VPROF_WALK_NO_MAPPINGS = 1u << 4, /* no mappings for the process (not pushed yet, or an exec()): FP walk */
        VPROF_WALK_LEAF_FP = 1u << 5,     /* frame 0 took the frame-pointer step: user_window is there */
};

/* The Python frames of a sample (docs/PYTHON.md), after its user frames: frames[kernel_depth + user_depth] on,
 * python_depth words, two a frame, innermost first as the thread's chain of interpreter frames has them. The
 * first word is VPROF_PYTHON_FRAME_TAG, the user frame (an index from frames[kernel_depth]) of the evaluation
 * loop's activation that runs the frame, and the code object's address; the second the instruction's offset
 * in the code's bytecode, in bytes. The tag's bits are set in no address of either half (non-canonical), and
 * VPROF_FRAME_EXACT is clear in it: a tagged word read as a native frame is recognized, never resolved. The
 * frames of a run share their native frame, the run of the next activation names the next evaluation-loop
 * frame. A run that did not fit (the record's room, VPROF_PYTHON_MAX_RUNS) is left out with what follows it,
 * and the record has VPROF_SAMPLE_PYTHON_TRUNCATED. */
#define VPROF_PYTHON_FRAME_TAG (0x50ull << 56)
#define VPROF_PYTHON_FRAME_TAG_MASK (0xffull << 56)
#define VPROF_PYTHON_FRAME_NATIVE_SHIFT 48
#define VPROF_PYTHON_FRAME_NATIVE_MASK (0xffull << VPROF_PYTHON_FRAME_NATIVE_SHIFT)
#define VPROF_PYTHON_FRAME_CODE_MASK ((1ull << VPROF_PYTHON_FRAME_NATIVE_SHIFT) - 1)
#define VPROF_PYTHON_FRAME_WORDS 2
/* Evaluation-loop activations on one stack whose Python frames a record holds at most. */
#define VPROF_PYTHON_MAX_RUNS 16

#define vprof_is_python_frame(word) (((word) & VPROF_PYTHON_FRAME_TAG_MASK) == VPROF_PYTHON_FRAME_TAG)

_Static_assert((VPROF_PYTHON_FRAME_TAG & VPROF_FRAME_EXACT) == 0 &&
                       (VPROF_PYTHON_FRAME_TAG_MASK & (VPROF_PYTHON_FRAME_NATIVE_MASK |
                                                       VPROF_PYTHON_FRAME_CODE_MASK)) == 0 &&
                       (VPROF_PYTHON_FRAME_NATIVE_MASK & VPROF_PYTHON_FRAME_CODE_MASK) == 0,
               "a Python frame's tag, native frame and code address do not overlap");
/* Not a user address (below 2^47, or 2^56 with 5-level paging) and not a kernel one (bits 63 to 47 all set). */
_Static_assert((VPROF_PYTHON_FRAME_TAG >> 56) != 0 && (VPROF_PYTHON_FRAME_TAG >> 63) == 0,
               "a Python frame's tag is no canonical address");
_Static_assert(VPROF_MAX_USER_FRAMES <= (VPROF_PYTHON_FRAME_NATIVE_MASK >> VPROF_PYTHON_FRAME_NATIVE_SHIFT) + 1,
               "every user frame's index fits in a Python frame's tag");

#define VPROF_SAMPLE_HEADER_SIZE __builtin_offsetof(struct vprof_sample, frames)
#define VPROF_SAMPLE_SIZE(n_frames) (VPROF_SAMPLE_HEADER_SIZE + (n_frames) * sizeof(__u64))

VPROF_ASSERT_RECORD(struct vprof_sample);
_Static_assert(VPROF_SAMPLE_HEADER_SIZE == 216 && sizeof(struct vprof_sample) == 216 + 8 * VPROF_MAX_FRAMES,
               "struct vprof_sample is 216 bytes and its frames");

enum {
        VPROF_SAMPLE_KERNEL_MODE = 1u << 0,     /* the CPU was executing kernel code for the target */
        VPROF_SAMPLE_USER_TRUNCATED = 1u << 1,  /* the user stack filled the buffer */
        VPROF_SAMPLE_KERNEL_TRUNCATED = 1u << 2,
        VPROF_SAMPLE_USER_STACK_ERROR = 1u << 3,
        VPROF_SAMPLE_KERNEL_STACK_ERROR = 1u << 4,
        VPROF_SAMPLE_OFF_CPU = 1u << 5,         /* an off-CPU interval of period ns, not a sample */
        VPROF_SAMPLE_PREEMPTED = 1u << 6,       /* off the CPU while runnable, not waiting */
        VPROF_SAMPLE_STACK_COPY = 1u << 7,      /* a struct vprof_stack_copy, not a struct vprof_sample */
        VPROF_SAMPLE_FORK = 1u << 8,            /* a struct vprof_fork, not a struct vprof_sample */
        VPROF_FORK_NOT_FOLLOWED = 1u << 9,      /* the fork's child is not in the targets map: it was full */
        VPROF_FORK_EXEC = 1u << 10,             /* not a fork: a process of an attached cgroup, no target, exec()ed
                                                 * (a service's main process started or restarted) */
        VPROF_SAMPLE_MAPS_CHANGE = 1u << 11,    /* a struct vprof_maps_change, not a struct vprof_sample */
        VPROF_SAMPLE_WITH_STACK = 1u << 12,     /* a struct vprof_sample_stack: a sample and its stack's top */
        VPROF_SAMPLE_PYTHON_TRUNCATED = 1u << 13, /* Python frames left out: no room (VPROF_PYTHON_FRAME_TAG) */
};

/* The flags that say which record a header begins: none, a struct vprof_sample. */
#define VPROF_RECORD_TYPE_MASK \
        (VPROF_SAMPLE_STACK_COPY | VPROF_SAMPLE_FORK | VPROF_SAMPLE_MAPS_CHANGE | VPROF_SAMPLE_WITH_STACK)

/* A target that follows its children (VPROF_TARGET_CHILDREN) forked a process: the BPF program put the child
 * in the targets map and the bitmap at once, with the parent's flags and group, so that its first samples are
 * kept, and tells the daemon, which makes the child a target (or takes it out again). The child starts as a
 * copy of its parent's address space. In its header, tgid is the child's, tid the task that forked, flags
 * VPROF_SAMPLE_FORK and VPROF_FORK_NOT_FOLLOWED. It comes before every record of the child's in the ring buffer. With VPROF_FORK_EXEC it tells of
 * an exec() in an attached cgroup instead (tgid, group; parent_tgid 0), so that a process that hardly runs, as a
 * service's main process, is a member before its first sample, and its forks are followed. */
struct vprof_fork {
        VPROF_RECORD_HEADER;
        __u32 parent_tgid;
        __u32 group;          /* the parent's group */
        __u64 start_ns;       /* the child's start_boottime: /proc/PID/stat's starttime is it in clock ticks */
        __u64 time_ns;        /* bpf_ktime_get_ns() of the fork */
};

VPROF_ASSERT_RECORD(struct vprof_fork);
_Static_assert(sizeof(struct vprof_fork) == 40, "struct vprof_fork is 40 bytes");

/* A target's executable mappings changed: a mapping with PROT_EXEC made (mmap), executable memory unmapped
 * (munmap) or its PROT_EXEC added or taken away (mprotect). The program bumps the target's maps_generation and
 * sends this record in the ring buffer, where it comes between the samples taken before the change and those
 * taken after, each of which carries the generation it was taken in. The daemon reads the mappings afresh here
 * and checks them against the record's, so that the samples after it are named with the new ones. The change is
 * seen on the way into the system call (munmap, mprotect) or out of it (mmap, whose address is known only
 * then): the thread that makes it is in the kernel meanwhile, and no code of the range may run. */
enum vprof_maps_change_kind {
        VPROF_MAPS_MMAP = 1,     /* [start, end) is the new executable mapping at the syscall's exit */
        VPROF_MAPS_MUNMAP = 2,   /* [start, end) is unmapped, and held executable memory */
        VPROF_MAPS_MPROTECT = 3, /* [start, end) gains or loses PROT_EXEC */
        VPROF_MAPS_EXEC = 4,     /* exec(): a new image (the daemon reads it with the exec_count of the samples) */
};

struct vprof_maps_change {
        VPROF_RECORD_HEADER;  /* flags: VPROF_SAMPLE_MAPS_CHANGE */
        __u32 generation;     /* the target's maps_generation from this change on */
        __u32 kind;           /* enum vprof_maps_change_kind */
        __u64 time_ns;        /* bpf_ktime_get_ns() of the change */
        __u64 start, end;     /* the range, [start, end) */
        __u64 offset;         /* VPROF_MAPS_MMAP: the file offset of start; else 0 */
        __u64 inode;          /* VPROF_MAPS_MMAP: the file's inode, 0 for anonymous memory */
        __u32 dev;            /* VPROF_MAPS_MMAP: the file's device, the kernel's dev_t (major << 20 | minor) */
        __u32 prot;           /* VPROF_MAPS_MPROTECT: the new protection; VPROF_MAPS_MMAP: 4 (PROT_EXEC) */
};

VPROF_ASSERT_RECORD(struct vprof_maps_change);
_Static_assert(sizeof(struct vprof_maps_change) == 72, "struct vprof_maps_change is 72 bytes");

/* The unwind self-check (UnwindSelfCheck=N, bpf: self_check_every): for 1 in N kept samples whose user stack the
 * unwind tables walked, a second record follows the sample's: the top of the user stack, the registers and the
 * walk's frames and outcome, for the daemon to unwind the same stack with its own CFI interpreter and compare
 * (daemon/unwind-self-check.h). Its header is the sample's, with VPROF_SAMPLE_STACK_COPY in the flags. The sample
 * itself is counted by its own record, once. */
#define VPROF_STACK_COPY_BYTES 16384

struct vprof_stack_copy {
        VPROF_RECORD_HEADER;  /* flags: VPROF_SAMPLE_STACK_COPY and the sample's flags */
        __u64 time_ns;        /* the sample's */
        __u64 user_sp;        /* the user registers the walk started from; frames[0] is the ip */
        __u64 user_bp;
        __u16 user_depth;     /* frames valid in frames[] */
        __u16 exec_count;     /* the sample's */
        __u16 stack_bytes;    /* bytes of stack valid, copied from user_sp up while readable: 0..16384 */
        __u8 walk_end;        /* the sample's enum vprof_walk_end */
        __u8 walk_flags;      /* and VPROF_WALK_* */
        __u64 frames[VPROF_MAX_USER_FRAMES]; /* the sample's user frames, as its record has them */
        __u8 stack[VPROF_STACK_COPY_BYTES];
};

VPROF_ASSERT_RECORD(struct vprof_stack_copy);
_Static_assert(sizeof(struct vprof_stack_copy) == 48 + 8 * VPROF_MAX_USER_FRAMES + VPROF_STACK_COPY_BYTES,
               "struct vprof_stack_copy is 48 bytes, its frames and its stack");

/* A kept sample whose walk took the frame-pointer step for want of a table that the daemon is about to give it
 * (a pc in a mapping whose table is not compiled or pushed yet, outside every mapping pushed, or in a process
 * whose mappings are not pushed yet: a library just dlopen()ed, a new image after an exec()): sent with the top of
 * its user stack instead of alone, for the daemon to finish its walk with its own CFI interpreter
 * (daemon/unwind-pending.h), which reads the file's CFI at once. Rate-bounded per CPU (VPROF_PENDING_COPY_*): past
 * the bound, and when the data waiting in the ring buffer would pass half of it, the sample goes alone as walked,
 * counted. The record is
 * counted once, as the sample it holds; its header is the sample's, with VPROF_SAMPLE_WITH_STACK in the flags. */
#define VPROF_PENDING_STACK_BYTES 8192 /* a deep chain of small frames: the rest of sp's page, then a page */
#define VPROF_PENDING_COPY_RATE 100  /* records a second on each CPU, in the long run */
#define VPROF_PENDING_COPY_BURST 128 /* and at most this many at once */

struct vprof_sample_stack {
        struct vprof_sample sample; /* whole: the frames after its depths are junk */
        __u16 stack_bytes;          /* bytes of stack valid, copied from sample.user_sp up: 0..8192 */
        __u16 reserved[3];          /* 0 */
        __u8 stack[VPROF_PENDING_STACK_BYTES];
};

_Static_assert(__builtin_offsetof(struct vprof_sample_stack, sample) == 0 &&
                       sizeof(struct vprof_sample_stack) == sizeof(struct vprof_sample) + 8 + VPROF_PENDING_STACK_BYTES,
               "struct vprof_sample_stack begins with the sample and its header");

/* Per-CPU outcome counters. Every run of the BPF program ends in exactly one of KEPT, DISCARDED, RING_FULL
 * and NO_BUFFER, so their sum is every sample seen: a separate "seen" counter could not be read together with
 * them while samples keep coming. The stack counters qualify kept samples. */
enum vprof_stat {
        VPROF_STAT_KEPT,
        VPROF_STAT_DISCARDED,        /* the CPU ran no target: dropped in the kernel by design (those that the
                                      * targets' bitmap drops are counted in discards, and added in) */
        VPROF_STAT_RING_FULL,        /* a target sample lost because the ring buffer was full */
        VPROF_STAT_NO_BUFFER,        /* a target sample lost for want of the scratch entry (cannot happen) */
        VPROF_STAT_USER_STACK_EFAULT,
        VPROF_STAT_USER_STACK_ERROR, /* any other bpf_get_stack() failure on the user stack */
        VPROF_STAT_KERNEL_STACK_ERROR,
        VPROF_STAT_USER_TRUNCATED,
        VPROF_STAT_KERNEL_TRUNCATED,
        /* Off-CPU intervals of targets that track them. Every switch-out of such a thread ends in
         * OFF_CPU_TRACKED or OFF_CPU_UNTRACKED; every tracked one ends, when the thread runs again, in
         * BLOCKED, PREEMPTED or RING_FULL. */
        VPROF_STAT_OFF_CPU_TRACKED,   /* switch-out recorded, the thread is waiting */
        VPROF_STAT_OFF_CPU_UNTRACKED, /* lost: the map of waiting threads was full */
        VPROF_STAT_OFF_CPU_BLOCKED,   /* handed to the daemon */
        VPROF_STAT_OFF_CPU_PREEMPTED,
        VPROF_STAT_OFF_CPU_RING_FULL, /* lost: the ring buffer was full when the thread came back */
        /* Walks of a user stack by the unwind tables, a kept sample's or a switch-out's: each ends in exactly one
         * of the five, in the order of enum vprof_walk_end; the qualifiers count walks with that VPROF_WALK_*
         * flag. The kernel's frame-pointer walk (UnwindTableMiB=0) counts none of them. */
        VPROF_STAT_UNWIND_END,
        VPROF_STAT_UNWIND_END_FP,
        VPROF_STAT_UNWIND_DEPTH,
        VPROF_STAT_UNWIND_FAULT,
        VPROF_STAT_UNWIND_BAD,
        VPROF_STAT_UNWIND_FELL_BACK,
        VPROF_STAT_UNWIND_NO_ROW,
        VPROF_STAT_UNWIND_BAD_RULE,
        VPROF_STAT_UNWIND_UNKNOWN_PC,
        VPROF_STAT_UNWIND_NO_MAPPINGS,
        /* Stack copies of the unwind self-check that the ring buffer had no room for (the sample was kept). */
        VPROF_STAT_SELF_CHECK_LOST,
        /* Kept samples of a process that was no target, but in an attached cgroup (one of KEPT too). */
        VPROF_STAT_CGROUP_MATCHED,
        /* Forks of targets that follow their children: followed (the child in the targets map, a struct
         * vprof_fork to the daemon), or not for want of room in the ring buffer (the child not followed). A
         * child that the targets map had no room for is followed only in its record (VPROF_FORK_NOT_FOLLOWED). */
        VPROF_STAT_FORKS_FOLLOWED,
        VPROF_STAT_FORKS_LOST,
        /* Changes of a target's executable mappings (struct vprof_maps_change): sent, or lost for want of room in
         * the ring buffer (the generation moved all the same: the daemon sees the gap in the next sample's). */
        VPROF_STAT_MAPS_CHANGES,
        VPROF_STAT_MAPS_CHANGES_LOST,
        /* Kept samples whose walk fell back for a table on its way (struct vprof_sample_stack): sent with their
         * stack (one of KEPT too), sent alone past the rate bound, sent alone for want of room for the copy (the
         * ring half full). */
        VPROF_STAT_PENDING_COPIED,
        VPROF_STAT_PENDING_OVER_RATE,
        VPROF_STAT_PENDING_NO_ROOM,
        /* Kept samples of a target with a CPython interpreter (python_procs) whose user stack passes through its
         * evaluation loop, by how the walk of the thread's interpreter frames ended (bpf/python.bpf.h), each in
         * one: the end of the chain, no thread state of the sampled thread, a frame failing a check (its code
         * object's type, a loop), a read fault, the frame limit; and the frames walked in all. */
        VPROF_STAT_PYTHON_WALKED,
        VPROF_STAT_PYTHON_NO_TSTATE,
        VPROF_STAT_PYTHON_BAD_FRAME,
        VPROF_STAT_PYTHON_FAULT,
        VPROF_STAT_PYTHON_DEPTH,
        VPROF_STAT_PYTHON_FRAMES,
        _VPROF_STAT_MAX,
};

/* A counter of one CPU, alone in its cache line (discards, bpf/vprof.bpf.c), and the CPU's copy of cgroup_levels:
 * the discard path reads it in the line it writes anyway. */
struct vprof_cpu_counter {
        __u64 n;
        __u64 cgroup_levels; /* written by the daemon, with the global of that name */
        __u64 reserved[6];
};

enum {
        VPROF_TARGET_OFF_CPU = 1u << 0,  /* also record the target's off-CPU intervals */
        VPROF_TARGET_CHILDREN = 1u << 1, /* the processes it forks become targets too (struct vprof_fork) */
};

/* Value of the targets map, keyed by tgid. */
struct vprof_target {
        __u64 flags;      /* VPROF_TARGET_* */
        __u32 exec_count; /* counted by the program: each record carries it, so the daemon sees exactly which
                           * records came after an exec(), whose addresses are the new image's */
        __u32 group;      /* the daemon's group of targets it belongs to, which its records carry; 0: none */
        __u32 maps_generation; /* counted by the program at each change of its executable mappings (struct
                                * vprof_maps_change), which each record carries */
        __u32 maps_reserved;   /* 0 */
};

/* Attached cgroups (cgroup_targets): by cgroup v2 id, the inode number of its directory, the group (nonzero)
 * whose members are the processes of the cgroup and of its descendants. The program finds a task's ancestor at
 * each level where some attached cgroup is (cgroup_levels, a bit per level, levels from the cgroup2 root, 0). */
#define VPROF_MAX_CGROUPS 256
#define VPROF_MAX_CGROUP_LEVEL 63

/* Compiled unwind tables (common/unwind/unwind-table.h builds them, bpf/ walks them; docs/UNWINDING.md).
 *
 * A table is the call frame information of one file reduced to rows sorted by address: from a row's pc_offset
 * (relative to the table's base, an ELF virtual address rounded down to VPROF_UNWIND_INDEX_SPAN) up to the next
 * row's, one rule says how to find the caller's frame. The same 8-byte entry also serves as the table's index:
 * entry k of the index covers the code [base + k * SPAN, base + (k + 1) * SPAN): a = the first row in effect
 * there, b = the last row that starts there, so that a search looks at the rows of one span only. */
struct vprof_unwind_entry {
        __u32 a; /* row: pc_offset; index: first row */
        __u32 b; /* row: rule (VPROF_UNWIND_RULE_*); index: last row */
};

#define VPROF_UNWIND_INDEX_SPAN_SHIFT 10
#define VPROF_UNWIND_INDEX_SPAN (1u << VPROF_UNWIND_INDEX_SPAN_SHIFT)
#define VPROF_UNWIND_MAX_ROWS (1u << 24)

/* A rule: bits 0..3 its kind; bits 4..11 where the caller's rbp was saved; bits 12..31 a signed 20-bit offset.
 * An all-zero rule is GAP, so zeroed memory reads as "no call frame information". The return address is always
 * at CFA - 8 except for SIGNAL and END. */
enum vprof_unwind_kind {
        VPROF_UNWIND_GAP = 0,         /* no FDE covers the address: the frame-pointer step */
        VPROF_UNWIND_CFA_RSP = 1,     /* CFA = rsp + off */
        VPROF_UNWIND_CFA_RBP = 2,     /* CFA = rbp + off (alloca, functions with a frame pointer) */
        VPROF_UNWIND_DEREF_RSP = 3,   /* CFA = *(rsp + deref_a) + deref_b */
        VPROF_UNWIND_DEREF_RBP = 4,   /* CFA = *(rbp + deref_a) + deref_b (stack realignment, DRAP) */
        VPROF_UNWIND_PLT = 5,         /* CFA = rsp + 8, + 8 more when (pc & 15) >= off (GCC's PLT entries) */
        VPROF_UNWIND_SIGNAL = 6,      /* a signal frame (__restore_rt): registers from the ucontext at rsp */
        VPROF_UNWIND_END = 7,         /* the return address is undefined (_start, clone, clone3): the end */
        VPROF_UNWIND_REG_LEAF = 8,    /* CFA = register + off, at the innermost frame only */
        VPROF_UNWIND_UNSUPPORTED = 9, /* anything else: the frame-pointer step, counted */
};

#define VPROF_UNWIND_RULE_KIND(r) ((r) & 0xfu)
/* The rbp field: bit 11 set means "relative to the current rbp", clear "relative to the CFA"; bits 4..10 a
 * signed count n of 8-byte words: rbp was saved at base + 8n. n = 0 relative to the CFA: rbp unchanged. For
 * REG_LEAF bits 4..7 are the DWARF register number. */
#define VPROF_UNWIND_RULE_RBP_FROM_RBP(r) (((r) >> 11) & 1u)
#define VPROF_UNWIND_RULE_RBP_WORDS(r) ((__s32)((r) << 21) >> 25)
#define VPROF_UNWIND_RULE_REG(r) (((r) >> 4) & 0xfu)
#define VPROF_UNWIND_RULE_OFF(r) ((__s32)(r) >> 12)
/* DEREF_*: bits 12..23 a signed byte offset a, bits 24..31 b / 8 (unsigned). */
#define VPROF_UNWIND_RULE_DEREF_A(r) ((__s32)((r) << 8) >> 20)
#define VPROF_UNWIND_RULE_DEREF_B(r) (((r) >> 24) * 8u)
#define VPROF_UNWIND_RULE(kind, rbp_field, off) \
        (((__u32)(kind) & 0xfu) | (((__u32)(rbp_field) & 0xffu) << 4) | ((__u32)(off) << 12))
#define VPROF_UNWIND_OFF_MIN (-(1 << 19))
#define VPROF_UNWIND_OFF_MAX ((1 << 19) - 1)

/* The tables in the BPF maps. unwind_arena: an array of struct vprof_unwind_entry (UnwindTableMiB=), each table
 * a contiguous range [index | rows] of it. unwind_tables: the descriptors, by table id (0: none). A descriptor is
 * published with rows_count stored last and retired by storing 0 there; the walk reads rows_count first and
 * takes 0 for "no table". */
#define VPROF_UNWIND_TABLES_MAX 4096
struct vprof_unwind_table {
        __u32 index_first;  /* arena entry of the index's first entry */
        __u32 index_count;
        __u32 rows_first;   /* arena entry of row 0, to which the index entries are relative */
        __u32 rows_count;   /* 0: no table */
        __u64 last_used_ns; /* bpf_ktime_get_ns() of a walk through the table, updated at most every second */
};

/* proc_mappings: by tgid, the executable mappings of a target, sorted by start, not overlapping. */
#define VPROF_MAX_MAPPINGS_LOG2 8
#define VPROF_MAX_MAPPINGS (1u << VPROF_MAX_MAPPINGS_LOG2)

enum {
        /* Frame-pointer steps by design: anonymous code (JIT), a file without call frame information or whose
         * table failed. Counted as fell back, never reported in fallback_frame. */
        VPROF_MAPPING_FP_ONLY = 1u << 0,
};

struct vprof_mapping {
        __u64 start, end; /* [start, end) */
        __u64 adj;        /* the mapping's load bias + its table's base: a row's pc_offset is pc - adj */
        __u32 table;      /* unwind_tables id, 0: none (yet) */
        __u32 flags;      /* VPROF_MAPPING_* */
};

struct vprof_mappings {
        __u32 n;          /* mappings in m */
        __u32 generation; /* the daemon's, for its own checks */
        struct vprof_mapping m[VPROF_MAX_MAPPINGS];
};

/* What the BPF walk needs of a target's CPython interpreter (issue 26, docs/PYTHON.md), one entry per process in
 * the map python_procs, keyed by tgid, pushed by the daemon (daemon/python-procs.c) and dropped with the target's
 * mappings. Addresses are the process's own (the file's plus its load bias); offsets are byte offsets of
 * common/python/python-layout.h, VPROF_PYTHON_NONE where the version has no such field. Only versions whose
 * frames are _PyInterpreterFrame chains (3.11 on) get an entry. */
#define VPROF_PYTHON_NONE 0xffffu
/* Every offset the walk adds to a pointer is below this: a bounded read whatever the daemon was told. */
#define VPROF_PYTHON_OFFSET_MAX 4096u

/* Python frames a walk follows at most, and thread states it looks through for the sampled thread's. */
#define VPROF_PYTHON_MAX_FRAMES 128
#define VPROF_PYTHON_MAX_THREADS 64

struct vprof_python_proc {
        __u64 eval_start, eval_end;           /* _PyEval_EvalFrameDefault: [start, end) */
        __u64 eval_cold_start, eval_cold_end; /* its .cold part; both 0 when none */
        __u64 runtime;                        /* _PyRuntime */
        __u64 code_type;                      /* PyCode_Type, for checking a code pointer; 0: unknown */
        __u32 version_hex;                    /* PY_VERSION_HEX */
        __u16 runtime_interpreters_head;
        __u16 interp_threads_head;
        __u16 tstate_next;
        __u16 tstate_native_thread_id;
        __u16 tstate_cframe;                  /* NONE from 3.13: current_frame is in the thread state */
        __u16 cframe_current_frame;
        __u16 frame_code;
        __u16 frame_previous;
        __u16 frame_instr;
        __u16 frame_is_entry;                 /* 3.11; NONE from 3.12 */
        __u16 frame_owner;
        __u16 object_type;
        __u16 code_bytecode;
        __u16 _pad;
};
_Static_assert(sizeof(struct vprof_python_proc) == 80, "python_procs value layout");
