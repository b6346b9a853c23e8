// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The sampler: runs on every perf_event sample of every CPU, keeps only samples of target processes and hands
 * them to the daemon through a ring buffer. Every outcome is counted in `stats`, but the samples that the bitmap
 * discards, counted in `discards`. */

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "vprof-abi.h"

/* The kernel's name for the SPDX line's choice. The helpers called here (bpf_probe_read_user(), bpf_get_stack())
 * are GPL-only, so the string must be one the kernel counts as GPL-compatible, and LGPL is not among them. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the daemon before load: wake it up only once this much data is waiting, so that a busy target does
 * not cost one wakeup per sample; a timer in the daemon drains the rest. */
const volatile __u64 wakeup_bytes = 0;

/* The daemon's PID namespace (device and inode of /proc/self/ns/pid), when it is not the initial one (in a
 * container): targets are then keyed, and records carry IDs, as the daemon sees them. 0: host IDs. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/* Set by the daemon before load: walk user stacks with the unwind tables (UnwindTableMiB= > 0); false keeps the
 * kernel's frame-pointer walk, bpf_get_stack(), and the verifier drops the walk. */
const volatile bool cfi_walk = false;
/* Set by the daemon when the kernel has bpf_loop(): the walk of Python frames (python.bpf.h) steps with it; false,
 * the verifier drops its call unvisited. */
const volatile bool python_walk_on = false;

/* Set by the daemon before load, with cfi_walk only: the unwind self-check (UnwindSelfCheck=) copies the top of the
 * user stack for 1 in self_check_every kept samples. 0: off, and the verifier drops the copy. */
const volatile __u32 self_check_every = 0;

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, VPROF_MAX_TARGETS_DEFAULT); /* resized by the daemon before load */
        __type(key, __u32);                             /* tgid */
        __type(value, struct vprof_target);
} targets SEC(".maps");

/* The tgids of targets as a bitmap: bit tgid % 64 of word tgid / 64, set by the daemon (through mmap()) exactly
 * while tgid is a key of targets. The test that discards the sample of any other process (every sample of every
 * busy CPU that runs none) before anything else: an inlined lookup and one word, where the hash lookup costs a
 * call, a hash and the cache lines of its table. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __uint(max_entries, 1); /* pid_max / 64 rounded up, set by the daemon before load */
        __type(key, __u32);
        __type(value, __u64);
} target_bits SEC(".maps");

/* Attached cgroups (common/vprof-abi.h): by cgroup id, the group of the processes in it and below it. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, VPROF_MAX_CGROUPS);
        __type(key, __u64);   /* cgroup v2 id */
        __type(value, __u32); /* group */
} cgroup_targets SEC(".maps");

/* Written by the daemon through the skeleton's mmap() of .bss, after the entries of cgroup_targets come and
 * before they go: bit L set while some attached cgroup is at level L from the cgroup2 root. 0 exactly while no
 * cgroup is attached. The discard path reads each CPU's copy of it instead (struct vprof_cpu_counter), in the
 * cache line it writes anyway: a line more, cold after the millisecond between two samples, would cost more than
 * the rest of the path. */
__u64 cgroup_levels = 0;

/* Set by vprof_cgroup_level(): the level of the daemon's own cgroup, found from the kernel's side for a daemon
 * in a cgroup namespace (where its paths begin below the root); -1: not run, or not found. */
__s32 self_cgroup_level = -1;

/* Each target's executable mappings (common/vprof-abi.h), which the walk (unwind.bpf.h) searches and an exec()
 * drops. Replaced whole by the daemon: without preallocation an update is a new element and the old one is freed
 * after an RCU grace period, so a walk holding it reads one consistent array. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, VPROF_MAX_TARGETS_DEFAULT); /* resized by the daemon before load */
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, __u32); /* tgid, as in targets */
        __type(value, struct vprof_mappings);
} proc_mappings SEC(".maps");

