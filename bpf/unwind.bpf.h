// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The walk of a user stack: the kernel's frame-pointer walk, or the walk by the unwind tables with its
 * frame-pointer step where they have no rule (docs/UNWINDING.md). Part of the one compilation unit of
 * vprof.bpf.c, which includes it after its maps (proc_mappings) and count(), and calls fp_user_stack() or
 * cfi_user_stack(); the tables' maps are here, as only the walk reads them. */

#pragma once

/* The unwind tables (common/vprof-abi.h): every table's index and rows in one array, which the daemon writes
 * through mmap(), and the descriptors. One flat array rather than a map per table: its lookups are inlined, and
 * one bound holds the memory of all. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __uint(max_entries, 1); /* UnwindTableMiB= × 128 Ki entries, set by the daemon before load */
        __type(key, __u32);
        __type(value, struct vprof_unwind_entry);
} unwind_arena SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __uint(max_entries, VPROF_UNWIND_TABLES_MAX);
        __type(key, __u32);
        __type(value, struct vprof_unwind_table);
} unwind_tables SEC(".maps");

/* The top of the user stack, for the daemon to unwind a leaf function without a frame pointer from. */
static __always_inline void capture_user_window(struct vprof_sample *s)
{
        s->window_words = 0;
        if (bpf_probe_read_user(s->user_window, sizeof(s->user_window), (void *)s->user_sp) == 0)
                s->window_words = VPROF_STACK_WINDOW_WORDS;
}

/* The kernel's walk gives at most perf_event_max_stack frames, 127 unless the administrator raised it: a stack
 * of that many is taken as cut. */
#define FP_USER_FRAMES 127

/* The user stack by the kernel's frame-pointer walk into frames[start...]; returns its depth. */
static __always_inline __u32 fp_user_stack(void *ctx, struct vprof_sample *s, __u32 start)
{
        long n = bpf_get_stack(ctx, &s->frames[start], FP_USER_FRAMES * sizeof(__u64), BPF_F_USER_STACK);
        __u32 depth;

        if (n < 0) {
                s->flags |= VPROF_SAMPLE_USER_STACK_ERROR;
                count(n == -14 /* EFAULT */ ? VPROF_STAT_USER_STACK_EFAULT : VPROF_STAT_USER_STACK_ERROR);
                return 0;
        }
        depth = (__u32)n / sizeof(__u64);
        if (depth >= FP_USER_FRAMES) {
                depth = FP_USER_FRAMES;
                s->flags |= VPROF_SAMPLE_USER_TRUNCATED;
                count(VPROF_STAT_USER_TRUNCATED);
        }
        capture_user_window(s);
        return depth;
}

#if defined(__TARGET_ARCH_x86)
/* The walk by the unwind tables: one bpf_loop() iteration per frame. Its rules are x86-64's (RA at CFA - 8, rbp
 * the frame pointer); elsewhere cfi_walk stays false. The verifier explores the callback until its states
 * converge, which shapes the code: positions come from the iteration number i; the context holds the registers
 * and the cached mapping, while the outcome, the flags and the depth go to the record, map memory whose values
 * the verifier does not follow (a counter in the context never converges); the searches take a constant number
 * of branch-free steps. */

struct walk {
        __u64 pc, sp, bp;
        __u64 regs;              /* the user registers (struct pt_regs *), for REG_LEAF at frame 0 */
        __u64 now;               /* for the tables' last_used_ns */
        struct vprof_sample *s;
        struct vprof_mappings *maps; /* NULL: none pushed for the process */
        /* The mapping of the previous frame, and its table's descriptor. */
        __u64 m_start, m_end, m_adj;
        __u32 m_flags;
        __u32 t_index_first, t_index_count, t_rows_first, t_rows_count; /* t_rows_count 0: no table */
        __u32 kdepth;            /* frames[kdepth + i] is user frame i */
        __u32 exact;             /* pc is an interrupted instruction (frame 0, after a signal frame) */
};

/* The mapping holding addr, found among the sorted mappings by a binary search of VPROF_MAX_MAPPINGS_LOG2
 * branch-free steps (the last one whose start <= addr), and its table's descriptor. false: no mapping. */
