// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The walk of a thread's CPython frames (issue 26, docs/PYTHON.md), for a target whose interpreter the daemon
 * pushed into python_procs (common/vprof-abi.h). Part of the one compilation unit of vprof.bpf.c, included after
 * its maps and count(). It finds the sampled thread's PyThreadState and follows its _PyInterpreterFrame chain,
 * counting how each walk ended, and puts the frames after the record's user frames (VPROF_PYTHON_FRAME_TAG,
 * common/vprof-abi.h), each run of an evaluation loop's activation naming that activation's native frame. Every
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

/* The fixed part of a _PyInterpreterFrame, read with one call: every field the walk reads lies in its first 72
 * bytes in 3.11 and 3.12 (common/python/python-versions.c), so a frame costs two reads (it and its code object's
 * type) instead of five. A field past it, in a layout not seen yet, is read on its own. */
#define PYTHON_FRAME_BYTES 72

struct python_frame_bytes {
        __u8 b[PYTHON_FRAME_BYTES];
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct python_frame_bytes);
} python_frame_bytes SEC(".maps");

struct python_walk {
        const struct vprof_python_proc *py;
        __u8 *frame;   /* the bytes of the frame at w->at, read by python_frame_step(); NULL: each field read alone */
        __u64 at;      /* the thread state looked at, then the frame */
        __u64 found;   /* the sampled thread's thread state; 0: none yet */
        __u64 first;   /* user frames of the native stack: [first, end) of s->frames */
        __u32 end;
        __u32 tid;
        __u32 outcome; /* a VPROF_STAT_PYTHON_* */
        __u32 frames;
        struct vprof_sample *s;
        __u32 n_runs;  /* evaluation-loop frames found, innermost first, their user frame index in runs */
        __u32 run;     /* the run of the frame looked at */
        __u32 out;     /* the next word of s->frames for a Python frame */
        __u8 runs[VPROF_PYTHON_MAX_RUNS];
};

/* 3.12's frame of an activation of the evaluation loop itself (a shim): not a Python function's. */
#define PYTHON_FRAME_OWNED_BY_CSTACK 3

static __always_inline bool python_read(void *dst, __u64 addr)
{
        return bpf_probe_read_user(dst, sizeof(__u64), (void *)addr) == 0;
}

/* A word of the frame at w->at, from its bytes read at once where it lies in them. */
static __always_inline bool python_frame_word(struct python_walk *w, __u32 off, __u64 *dst)
{
        if (w->frame && off <= PYTHON_FRAME_BYTES - sizeof(__u64)) {
                *dst = *(__u64 *)(w->frame + off);
                return true;
        }
        return python_read(dst, w->at + off);
}

/* A byte of it, as the low byte of *dst. */
static __always_inline bool python_frame_byte(struct python_walk *w, __u32 off, __u64 *dst)
{
        if (w->frame && off < PYTHON_FRAME_BYTES) {
                *dst = w->frame[off];
                return true;
        }
        return python_read(dst, w->at + off);
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
                w->runs[w->n_runs & (VPROF_PYTHON_MAX_RUNS - 1)] = (__u8)i;
                if (++w->n_runs >= VPROF_PYTHON_MAX_RUNS)
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

/* A checked frame of w->at into the record, in its run: two words while they fit. A 3.12 shim frame ends a run
 * and takes none; in 3.11 the entry frame is the run's last. */
static __always_inline void python_emit(struct python_walk *w, __u64 code)
{
        __u64 instr = 0, flag = 0;
        __u32 o = w->out;

        if (w->py->frame_owner != VPROF_PYTHON_NONE && w->py->frame_is_entry == VPROF_PYTHON_NONE &&
            python_frame_byte(w, w->py->frame_owner, &flag) && (flag & 0xff) == PYTHON_FRAME_OWNED_BY_CSTACK) {
                w->run++;
                return;
        }
        if (w->run >= w->n_runs || o >= VPROF_MAX_FRAMES - 1 || (code & ~VPROF_PYTHON_FRAME_CODE_MASK)) {
                w->s->flags |= VPROF_SAMPLE_PYTHON_TRUNCATED;
                w->run = VPROF_PYTHON_MAX_RUNS; /* nothing after a frame left out */
                return;
        }
        if (w->py->frame_instr != VPROF_PYTHON_NONE && python_frame_word(w, w->py->frame_instr, &instr) && instr)
                instr -= code + w->py->code_bytecode;
        w->s->frames[o] = VPROF_PYTHON_FRAME_TAG | code |
                          (__u64)w->runs[w->run & (VPROF_PYTHON_MAX_RUNS - 1)] << VPROF_PYTHON_FRAME_NATIVE_SHIFT;
        w->s->frames[o + 1] = instr;
        w->out = o + VPROF_PYTHON_FRAME_WORDS;
        if (w->py->frame_is_entry != VPROF_PYTHON_NONE && python_frame_byte(w, w->py->frame_is_entry, &flag) &&
            (flag & 0xff))
                w->run++;
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
        if ((w->frame && bpf_probe_read_user(w->frame, PYTHON_FRAME_BYTES, (void *)w->at) != 0) ||
            !python_frame_word(w, w->py->frame_code, &code) ||
            !python_frame_word(w, w->py->frame_previous, &previous) ||
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
        python_emit(w, code);
        w->at = previous;
        return 0;
}

/* The sampled thread's Python frames, when its user stack, in frames[first, end), passes through the evaluation
 * loop: written from frames[end] on, returns their words. A function of its own: only kept samples of Python
 * targets pay for its stack. Global, so the verifier checks it once on its own instead of again for each state of
 * its caller (four times the instructions when it was static). */
__noinline __u32 python_walk(struct vprof_sample *s, __u32 tgid, __u32 tid, __u32 first, __u32 end)
{
        struct python_walk w = { .tid = tid, .s = s, .first = first, .end = end, .out = end };
        struct python_frame_bytes *frame;
        __u64 interp, cframe, *cached;
        __u32 zero = 0;

        if (!s) /* a global function's pointer may be NULL as far as the verifier knows */
                return 0;
        w.py = bpf_map_lookup_elem(&python_procs, &tgid);
        if (!w.py)
                return 0;
        bpf_loop(VPROF_MAX_USER_FRAMES, python_eval_step, &w, 0);
        if (!w.n_runs)
                return 0;

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
                        return 0;
                }
                bpf_loop(VPROF_PYTHON_MAX_THREADS, python_tstate_step, &w, 0);
                if (!w.found) {
                        count(w.outcome ? w.outcome : VPROF_STAT_PYTHON_NO_TSTATE);
                        return 0;
                }
                bpf_map_update_elem(&python_tstates, &tid, &w.found, BPF_ANY);
        }

        /* tstate->cframe->current_frame, then the chain of previous. */
        if (!python_read(&cframe, w.found + w.py->tstate_cframe) || !cframe ||
            !python_read(&w.at, cframe + w.py->cframe_current_frame)) {
                count(VPROF_STAT_PYTHON_FAULT);
                return 0;
        }
        frame = bpf_map_lookup_elem(&python_frame_bytes, &zero);
        w.frame = frame ? frame->b : NULL;
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
        return w.out - end;
}