/* Each target's CPython interpreter (common/vprof-abi.h), for the Python frame walk: pushed by the daemon when
 * its maps hold one it knows, dropped by an exec() (the new image's interpreter, if any, comes with its maps). */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, VPROF_MAX_TARGETS_DEFAULT); /* resized by the daemon before load */
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, __u32); /* tgid, as in targets */
        __type(value, struct vprof_python_proc);
} python_procs SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 16 << 20); /* resized by the daemon before load */
} samples SEC(".maps");

/* Where a record is built before it is copied, cut after its last frame, into the ring buffer. Entry 0 for
 * samples, entry 1 for switch-outs: a sample's NMI (hardware cycles) may interrupt a switch-out. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 2);
        __type(key, __u32);
        __type(value, struct vprof_sample);
} scratch SEC(".maps");

/* Target threads off the CPU, by host thread ID: the record that goes to the ring buffer when the thread runs
 * again. Allocated on use: memory follows the number of waiting target threads, not the limit. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, VPROF_MAX_OFF_CPU_THREADS_DEFAULT); /* resized by the daemon before load */
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, __u32);
        __type(value, struct vprof_sample);
} off_cpu SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, _VPROF_STAT_MAX);
        __type(key, __u32);
        __type(value, __u64);
} stats SEC(".maps");

/* VPROF_STAT_DISCARDED of the samples that the bitmap discards, a cache line per CPU (the only one a discarded
 * sample writes): where the per-CPU array's inlined lookup reads two lines, the array's pointers and the CPU's
 * value, this array's reads none, its values' address being a constant. mmap()able, which puts its values at
 * the start of a page, each counter at the start of a line; the daemon reads them there and adds them to
 * stats'. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __uint(max_entries, 1); /* the possible CPUs, set by the daemon before load */
        __type(key, __u32);
        __type(value, struct vprof_cpu_counter);
} discards SEC(".maps");

static __always_inline void count(__u32 stat)
{
        __u64 *v = bpf_map_lookup_elem(&stats, &stat);

        /* Per-CPU slot and this program does not nest on a CPU: no atomic needed. */
        if (v)
                *v += 1;
}

#include "unwind.bpf.h"
#include "python.bpf.h"

/* The user stack into frames[start...], with the registers at the sample or at kernel entry; returns its
 * depth. */
static __always_inline __u32 capture_user_stack(void *ctx, struct vprof_sample *s, __u32 start, __u32 tgid)
{
        struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

        s->user_sp = PT_REGS_SP_CORE(regs);
        s->user_bp = PT_REGS_FP_CORE(regs);
        s->window_words = 0;
        s->fallback_frame = VPROF_NO_FRAME;
        s->walk_end = VPROF_WALK_NONE;
        s->walk_flags = 0;
        if (cfi_walk) /* a constant after load: the verifier drops the other branch */
                return cfi_user_stack(s, regs, start, tgid);
        return fp_user_stack(ctx, s, start);
}

/* The current task's process and thread IDs as the daemon sees them; false when the task lives outside the
 * daemon's PID namespace, and so cannot be a target. */
static __always_inline bool current_ids(__u32 *tgid, __u32 *tid)
{
        struct bpf_pidns_info ns;
        __u64 id;

        if (!pidns_ino) { /* a constant after load: the verifier drops the other branch */
                id = bpf_get_current_pid_tgid();
                *tgid = id >> 32;
                *tid = (__u32)id;
                return true;
        }
        if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) < 0)
                return false;
        *tgid = ns.tgid;
        *tid = ns.pid;
        return true;
}

static __always_inline __u64 wakeup_flag(void)
{
        return bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                              : BPF_RB_NO_WAKEUP;
}

#define STACK_PAGE 4096

/* The top of the user stack from sp into dst (bytes, a constant multiple of the page), to the end of sp's page and
 * then whole pages while they fit and can be read (without faulting: the pages a thread runs on are present);
 * returns the bytes copied, 0 when none could be read. */
