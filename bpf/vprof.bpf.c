// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The sampler: runs on every perf_event sample of every CPU, keeps only samples of target processes and hands
 * them to the daemon through a ring buffer. Every outcome is counted in `stats`. */

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

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, VPROF_MAX_TARGETS_DEFAULT); /* resized by the daemon before load */
        __type(key, __u32);                             /* tgid */
        __type(value, struct vprof_target);
} targets SEC(".maps");

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

static __always_inline void count(__u32 stat)
{
        __u64 *v = bpf_map_lookup_elem(&stats, &stat);

        /* Per-CPU slot and this program does not nest on a CPU: no atomic needed. */
        if (v)
                *v += 1;
}

/* The user registers saved at kernel entry, and the top of the user stack: the daemon unwinds a leaf
 * function without a frame pointer from them. */
static __always_inline void capture_user_window(struct vprof_sample *s)
{
        struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

        s->user_sp = PT_REGS_SP_CORE(regs);
        s->user_bp = PT_REGS_FP_CORE(regs);
        s->window_words = 0;
        if (bpf_probe_read_user(s->user_window, sizeof(s->user_window), (void *)s->user_sp) == 0)
                s->window_words = VPROF_STACK_WINDOW_WORDS;
}

/* The user stack into frames[start...]; returns its depth. */
static __always_inline __u32 capture_user_stack(void *ctx, struct vprof_sample *s, __u32 start)
{
        long n = bpf_get_stack(ctx, &s->frames[start], VPROF_MAX_USER_FRAMES * sizeof(__u64), BPF_F_USER_STACK);
        __u32 depth;

        if (n < 0) {
                s->flags |= VPROF_SAMPLE_USER_STACK_ERROR;
                count(n == -14 /* EFAULT */ ? VPROF_STAT_USER_STACK_EFAULT : VPROF_STAT_USER_STACK_ERROR);
                return 0;
        }
        depth = (__u32)n / sizeof(__u64);
        if (depth >= VPROF_MAX_USER_FRAMES) {
                depth = VPROF_MAX_USER_FRAMES;
                s->flags |= VPROF_SAMPLE_USER_TRUNCATED;
                count(VPROF_STAT_USER_TRUNCATED);
        }
        capture_user_window(s);
        return depth;
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

SEC("perf_event")
int vprof_sample(struct bpf_perf_event_data *ctx)
{
        __u32 tgid, tid, zero = 0, kdepth = 0, udepth = 0;
        struct vprof_target *target;
        struct vprof_sample *s;
        long n;

        if (!current_ids(&tgid, &tid) || !(target = bpf_map_lookup_elem(&targets, &tgid))) {
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
        s->exec_count = (__u16)target->exec_count;
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
        udepth = capture_user_stack(ctx, s, kdepth);
        s->kernel_depth = kdepth;
        s->user_depth = udepth;

        if (bpf_ringbuf_output(&samples, s, VPROF_SAMPLE_SIZE(kdepth + udepth), wakeup_flag()) < 0) {
                count(VPROF_STAT_RING_FULL);
                return 0;
        }
        count(VPROF_STAT_KEPT);
        return 0;
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
        if (!current_ids(&tgid, &tid))
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
        bpf_get_current_comm(s->comm, sizeof(s->comm));
        s->user_depth = capture_user_stack(ctx, s, 0);

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
        if (target)
                __sync_fetch_and_add(&target->exec_count, 1);
        return 0;
}