static __always_inline bool find_mapping(struct walk *w, __u64 addr)
{
        struct vprof_mappings *p = w->maps;
        struct vprof_unwind_table *t;
        struct vprof_mapping *m;
        __u32 base = 0, n, half, id;

        if (!p)
                return false;
        n = p->n;
        if (n == 0 || n > VPROF_MAX_MAPPINGS)
                return false;
        for (int k = 0; k < VPROF_MAX_MAPPINGS_LOG2; k++) {
                half = n >> 1; /* 0 once n is 1: the step changes nothing */
                /* User addresses are below 2^63: the sign bit of the difference says addr < start. */
                base += (__u32)(1 - ((addr - p->m[(base + half) & (VPROF_MAX_MAPPINGS - 1)].start) >> 63)) * half;
                n -= half;
        }
        m = &p->m[base & (VPROF_MAX_MAPPINGS - 1)];
        if (addr < m->start || addr >= m->end)
                return false;
        w->m_start = m->start;
        w->m_end = m->end;
        w->m_adj = m->adj;
        w->m_flags = m->flags;
        w->t_rows_count = 0;
        id = m->table;
        if (id == 0 || !(t = bpf_map_lookup_elem(&unwind_tables, &id)))
                return true;
        /* rows_count first: the daemon stores it last when it publishes, 0 when it retires the table, and
         * reuses a retired range only a second later, far longer than a walk. */
        w->t_rows_count = *(volatile __u32 *)&t->rows_count;
        /* The others after it: volatile too, which the compiler keeps in order, as x86 does. */
        w->t_index_first = *(volatile __u32 *)&t->index_first;
        w->t_index_count = *(volatile __u32 *)&t->index_count;
        w->t_rows_first = *(volatile __u32 *)&t->rows_first;
        if (w->t_rows_count && w->now - t->last_used_ns > 1000000000ull)
                t->last_used_ns = w->now;
        return true;
}

/* The rule in effect at off, an offset from the table's base: the index entry of off's span, then a binary
 * search among the rows of that span (at most 1024: ten branch-free steps) for the last row at or before off.
 * 0, a GAP, when the table does not cover off. */
static __always_inline __u32 find_rule(struct walk *w, __u64 off)
{
        struct vprof_unwind_entry *e;
        __u32 k, base, n, half, key;

        if ((off >> VPROF_UNWIND_INDEX_SPAN_SHIFT) >= w->t_index_count)
                return VPROF_UNWIND_GAP;
        key = w->t_index_first + (__u32)(off >> VPROF_UNWIND_INDEX_SPAN_SHIFT);
        e = bpf_map_lookup_elem(&unwind_arena, &key);
        if (!e)
                return VPROF_UNWIND_UNSUPPORTED;
        base = e->a;
        n = e->b - e->a + 1;
        for (k = 0; k < 10; k++) {
                half = n >> 1;
                key = w->t_rows_first + base + half;
                e = bpf_map_lookup_elem(&unwind_arena, &key);
                if (!e)
                        return VPROF_UNWIND_UNSUPPORTED;
                base += (__u32)(1 - ((off - e->a) >> 63)) * half;
                n -= half;
        }
        if (base >= w->t_rows_count)
                return VPROF_UNWIND_UNSUPPORTED;
        key = w->t_rows_first + base;
        e = bpf_map_lookup_elem(&unwind_arena, &key);
        if (!e)
                return VPROF_UNWIND_UNSUPPORTED;
        return e->a <= off ? e->b : VPROF_UNWIND_GAP; /* before the first row */
}

/* The caller by the frame pointer: the frame record {saved rbp, return address} at rbp. */
static __always_inline long fp_step(struct walk *w, __u32 i)
{
        __u64 fr[2];

        if (i == 0)
                w->s->walk_flags |= VPROF_WALK_LEAF_FP;
        if (w->bp == 0) {
                w->s->walk_end = VPROF_WALK_END_FP;
                return 1;
        }
        if (w->bp + 16 <= w->sp) {
                w->s->walk_end = VPROF_WALK_BAD;
                return 1;
        }
        if (bpf_probe_read_user(fr, sizeof(fr), (void *)w->bp)) {
                w->s->walk_end = VPROF_WALK_FAULT;
                return 1;
        }
        if (fr[1] == 0) {
                w->s->walk_end = VPROF_WALK_END_FP;
                return 1;
        }
        w->sp = w->bp + 16;
        w->bp = fr[0];
        w->pc = fr[1];
        w->exact = 0;
        return 0;
}