static __always_inline __u32 read_stack_top(__u8 *dst, __u64 sp, const __u32 bytes)
{
        __u32 n = STACK_PAGE - (sp & (STACK_PAGE - 1));

        if (bpf_probe_read_user(dst, n, (void *)sp))
                return 0;
        for (int k = 0; k < bytes / STACK_PAGE - 1; k++) {
                /* The bound for the verifier, kept: clang sees it always holds and turns the sum into an OR, whose
                 * range the verifier cannot tell. */
                __asm__ volatile("" : "+r"(n));
                if (n > bytes - STACK_PAGE || bpf_probe_read_user(dst + n, STACK_PAGE, (void *)(sp + n)))
                        break;
                n += STACK_PAGE;
        }
        return n;
}

/* The unwind self-check's record for the sample just kept: its walk (frames, registers, how it ended) and the top
 * of its user stack, to the end of the stack pointer's page and then whole pages while they fit and can be read
 * (without faulting: the pages a thread runs on are present). Straight into the ring buffer: a scratch copy would
 * take 17 KiB a CPU. A full ring loses the copy only, counted. Nothing of it is in the walk, which stays as it is
 * with the self-check off. */
static __always_inline void copy_user_stack(struct vprof_sample *s)
{
        __u32 kdepth = s->kernel_depth;
        struct vprof_stack_copy *c;
        __u64 sp = s->user_sp;

        c = bpf_ringbuf_reserve(&samples, sizeof(*c), 0);
        if (!c) {
                count(VPROF_STAT_SELF_CHECK_LOST);
                return;
        }
        c->tgid = s->tgid;
        c->tid = s->tid;
        c->cpu = s->cpu;
        c->flags = s->flags | VPROF_SAMPLE_STACK_COPY;
        c->time_ns = s->time_ns;
        c->user_sp = sp;
        c->user_bp = s->user_bp;
        c->user_depth = s->user_depth;
        c->exec_count = s->exec_count;
        c->walk_end = s->walk_end;
        c->walk_flags = s->walk_flags;
        if (kdepth > VPROF_MAX_KERNEL_FRAMES)
                kdepth = VPROF_MAX_KERNEL_FRAMES;
        /* The user frames and whatever follows them in the scratch record: frames[] has room for both. */
        if (bpf_probe_read_kernel(c->frames, sizeof(c->frames), &s->frames[kdepth]))
                c->user_depth = 0;

        c->stack_bytes = read_stack_top(c->stack, sp, sizeof(c->stack));
        bpf_ringbuf_submit(c, wakeup_flag());
}

/* Per CPU, the bound on samples sent with their stack (struct vprof_sample_stack): the time at which the bucket
 * is empty again (GCRA, one word), never more than VPROF_PENDING_COPY_BURST intervals ahead of now. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, __u64);
} pending_copy_bucket SEC(".maps");

/* The change of a target's executable mappings that this CPU is recording (maps-change.bpf.h), from its record's
 * reservation in the ring to its generation's move; generation 0 otherwise. The perf event's program may run
 * inside the system call's raw tracepoint program: its sample comes after the record in the ring, and takes the
 * record's generation (maps_sample_generation()). */
struct maps_change_pending {
        __u32 tgid;
        __u32 generation;
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct maps_change_pending);
} maps_change_pending SEC(".maps");

/* A sample's mapping generation: its target's, or that of the change it interrupted on this CPU. That sample's
 * user frames are the system call's callers, whose code the change does not move (they return into it). */
static __always_inline __u32 maps_sample_generation(const struct vprof_target *target, __u32 tgid)
{
        struct maps_change_pending *p;
        __u32 zero = 0, generation = target->maps_generation;

        p = bpf_map_lookup_elem(&maps_change_pending, &zero);
        if (p && p->generation && p->tgid == tgid && (__s32)(p->generation - generation) > 0)
                return p->generation;
        return generation;
}

#define PENDING_COPY_INTERVAL_NS (1000000000ull / VPROF_PENDING_COPY_RATE)

