// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Changes of a target's executable mappings, in order with its samples (struct vprof_maps_change): the system
 * calls that make, unmap or re-protect executable memory bump the target's maps_generation and send a record in
 * the samples' ring buffer, so that the daemon names each sample with the mappings it was taken in, and a
 * library unloaded and another loaded at its address does not keep the first one's names and table. Part of the
 * one compilation unit of vprof.bpf.c, which includes it after its maps and helpers. Attached only while some
 * target runs (sampler_follow_maps()): every system call of the machine then costs a comparison of its number
 * (munmap, mprotect) or of its result and number (mmap with PROT_EXEC), and the bitmap word of its process for
 * those; a target, one VMA lookup per VMA of the range it touches (MAPS_CHANGE_MAX_VMAS at most). Not seen:
 * mremap(), pkey_mprotect(), shmat() and 32-bit system calls. */

#define VM_EXEC_FLAG 0x00000004ul /* the kernel's VM_EXEC */
#define PROT_EXEC_FLAG 0x4ul
#define ENOENT_ERRNO 2
/* VMAs looked at in one munmap() or mprotect() range: a library has four or five. A longer range is taken for a
 * change (as is a VMA lookup that could not take the lock): a record too many costs the daemon a change of its
 * snapshot; one too few, wrong names. More did not pass the verifier's complexity limit (16). */
#define MAPS_CHANGE_MAX_VMAS 8

struct vma_scan {
        __u64 next;     /* the end of the VMA found */
        __u64 offset;   /* of the VMA found, for an mmap() */
        __u64 inode;
        __u32 dev;
        bool exec;
};

static long vma_scan_one(struct task_struct *task, struct vm_area_struct *vma, struct vma_scan *v)
{
        struct file *file = vma->vm_file;

        v->next = vma->vm_end;
        v->exec = vma->vm_flags & VM_EXEC_FLAG;
        v->offset = vma->vm_pgoff << 12;
        v->inode = 0;
        v->dev = 0;
        if (file) {
                v->inode = BPF_CORE_READ(file, f_inode, i_ino);
                v->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
        }
        return 0;
}

enum {
        RANGE_EXEC = 1u << 0,    /* some VMA in the range is executable */
        RANGE_NO_EXEC = 1u << 1, /* some is not */
};

/* What the current process has mapped in [start, end): RANGE_* bits; both when it cannot tell. */
static __always_inline __u32 range_exec(__u64 start, __u64 end)
{
        struct task_struct *task = bpf_get_current_task_btf();
        struct vma_scan v = {};
        __u32 found = 0;
        __u64 addr = start;

#pragma clang loop unroll(disable)
        for (int i = 0; i < MAPS_CHANGE_MAX_VMAS; i++) {
                long r = bpf_find_vma(task, addr, vma_scan_one, &v, 0);

                if (r == -ENOENT_ERRNO) /* a hole: what follows it is not looked at */
                        return found;
                if (r < 0) /* -EBUSY: the lock is taken */
                        return RANGE_EXEC | RANGE_NO_EXEC;
                found |= v.exec ? RANGE_EXEC : RANGE_NO_EXEC;
                if (v.next >= end || v.next <= addr)
                        return found;
                addr = v.next;
        }
        return RANGE_EXEC | RANGE_NO_EXEC;
}

/* The walk must not take a table of what was in [start, end) for what comes there: the mappings of the range
 * lose their table until the daemon pushes the new ones, and a frame there takes the frame-pointer step, which
 * the daemon hears of (fallback_frame) as for any file without a table yet. */
struct drop_range {
        struct vprof_mappings *maps;
        __u64 start, end;
};

static long drop_one(__u32 i, struct drop_range *d)
{
        struct vprof_mapping *m;

        if (i >= VPROF_MAX_MAPPINGS)
                return 1;
        m = &d->maps->m[i];
        if (m->start >= d->end)
                return 1;
        if (m->end > d->start)
                m->table = 0;
        return 0;
}

static __always_inline void drop_tables(__u32 tgid, __u64 start, __u64 end)
{
        struct drop_range d = { .start = start, .end = end };
        __u32 n;

        if (!cfi_walk) /* a constant after load */
                return;
        d.maps = bpf_map_lookup_elem(&proc_mappings, &tgid);
        if (!d.maps)
                return;
        n = d.maps->n;
        if (n > VPROF_MAX_MAPPINGS)
                n = VPROF_MAX_MAPPINGS;
        bpf_loop(n, drop_one, &d, 0);
}

/* The record, in the ring buffer before the generation moves: a sample that carries the new generation comes
 * after it. A full ring loses the record, counted; the generation moves all the same. A sample taken on this CPU
 * between the two (the perf event's program interrupting this one) comes after the record too: it takes the new
 * generation from maps_change_pending (a stale sample, counted, otherwise). */