/* The word of struct pt_regs (r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di) of each DWARF register number
 * 0..15 (rax rdx rcx rbx rsi rdi rbp rsp r8..r15), a nibble each; rsp (7) never comes here, it is CFA_RSP. */
#define DWARF_TO_PT_REGS 0x0123678904ed5bcaull

static long unwind_step(__u32 i, void *ctx)
{
        struct walk *w = ctx;
        __u64 look, cfa, v[7];
        __u32 idx = w->kdepth + i, rule, kind;
        __s32 off, rbp_words;

        if (i >= VPROF_MAX_USER_FRAMES || idx >= VPROF_MAX_FRAMES)
                return 1;
        w->s->frames[idx] = w->pc | (w->exact && i > 0 ? VPROF_FRAME_EXACT : 0);
        w->s->user_depth = i + 1;

        /* A return address is the instruction after the call, which may be another function's first. */
        look = w->pc - (w->exact ? 0 : 1);
        if (look - w->m_start >= w->m_end - w->m_start && !find_mapping(w, look)) {
                w->s->walk_flags |= VPROF_WALK_UNKNOWN_PC;
                return fp_step(w, i);
        }
        if (w->t_rows_count == 0) {
                w->s->walk_flags |= VPROF_WALK_FELL_BACK;
                if (!(w->m_flags & VPROF_MAPPING_FP_ONLY) && w->s->fallback_frame == VPROF_NO_FRAME)
                        w->s->fallback_frame = i;
                return fp_step(w, i);
        }

        rule = find_rule(w, look - w->m_adj);
        kind = VPROF_UNWIND_RULE_KIND(rule);
        off = VPROF_UNWIND_RULE_OFF(rule);
        switch (kind) {
        case VPROF_UNWIND_CFA_RSP:
                cfa = w->sp + off;
                break;
        case VPROF_UNWIND_CFA_RBP:
                cfa = w->bp + off;
                break;
        case VPROF_UNWIND_DEREF_RSP:
        case VPROF_UNWIND_DEREF_RBP:
                if (bpf_probe_read_user(&v[0], sizeof(v[0]),
                                        (void *)((kind == VPROF_UNWIND_DEREF_RSP ? w->sp : w->bp) +
                                                 VPROF_UNWIND_RULE_DEREF_A(rule)))) {
                        w->s->walk_end = VPROF_WALK_FAULT;
                        return 1;
                }
                cfa = v[0] + VPROF_UNWIND_RULE_DEREF_B(rule);
                break;
        case VPROF_UNWIND_PLT:
                cfa = w->sp + 8 + ((look & 15) >= (__u64)off ? 8 : 0);
                break;
        case VPROF_UNWIND_SIGNAL:
                /* __restore_rt: rsp is at the ucontext, whose mcontext (at +40) holds rbp at +80, rsp at +120 and
                 * rip at +128: 7 words from rsp + 120. The next pc is the interrupted instruction. */
                if (bpf_probe_read_user(v, sizeof(v), (void *)(w->sp + 120))) {
                        w->s->walk_end = VPROF_WALK_FAULT;
                        return 1;
                }
                /* No progress check: on an alternate signal stack the interrupted rsp may be below. */
                w->bp = v[0];
                w->sp = v[5];
                w->pc = v[6];
                w->exact = 1;
                return 0;
        case VPROF_UNWIND_END:
                w->s->walk_end = VPROF_WALK_END;
                return 1;
        case VPROF_UNWIND_REG_LEAF:
                if (i == 0) {
                        __u64 word = (DWARF_TO_PT_REGS >> (VPROF_UNWIND_RULE_REG(rule) * 4)) & 0xf;

                        if (bpf_probe_read_kernel(&v[0], sizeof(v[0]), (void *)(w->regs + word * 8))) {
                                w->s->walk_flags |= VPROF_WALK_BAD_RULE;
                                return fp_step(w, i);
                        }
                        cfa = v[0] + off;
                        break;
                }
                /* Past the leaf the register is lost. */
                w->s->walk_flags |= VPROF_WALK_BAD_RULE;
                return fp_step(w, i);
        case VPROF_UNWIND_GAP:
                w->s->walk_flags |= VPROF_WALK_NO_ROW;
                return fp_step(w, i);
        default:
                w->s->walk_flags |= VPROF_WALK_BAD_RULE;
                return fp_step(w, i);
        }

        if (cfa <= w->sp) {
                w->s->walk_end = VPROF_WALK_BAD;
                return 1;
        }
        /* The return address at CFA - 8; rbp saved 8n bytes from the CFA or from rbp, or unchanged. Most
         * often it was pushed right below the return address: one read for both. */
        rbp_words = VPROF_UNWIND_RULE_RBP_WORDS(rule);
        if (!VPROF_UNWIND_RULE_RBP_FROM_RBP(rule) && rbp_words == -2) {
                if (bpf_probe_read_user(v, 16, (void *)(cfa - 16))) {
                        w->s->walk_end = VPROF_WALK_FAULT;
                        return 1;
                }
                w->bp = v[0];
        } else {
                if (bpf_probe_read_user(&v[1], 8, (void *)(cfa - 8))) {
                        w->s->walk_end = VPROF_WALK_FAULT;
                        return 1;
                }
                if ((VPROF_UNWIND_RULE_RBP_FROM_RBP(rule) || rbp_words != 0) &&
                    bpf_probe_read_user(&w->bp, 8,
                                        (void *)((VPROF_UNWIND_RULE_RBP_FROM_RBP(rule) ? w->bp : cfa) +
                                                 (__s64)rbp_words * 8))) {
                        w->s->walk_end = VPROF_WALK_FAULT;
                        return 1;
                }
        }
        if (v[1] == 0) {
                w->s->walk_end = VPROF_WALK_END;
                return 1;
        }
        w->pc = v[1];
        w->sp = cfa;
        w->exact = 0;
        return 0;
}