static __always_inline bool pending_copy_allowed(__u64 now)
{
        __u32 zero = 0;
        __u64 *tat = bpf_map_lookup_elem(&pending_copy_bucket, &zero), t;

        if (!tat)
                return false;
        t = *tat > now ? *tat : now;
        if (t - now > (VPROF_PENDING_COPY_BURST - 1) * PENDING_COPY_INTERVAL_NS)
                return false;
        *tat = t + PENDING_COPY_INTERVAL_NS;
        return true;
}

/* Whether the walk took the frame-pointer step for want of a table that the daemon is about to give it: a pc in a
 * mapping without its table yet (not FP_ONLY), outside every mapping pushed, or no mappings pushed at all. */
static __always_inline bool walk_awaits_table(const struct vprof_sample *s)
{
        return s->fallback_frame != VPROF_NO_FRAME ||
               (s->walk_flags & (VPROF_WALK_UNKNOWN_PC | VPROF_WALK_NO_MAPPINGS));
}

/* The sample with the top of its user stack (struct vprof_sample_stack), for the daemon to finish its walk; false
 * when the ring buffer has no room for it (counted), and the sample goes alone. Room means the data waiting stays
 * below half the ring: a burst of copies (10 KiB each, in a ring of 1 MiB at the default frequency) must never
 * crowd out the samples themselves. Each copy wakes the daemon, which frees its room at once; the rate bound
 * bounds those wakeups. */
static __noinline bool keep_with_stack(struct vprof_sample *s)
{
        struct vprof_sample_stack *c;

        if (bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) + sizeof(*c) >
            bpf_ringbuf_query(&samples, BPF_RB_RING_SIZE) / 2) {
                count(VPROF_STAT_PENDING_NO_ROOM);
                return false;
        }
        c = bpf_ringbuf_reserve(&samples, sizeof(*c), 0);
        if (!c) {
                count(VPROF_STAT_PENDING_NO_ROOM);
                return false;
        }
        /* Whole: the size must be a constant; what follows the frames is junk, which the daemon does not read. A
         * failure (it cannot, from the scratch map) counts as no room. */
        if (bpf_probe_read_kernel(&c->sample, sizeof(c->sample), s)) {
                bpf_ringbuf_discard(c, 0);
                count(VPROF_STAT_PENDING_NO_ROOM);
                return false;
        }
        c->sample.flags |= VPROF_SAMPLE_WITH_STACK;
        c->reserved[0] = c->reserved[1] = c->reserved[2] = 0;
        c->stack_bytes = read_stack_top(c->stack, s->user_sp, sizeof(c->stack));
        bpf_ringbuf_submit(c, BPF_RB_FORCE_WAKEUP);
        return true;
}

/* A sample of a process whose bit is set, or of one in an attached cgroup (group, nonzero): the target's record,
 * built in scratch and copied into the ring buffer. A function of its own, not inlined: the kernel gives a BPF
 * function whose stack passes 64 bytes a per-CPU stack of its own (cold memory to a discarded sample), so the
 * program that discards keeps its few bytes on the kernel's stack and only kept samples touch this one's. */
