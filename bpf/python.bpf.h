// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The walk of a thread's CPython frames (issue 26, docs/PYTHON.md), for a target whose interpreter the daemon
 * pushed into python_procs (common/vprof-abi.h). Part of the one compilation unit of vprof.bpf.c, included after
 * its maps and count(). This first part finds the sampled thread's PyThreadState and follows its
 * _PyInterpreterFrame chain, counting how each walk ended; the frames are not put into the record yet. Every
 * read is a bpf_probe_read_user() of the target's memory, which is untrusted: each loop is bounded, a frame's
 * code object must have PyCode_Type's address as its type. */

#pragma once

/* The thread state of each thread (by TID) found lately: checked again by its native_thread_id on each use. */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 4096);
        __type(key, __u32);   /* tid */
        __type(value, __u64); /* its PyThreadState */
} python_tstates SEC(".maps");

struct python_walk {
        const struct vprof_python_proc *py;
        __u64 at;      /* the thread state looked at, then the frame */
        __u64 found;   /* the sampled thread's thread state; 0: none yet */
        __u64 first;   /* user frames of the native stack: [first, end) of s->frames */
        __u32 end;
        __u32 tid;
        __u32 outcome; /* a VPROF_STAT_PYTHON_* */
        __u32 frames;
        struct vprof_sample *s;
        __u32 in_eval;
};

static __always_inline bool python_read(void *dst, __u64 addr)
{
        return bpf_probe_read_user(dst, sizeof(__u64), (void *)addr) == 0;
}

/* One native frame: inside the evaluation loop (or its .cold part)? */
static long python_eval_step(__u32 i, void *ctx)
{
        struct python_walk *w = ctx;
        __u32 idx = (__u32)w->first + i;
        __u64 pc;

        if (idx >= w->end || idx >= VPROF_MAX_FRAMES)
                return 1;
        pc = w->s->frames[idx] & ~VPROF_FRAME_EXACT;
        if ((pc - w->py->eval_start < w->py->eval_end - w->py->eval_start) ||
            (pc - w->py->eval_cold_start < w->py->eval_cold_end - w->py->eval_cold_start)) {
                w->in_eval = 1;
                return 1;
        }
        return 0;
}

/* One thread state of the interpreter's list: the sampled thread's? */
static long python_tstate_step(__u32 i, void *ctx)
{
        struct python_walk *w = ctx;
        __u64 tid;

        if (w->at == 0)
                return 1;
        if (!python_read(&tid, w->at + w->py->tstate_native_thread_id)) {
                w->outcome = VPROF_STAT_PYTHON_FAULT;
                return 1;
        }
        if (tid == w->tid) {
                w->found = w->at;
                return 1;
        }
        if (!python_read(&w->at, w->at + w->py->tstate_next)) {
                w->outcome = VPROF_STAT_PYTHON_FAULT;
                return 1;
        }
        return 0;
}

/* One interpreter frame: its code object checked, then its caller. */
static long python_frame_step(__u32 i, void *ctx)
{
        struct python_walk *w = ctx;
        __u64 code, type, previous;

        if (w->at == 0) {
                w->outcome = VPROF_STAT_PYTHON_WALKED;
                return 1;
        }
        if (!python_read(&code, w->at + w->py->frame_code) ||
            !python_read(&previous, w->at + w->py->frame_previous) ||
            !python_read(&type, code + w->py->object_type)) {
                w->outcome = VPROF_STAT_PYTHON_FAULT;
                return 1;
        }
        /* A frame is not its own caller; its code is a code object. */
        if (previous == w->at || (w->py->code_type && type != w->py->code_type)) {
                w->outcome = VPROF_STAT_PYTHON_BAD_FRAME;
                return 1;
        }
        w->frames++;
        w->at = previous;
        return 0;
}

/* The sampled thread's Python frames, when its user stack, in frames[first, end), passes through the evaluation
 * loop. A function of its own: only kept samples of Python targets pay for its stack. */
static __noinline void python_walk(struct vprof_sample *s, __u32 tgid, __u32 tid, __u32 first, __u32 end)
{
        struct python_walk w = { .tid = tid, .s = s, .first = first, .end = end };
        __u64 interp, cframe, *cached;

        w.py = bpf_map_lookup_elem(&python_procs, &tgid);
        if (!w.py)
                return;
        bpf_loop(VPROF_MAX_USER_FRAMES, python_eval_step, &w, 0);
        if (!w.in_eval)
                return;

        /* The thread state: the one found last for this thread if it is still the thread's, else the list's. */
        cached = bpf_map_lookup_elem(&python_tstates, &tid);
        if (cached) {
                w.at = *cached;
                bpf_loop(1, python_tstate_step, &w, 0);
                w.outcome = 0;
        }
        if (!w.found) {
                if (!python_read(&interp, w.py->runtime + w.py->runtime_interpreters_head) || !interp ||
                    !python_read(&w.at, interp + w.py->interp_threads_head)) {
                        count(VPROF_STAT_PYTHON_FAULT);
                        return;
                }
                bpf_loop(VPROF_PYTHON_MAX_THREADS, python_tstate_step, &w, 0);
                if (!w.found) {
                        count(w.outcome ? w.outcome : VPROF_STAT_PYTHON_NO_TSTATE);
                        return;
                }
                bpf_map_update_elem(&python_tstates, &tid, &w.found, BPF_ANY);
        }

        /* tstate->cframe->current_frame, then the chain of previous. */
        if (!python_read(&cframe, w.found + w.py->tstate_cframe) || !cframe ||
            !python_read(&w.at, cframe + w.py->cframe_current_frame)) {
                count(VPROF_STAT_PYTHON_FAULT);
                return;
        }
        w.outcome = VPROF_STAT_PYTHON_DEPTH;
        bpf_loop(VPROF_PYTHON_MAX_FRAMES, python_frame_step, &w, 0);
        if (w.outcome == VPROF_STAT_PYTHON_DEPTH && w.at == 0)
                w.outcome = VPROF_STAT_PYTHON_WALKED; /* exactly VPROF_PYTHON_MAX_FRAMES frames */
        count(w.outcome);
        {
                __u32 key = VPROF_STAT_PYTHON_FRAMES;
                __u64 *v = bpf_map_lookup_elem(&stats, &key);

                if (v)
                        *v += w.frames;
        }
}