static __always_inline void maps_changed(__u32 tgid, __u32 tid, __u32 kind, __u64 start, __u64 end,
                                    const struct vma_scan *v, __u32 prot)
{
        struct vprof_target *target = bpf_map_lookup_elem(&targets, &tgid);
        struct maps_change_pending *pending;
        struct vprof_maps_change *c;
        __u32 zero = 0;

        if (!target)
                return;
        if (kind != VPROF_MAPS_EXEC)
                drop_tables(tgid, start, end);
        c = bpf_ringbuf_reserve(&samples, sizeof(*c), 0);
        if (!c) {
                __sync_fetch_and_add(&target->maps_generation, 1);
                count(VPROF_STAT_MAPS_CHANGES_LOST);
                return;
        }
        pending = bpf_map_lookup_elem(&maps_change_pending, &zero);
        if (pending) {
                pending->tgid = tgid;
                pending->generation = target->maps_generation + 1;
        }
        c->tgid = tgid;
        c->tid = tid;
        c->cpu = bpf_get_smp_processor_id();
        c->flags = VPROF_SAMPLE_MAPS_CHANGE;
        c->generation = __sync_fetch_and_add(&target->maps_generation, 1) + 1;
        if (pending)
                pending->generation = 0;
        c->kind = kind;
        c->time_ns = bpf_ktime_get_ns();
        c->start = start;
        c->end = end;
        c->offset = v ? v->offset : 0;
        c->inode = v ? v->inode : 0;
        c->dev = v ? v->dev : 0;
        c->prot = prot;
        count(VPROF_STAT_MAPS_CHANGES);
        /* New code at once: the daemon pushes its table to the walk after reading this. An unmapping waits for
         * the next wakeup: a library loaded and unloaded thousands of times a second would otherwise wake the
         * daemon as often. */
        bpf_ringbuf_submit(c, kind == VPROF_MAPS_MMAP ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
}

static __always_inline bool target_ids(__u32 *tgid, __u32 *tid)
{
        return current_ids(tgid, tid) && maybe_target(*tgid);
}

#define PAGE_ALIGN_UP(x) (((x) + 4095) & ~4095ull)
#define IS_ERR_ADDR(x) ((x) >= (unsigned long)-4095)

/* The system calls, by number: the raw tracepoints of every system call's entry and exit are the hooks that every
 * kernel has (Debian 12's 6.1 included) without tracefs, ftrace or syscall tracepoints configured; each costs
 * every other system call of the machine a comparison of its number. */
#if defined(__TARGET_ARCH_x86)
#define NR_MMAP 9
#define NR_MPROTECT 10
#define NR_MUNMAP 11
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define NR_MMAP 222
#define NR_MPROTECT 226
#define NR_MUNMAP 215
#define SYSCALL_NR(regs) BPF_CORE_READ((struct user_pt_regs___arm64 *)(regs), syscallno)
#else
#define NR_MMAP -1l
#define NR_MPROTECT -1l
#define NR_MUNMAP -1l
#define SYSCALL_NR(regs) -2l
#endif

/* A mapping with PROT_EXEC made: known at the exit only, where mmap() returns its address. */
static __noinline int mmap_exit(__u64 addr)
{
        struct vma_scan v = {};
        __u32 tgid, tid;

        if (!target_ids(&tgid, &tid))
                return 0;
        if (bpf_find_vma(bpf_get_current_task_btf(), addr, vma_scan_one, &v, 0) < 0 || !v.exec)
                return 0;
        maps_changed(tgid, tid, VPROF_MAPS_MMAP, addr, v.next, &v, PROT_EXEC_FLAG);
        return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(vprof_sys_exit, struct pt_regs *regs, long ret)
{
        if (ret < 0 && ret >= -4095) /* failed: most exits */
                return 0;
        if (SYSCALL_NR(regs) != NR_MMAP || !(PT_REGS_PARM3_CORE_SYSCALL(regs) & PROT_EXEC_FLAG))
                return 0;
        return mmap_exit((__u64)ret);
}

static __noinline int munmap_enter(__u64 start, __u64 len)
{
        __u64 end = start + PAGE_ALIGN_UP(len);
        __u32 tgid, tid;

        if (end <= start || !target_ids(&tgid, &tid))
                return 0;
        if (range_exec(start, end) & RANGE_EXEC)
                maps_changed(tgid, tid, VPROF_MAPS_MUNMAP, start, end, NULL, 0);
        return 0;
}

static __noinline int mprotect_enter(__u64 start, __u64 len, __u64 prot)
{
        __u64 end = start + PAGE_ALIGN_UP(len);
        __u32 tgid, tid, found;

        if (end <= start || !target_ids(&tgid, &tid))
                return 0;
        found = range_exec(start, end);
        /* Only a change of PROT_EXEC matters: relro's mprotect(PROT_READ) of data does not. */
        if (found & (prot & PROT_EXEC_FLAG ? RANGE_NO_EXEC : RANGE_EXEC))
                maps_changed(tgid, tid, VPROF_MAPS_MPROTECT, start, end, NULL, (__u32)prot);
        return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(vprof_sys_enter, struct pt_regs *regs, long id)
{
        if (id == NR_MUNMAP)
                return munmap_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs));
        if (id == NR_MPROTECT)
                return mprotect_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs),
                                      PT_REGS_PARM3_CORE_SYSCALL(regs));
        return 0;
}