static __noinline int keep_sample(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid, __u32 group)
{
        __u32 zero = 0, kdepth = 0, udepth = 0, pdepth, words;
        struct vprof_target *target;
        struct vprof_sample *s;
        long n;

        target = bpf_map_lookup_elem(&targets, &tgid);
        if (!target && !group) {
                count(VPROF_STAT_DISCARDED);
                return 0;
        }

        s = bpf_map_lookup_elem(&scratch, &zero);
        if (!s) {
                count(VPROF_STAT_NO_BUFFER); /* a one-entry array always has entry 0; counted all the same */
                return 0;
        }

        s->tgid = tgid;
        s->tid = tid;
        s->cpu = bpf_get_smp_processor_id();
        s->flags = 0;
        s->period = ctx->sample_period;
        s->time_ns = bpf_ktime_get_ns();
        s->window_words = 0;
        /* A process of an attached cgroup that is no target yet: the daemon makes it one of the group's. */
        s->exec_count = target ? (__u16)target->exec_count : 0;
        s->group = target ? target->group : group;
        s->maps_generation = target ? maps_sample_generation(target, tgid) : 0;
        s->python_reserved = 0;
        bpf_get_current_comm(s->comm, sizeof(s->comm));
        /* The kernel callchain is empty exactly when the sample interrupted user code, which tells the mode
         * on every architecture (reading regs->cs would be x86 only). */
        n = bpf_get_stack(ctx, s->frames, VPROF_MAX_KERNEL_FRAMES * sizeof(__u64), 0);
        if (n < 0) {
                s->flags |= VPROF_SAMPLE_KERNEL_STACK_ERROR;
                count(VPROF_STAT_KERNEL_STACK_ERROR);
        } else {
                kdepth = (__u32)n / sizeof(__u64);
                if (kdepth > 0)
                        s->flags |= VPROF_SAMPLE_KERNEL_MODE;
                if (kdepth >= VPROF_MAX_KERNEL_FRAMES) {
                        kdepth = VPROF_MAX_KERNEL_FRAMES;
                        s->flags |= VPROF_SAMPLE_KERNEL_TRUNCATED;
                        count(VPROF_STAT_KERNEL_TRUNCATED);
                }
        }

        /* Right after the kernel frames. In kernel mode this walks the user registers saved at kernel entry. */
        s->kernel_depth = kdepth;
        udepth = capture_user_stack(ctx, s, kdepth, tgid);
        s->user_depth = udepth;
        /* From the record again, so that the walk's states do not differ by the kernel depth in a register. */
        kdepth = s->kernel_depth;
        if (kdepth > VPROF_MAX_KERNEL_FRAMES)
                kdepth = VPROF_MAX_KERNEL_FRAMES;
        s->python_depth = 0;
        words = kdepth + udepth;
        if (python_walk_on) {
                /* Words after the user frames, within frames[]: the record is cut after them. */
                pdepth = python_walk(s, tgid, tid, kdepth, words);
                s->python_depth = pdepth;
                words += pdepth;
                if (words > VPROF_MAX_FRAMES)
                        words = VPROF_MAX_FRAMES;
        }

        /* A constant after load: without the walk by the tables, one branch. Counted kept as any sample. */
        if (cfi_walk && walk_awaits_table(s)) {
                if (!pending_copy_allowed(s->time_ns))
                        count(VPROF_STAT_PENDING_OVER_RATE);
                else if (keep_with_stack(s)) {
                        count(VPROF_STAT_PENDING_COPIED);
                        goto kept;
                }
        }
        if (bpf_ringbuf_output(&samples, s, VPROF_SAMPLE_SIZE(words), wakeup_flag()) < 0) {
                count(VPROF_STAT_RING_FULL);
                return 0;
        }
kept:
        count(VPROF_STAT_KEPT);
        if (!target)
                count(VPROF_STAT_CGROUP_MATCHED);
        /* A constant after load, set with cfi_walk only: with the self-check off, one load and a branch. */
        if (self_check_every && bpf_get_prandom_u32() % self_check_every == 0)
                copy_user_stack(s);
        return 0;
}

/* Whether tgid may be a target: its bit, or past the bitmap (pid_max raised since the daemon started) the
 * targets map, which keep_sample() looks up in any case. */
static __always_inline bool maybe_target(__u32 tgid)
{
        __u32 word = tgid >> 6;
        __u64 *bits = bpf_map_lookup_elem(&target_bits, &word);

        return !bits || (*bits >> (tgid & 63)) & 1;
}

static __always_inline void count_discard(void)
{
        __u32 cpu = bpf_get_smp_processor_id(); /* inlined: a per-CPU variable's load */
        struct vprof_cpu_counter *c = bpf_map_lookup_elem(&discards, &cpu);

        /* The CPU's own counter, and the program does not nest on a CPU: no atomic needed. */
        if (c)
                c->n += 1;
        else
                count(VPROF_STAT_DISCARDED); /* cannot happen: the daemon sizes discards for every possible CPU */
}

