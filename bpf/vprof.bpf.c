// SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause)
/* The sampler: runs on every perf_event sample of every CPU, keeps only samples of target processes and hands
 * them to the daemon through a ring buffer. Every outcome is counted in `stats`. */

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "vprof-abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the daemon before load: wake it up only once this much data is waiting, so that a busy target does
 * not cost one wakeup per sample; a timer in the daemon drains the rest. */
const volatile __u64 wakeup_bytes = 0;

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

/* Where a record is built before it is copied, cut after its last frame, into the ring buffer. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct vprof_sample);
} scratch SEC(".maps");

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

SEC("perf_event")
int vprof_sample(struct bpf_perf_event_data *ctx)
{
        __u64 id = bpf_get_current_pid_tgid(), wakeup_flag;
        __u32 tgid = id >> 32, zero = 0, kdepth = 0, udepth = 0;
        struct vprof_sample *s;
        long n;

        if (!bpf_map_lookup_elem(&targets, &tgid)) {
                count(VPROF_STAT_DISCARDED);
                return 0;
        }

        s = bpf_map_lookup_elem(&scratch, &zero);
        if (!s) {
                count(VPROF_STAT_NO_BUFFER); /* a one-entry array always has entry 0; counted all the same */
                return 0;
        }

        s->tgid = tgid;
        s->tid = (__u32)id;
        s->cpu = bpf_get_smp_processor_id();
        s->flags = 0;
        s->period = ctx->sample_period;
        s->time_ns = bpf_ktime_get_ns();
        s->reserved = 0;
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
        n = bpf_get_stack(ctx, &s->frames[kdepth], VPROF_MAX_USER_FRAMES * sizeof(__u64), BPF_F_USER_STACK);
        if (n < 0) {
                s->flags |= VPROF_SAMPLE_USER_STACK_ERROR;
                count(n == -14 /* EFAULT */ ? VPROF_STAT_USER_STACK_EFAULT : VPROF_STAT_USER_STACK_ERROR);
        } else {
                udepth = (__u32)n / sizeof(__u64);
                if (udepth >= VPROF_MAX_USER_FRAMES) {
                        udepth = VPROF_MAX_USER_FRAMES;
                        s->flags |= VPROF_SAMPLE_USER_TRUNCATED;
                        count(VPROF_STAT_USER_TRUNCATED);
                }
        }
        s->kernel_depth = kdepth;
        s->user_depth = udepth;

        wakeup_flag = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                                        : BPF_RB_NO_WAKEUP;
        if (bpf_ringbuf_output(&samples, s, VPROF_SAMPLE_SIZE(kdepth + udepth), wakeup_flag) < 0) {
                count(VPROF_STAT_RING_FULL);
                return 0;
        }
        count(VPROF_STAT_KEPT);
        return 0;
}