/* The user stack by the unwind tables into frames[start...]; returns its depth. Each walk is counted once by
 * how it ended, and once by each thing that happened on the way. */
static __always_inline __u32 cfi_user_stack(struct vprof_sample *s, struct pt_regs *regs, __u32 start,
                                            __u32 tgid)
{
        struct walk w = {
                .pc = PT_REGS_IP_CORE(regs),
                .sp = s->user_sp,
                .bp = s->user_bp,
                .regs = (__u64)regs,
                .now = s->time_ns,
                .s = s,
                .maps = bpf_map_lookup_elem(&proc_mappings, &tgid),
                .kdepth = s->kernel_depth, /* from memory: one state of the verifier for every kernel depth */
                .exact = 1,
        };
        __u32 depth, flags;

        s->user_depth = 0;
        s->walk_end = VPROF_WALK_DEPTH;
        bpf_loop(VPROF_MAX_USER_FRAMES, unwind_step, &w, 0);

        depth = s->user_depth;
        if (depth > VPROF_MAX_USER_FRAMES)
                depth = VPROF_MAX_USER_FRAMES;
        flags = s->walk_flags;
        if (!w.maps) /* the first pc was unknown, and so was every other */
                flags = (flags & ~VPROF_WALK_UNKNOWN_PC) | VPROF_WALK_NO_MAPPINGS;
        s->walk_flags = flags;
        count(VPROF_STAT_UNWIND_END + s->walk_end - VPROF_WALK_END);
        if (s->walk_end == VPROF_WALK_DEPTH) {
                s->flags |= VPROF_SAMPLE_USER_TRUNCATED;
                count(VPROF_STAT_USER_TRUNCATED);
        }
        if (flags) {
                if (flags & VPROF_WALK_FELL_BACK)
                        count(VPROF_STAT_UNWIND_FELL_BACK);
                if (flags & VPROF_WALK_NO_ROW)
                        count(VPROF_STAT_UNWIND_NO_ROW);
                if (flags & VPROF_WALK_BAD_RULE)
                        count(VPROF_STAT_UNWIND_BAD_RULE);
                if (flags & VPROF_WALK_UNKNOWN_PC)
                        count(VPROF_STAT_UNWIND_UNKNOWN_PC);
                if (flags & VPROF_WALK_NO_MAPPINGS)
                        count(VPROF_STAT_UNWIND_NO_MAPPINGS);
                /* The daemon puts back the callers that a frame-pointer step at the leaf skipped. */
                if (flags & VPROF_WALK_LEAF_FP)
                        capture_user_window(s);
        }
        return depth;
}
#else
static __always_inline __u32 cfi_user_stack(struct vprof_sample *s, struct pt_regs *regs, __u32 start,
                                            __u32 tgid)
{
        return 0;
}
#endif