/* The group of the attached cgroup that the current task is in or below, 0 for none: the task's ancestor at
 * each level where some attached cgroup is, looked up. Not unrolled: one iteration for each level up to the
 * deepest attached cgroup's. */
static __always_inline __u32 cgroup_group(__u64 levels)
{
#pragma clang loop unroll(disable)
        for (__u32 level = 0; level <= VPROF_MAX_CGROUP_LEVEL; level++) {
                __u32 *group;
                __u64 id;

                if (!(levels >> level))
                        break;
                if (!((levels >> level) & 1))
                        continue;
                id = bpf_get_current_ancestor_cgroup_id(level);
                if (!id) /* the task's cgroup is above that level */
                        break;
                group = bpf_map_lookup_elem(&cgroup_targets, &id);
                if (group)
                        return *group;
        }
        return 0;
}

/* The sample of a process that is no target while cgroups are attached: kept for the group of the cgroup it is
 * in, or discarded. Apart, so that the path without cgroups stays as it was. */
static __noinline int cgroup_sample(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid)
{
        __u32 group = cgroup_group(cgroup_levels);

        if (!group) {
                count_discard();
                return 0;
        }
        return keep_sample(ctx, tgid, tid, group);
}

/* The sample of process tgid: discarded and counted, or kept when tgid is a target (keep_sample() looks it up,
 * and counts a discard when there is none) or is in an attached cgroup. */
static __always_inline int sample(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid)
{
        __u32 cpu = bpf_get_smp_processor_id(); /* inlined: a per-CPU variable's load */
        struct vprof_cpu_counter *c;

        if (!maybe_target(tgid) && (c = bpf_map_lookup_elem(&discards, &cpu))) {
                /* Nonzero only while a cgroup is attached; in the counter's line. */
                if (c->cgroup_levels)
                        return cgroup_sample(ctx, tgid, tid);
                /* The CPU's own counter, and the program does not nest on a CPU: no atomic needed. */
                c->n += 1;
                return 0;
        }
        return keep_sample(ctx, tgid, tid, 0);
}

/* The program runs for every sample of every CPU and discards most: on that path the process IDs, the bitmap's
 * word and the CPU's counter (with its copy of cgroup_levels), nothing else (no setting read either: the daemon loads one of the two programs,
 * for host IDs or for those of its PID namespace). */
SEC("perf_event")
int vprof_sample(struct bpf_perf_event_data *ctx)
{
        __u64 id = bpf_get_current_pid_tgid();

        return sample(ctx, id >> 32, (__u32)id);
}

SEC("perf_event")
int vprof_sample_pidns(struct bpf_perf_event_data *ctx)
{
        __u32 tgid, tid;

        if (!current_ids(&tgid, &tid)) {
                count(VPROF_STAT_DISCARDED); /* a task outside the daemon's namespace */
                return 0;
        }
        return sample(ctx, tgid, tid);
}

/* Off-CPU time: when a thread of a target that asked for it leaves the CPU, keep its user stack and the time;
 * when it runs again, hand the interval to the daemon. Attached only while such a target exists, as every
 * context switch of the machine runs it. */

#define TASK_RUNNING 0
#define PF_EXITING 0x00000004

static __always_inline void switch_out(void *ctx, bool preempt, struct task_struct *prev)
{
        __u32 host_tid = prev->pid, tgid, tid, one = 1;
        struct vprof_target *target;
        struct vprof_sample *s;

        /* prev is still current here: the helpers see its IDs and its user stack. */
        if (!current_ids(&tgid, &tid) || !maybe_target(tgid))
                return;
        target = bpf_map_lookup_elem(&targets, &tgid);
        if (!target || !(target->flags & VPROF_TARGET_OFF_CPU))
                return;
        /* An exiting thread never comes back. */
        if (prev->flags & PF_EXITING)
                return;

        s = bpf_map_lookup_elem(&scratch, &one);
        if (!s) {
                count(VPROF_STAT_OFF_CPU_UNTRACKED);
                return;
        }
        s->tgid = tgid;
        s->tid = tid;
        s->cpu = bpf_get_smp_processor_id();
        /* Runnable and switched out (preempted, or yielding) is CPU contention; any other state is a wait. */
        s->flags = VPROF_SAMPLE_OFF_CPU |
                   (preempt || prev->__state == TASK_RUNNING ? VPROF_SAMPLE_PREEMPTED : 0);
        s->period = 0;
        s->time_ns = bpf_ktime_get_ns();
        s->kernel_depth = 0;
        s->window_words = 0;
        s->exec_count = (__u16)target->exec_count;
        s->group = target->group;
        s->maps_generation = target->maps_generation;
        s->python_depth = 0;
        s->python_reserved = 0;
        bpf_get_current_comm(s->comm, sizeof(s->comm));
        s->user_depth = capture_user_stack(ctx, s, 0, tgid);

        /* Keyed by the host thread ID: the switch-in has only the task, not the daemon's view of it. */
        if (bpf_map_update_elem(&off_cpu, &host_tid, s, BPF_ANY) < 0) {
                count(VPROF_STAT_OFF_CPU_UNTRACKED);
                return;
        }
        count(VPROF_STAT_OFF_CPU_TRACKED);
}

static __always_inline void switch_in(struct task_struct *next)
{
        __u32 tid = next->pid, udepth;
        struct vprof_sample *s;

        s = bpf_map_lookup_elem(&off_cpu, &tid);
        if (!s)
                return;
        s->period = bpf_ktime_get_ns() - s->time_ns;
        udepth = s->user_depth;
        if (udepth > VPROF_MAX_USER_FRAMES)
                udepth = VPROF_MAX_USER_FRAMES;
        if (bpf_ringbuf_output(&samples, s, VPROF_SAMPLE_SIZE(udepth), wakeup_flag()) < 0)
                count(VPROF_STAT_OFF_CPU_RING_FULL);
        else
                count(s->flags & VPROF_SAMPLE_PREEMPTED ? VPROF_STAT_OFF_CPU_PREEMPTED : VPROF_STAT_OFF_CPU_BLOCKED);
        bpf_map_delete_elem(&off_cpu, &tid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(vprof_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
        switch_out(ctx, preempt, prev);
        switch_in(next);
        return 0;
}

#include "maps-change.bpf.h"

/* A process of an attached cgroup that is no target exec()ed: the daemon hears of it, to make it a member before
 * its first sample. A full ring loses the news only: its samples make it a member later. */
static __noinline void cgroup_exec(__u32 tgid, __u32 tid)
{
        __u32 group = cgroup_group(cgroup_levels);
        struct vprof_fork *f;

        if (!group)
                return;
        f = bpf_ringbuf_reserve(&samples, sizeof(*f), 0);
        if (!f)
                return;
        f->tgid = tgid;
        f->tid = tid;
        f->cpu = bpf_get_smp_processor_id();
        f->flags = VPROF_SAMPLE_FORK | VPROF_FORK_EXEC;
        f->parent_tgid = 0;
        f->group = group;
        f->start_ns = 0;
        f->time_ns = bpf_ktime_get_ns();
        bpf_ringbuf_submit(f, wakeup_flag());
}

/* A target that calls exec() gets a new image at new addresses: count it, so that the daemon resolves each record
 * with the image it was taken in. Runs once per exec() on the machine. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(vprof_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
        __u32 tgid, tid;
        struct vprof_target *target;

        /* The exec()ing task is current, and already the process's leader. */
        if (!current_ids(&tgid, &tid))
                return 0;
        target = bpf_map_lookup_elem(&targets, &tgid);
        if (!target) {
                if (cgroup_levels) /* a global's load: 0 while no cgroup is attached */
                        cgroup_exec(tgid, tid);
                return 0;
        }
        __sync_fetch_and_add(&target->exec_count, 1);
        /* The old image's mappings must not unwind the new one: frame pointers only until the daemon pushes
         * the new mappings. */
        if (cfi_walk)
                bpf_map_delete_elem(&proc_mappings, &tgid);
        bpf_map_delete_elem(&python_procs, &tgid);
        maps_changed(tgid, tid, VPROF_MAPS_EXEC, 0, 0, NULL, 0);
        return 0;
}

/* The ID of a new process as the daemon sees it: the host's, or its number in the daemon's PID namespace, from
 * its struct pid (the helper that translates knows the current task only). false when it has none there. */
static __always_inline bool task_tgid(struct task_struct *task, __u32 *ret)
{
        struct pid *pid;
        unsigned int level;

        if (!pidns_ino) { /* a constant after load */
                *ret = task->tgid;
                return true;
        }
        pid = BPF_CORE_READ(task, thread_pid); /* the leader's: the task is a new process */
        level = BPF_CORE_READ(pid, level);
        for (unsigned int i = 0; i < 32 /* MAX_PID_NS_LEVEL */ && i <= level; i++) {
                struct upid upid;

                if (bpf_core_read(&upid, sizeof(upid), &pid->numbers[i]))
                        return false;
                if (BPF_CORE_READ(upid.ns, ns.inum) == pidns_ino) {
                        *ret = upid.nr;
                        return true;
                }
        }
        return false;
}

/* A target that follows its children forked a process (not a thread): the child becomes a target at once, in
 * the map and the bitmap, with its parent's flags and group, and the daemon hears of it before any of its
 * records. Attached only while some target follows its children, as it runs for every fork of the machine. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(vprof_fork, struct task_struct *parent, struct task_struct *child)
{
        struct vprof_target *target, value = {};
        __u32 tgid, tid, child_tgid, word;
        struct vprof_fork *f;
        __u64 *bits;

        if (child->pid != child->tgid) /* a new thread */
                return 0;
        /* The parent is current. */
        if (!current_ids(&tgid, &tid) || !maybe_target(tgid))
                return 0;
        target = bpf_map_lookup_elem(&targets, &tgid);
        if (!target || !(target->flags & VPROF_TARGET_CHILDREN) || !task_tgid(child, &child_tgid))
                return 0;

        /* The record first: without room for it the daemon would never hear of the child. */
        f = bpf_ringbuf_reserve(&samples, sizeof(*f), 0);
        if (!f) {
                count(VPROF_STAT_FORKS_LOST);
                return 0;
        }
        f->tgid = child_tgid;
        f->tid = tid;
        f->cpu = bpf_get_smp_processor_id();
        f->flags = VPROF_SAMPLE_FORK;
        f->parent_tgid = tgid;
        f->group = target->group;
        f->start_ns = child->start_boottime;
        f->time_ns = bpf_ktime_get_ns();
        value.flags = target->flags;
        value.group = target->group;
        /* Any entry there is a process gone with that PID that the daemon has not seen exit yet. The child runs
         * only after this program: its first sample finds both. */
        if (bpf_map_update_elem(&targets, &child_tgid, &value, BPF_ANY) < 0)
                f->flags |= VPROF_FORK_NOT_FOLLOWED;
        else {
                word = child_tgid >> 6;
                bits = bpf_map_lookup_elem(&target_bits, &word);
                if (bits)
                        __sync_fetch_and_or(bits, 1ull << (child_tgid & 63));
                count(VPROF_STAT_FORKS_FOLLOWED);
        }
        bpf_ringbuf_submit(f, wakeup_flag());
        return 0;
}

/* The level of the daemon's cgroup, for a daemon in a cgroup namespace: run once by the daemon, as itself
 * (BPF_PROG_RUN), and loaded only then. */
SEC("syscall")
int vprof_cgroup_level(void *ctx)
{
        __u64 self = bpf_get_current_cgroup_id();

        for (__u32 level = 0; level <= VPROF_MAX_CGROUP_LEVEL; level++)
                if (bpf_get_current_ancestor_cgroup_id(level) == self) {
                        self_cgroup_level = level;
                        break;
                }
        return 0;
}
