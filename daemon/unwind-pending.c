/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "unwind-pending.h"
#include "unwinder.h"

/* The words of the copy from addr up; NULL when addr is outside it or no word's address. */
static const uint64_t *copy_window(const struct vprof_sample_stack *c, uint64_t addr, size_t *ret_words)
{
        size_t bytes = MIN((size_t)c->stack_bytes, sizeof(c->stack));
        uint64_t off = addr - c->sample.user_sp;

        if (addr < c->sample.user_sp || off >= bytes || off % sizeof(uint64_t) != 0)
                return NULL;
        *ret_words = (bytes - (size_t)off) / sizeof(uint64_t);
        return (const uint64_t *)(c->stack + off);
}

/* The interpreter's walk from the sample's registers into out[] (frame 0 the walk's own); its depth. *ret_complete:
 * it reached the outermost frame (or the depth limit), rather than a frame it cannot step from (the copy's end, no
 * CFI, a rule it does not evaluate). */
static size_t interpret(AddressSpace *as, const struct vprof_sample_stack *c, uint64_t out[static VPROF_MAX_USER_FRAMES],
                        bool *ret_complete)
{
        const struct vprof_sample *s = &c->sample;
        UnwindRegs regs = { .ip = s->frames[s->kernel_depth] & ~VPROF_FRAME_EXACT, .sp = s->user_sp,
                            .bp = s->user_bp };
        size_t n = 0;

        *ret_complete = false;
        out[n++] = s->frames[s->kernel_depth];
        while (n < VPROF_MAX_USER_FRAMES) {
                const uint64_t *window;
                size_t words = 0;
                UnwinderFrameKind kind;
                UnwindRegs caller;
                int r;

                /* Frame 0 is an interrupted instruction; every other a return address. */
                window = copy_window(c, regs.sp, &words);
                r = unwinder_step(as, &regs, n > 1, window, words, &caller);
                if (r == -ENOENT && unwinder_frame_kind(as, regs.ip, n > 1, &kind) >= 0 &&
                    kind == UNWINDER_FRAME_OUTERMOST) {
                        *ret_complete = true;
                        return n;
                }
                if (r < 0)
                        return n;
                if (caller.ip == 0) {
                        *ret_complete = true;
                        return n;
                }
                if (caller.sp <= regs.sp) /* no progress: a broken stack */
                        return n;
                out[n++] = caller.ip;
                regs = caller;
        }
        *ret_complete = true; /* the depth limit, as the BPF walk's */
        return n;
}

/* The Python frames of s after ret's new user frames: each run's tag names its evaluation-loop frame by position,
 * found again in the new frames by its return address, in order from the innermost. A run whose frame the new
 * walk does not have, and what follows it, is left out (or what does not fit in ret). */
static void keep_python_frames(const struct vprof_sample *s, struct vprof_sample *ret)
{
        unsigned kdepth = MIN((unsigned)s->kernel_depth, (unsigned)VPROF_MAX_KERNEL_FRAMES);
        unsigned udepth = MIN((unsigned)s->user_depth, (unsigned)VPROF_MAX_USER_FRAMES);
        unsigned words = MIN((unsigned)s->python_depth, (unsigned)(VPROF_MAX_FRAMES - kdepth - udepth));
        const __u64 *old = s->frames + kdepth, *py = old + udepth;
        __u64 *new = ret->frames + kdepth, *out = new + ret->user_depth;
        unsigned room = VPROF_MAX_FRAMES - kdepth - ret->user_depth, n = 0, at = 0, old_native = UINT32_MAX;

        for (unsigned i = 0; i + VPROF_PYTHON_FRAME_WORDS <= words; i += VPROF_PYTHON_FRAME_WORDS) {
                unsigned native = (unsigned)((py[i] & VPROF_PYTHON_FRAME_NATIVE_MASK) >>
                                             VPROF_PYTHON_FRAME_NATIVE_SHIFT);

                if (native != old_native) { /* a new run: its frame in the new walk, after the run before's */
                        if (native >= udepth)
                                break;
                        if (old_native != UINT32_MAX)
                                at++;
                        while (at < ret->user_depth && new[at] != old[native])
                                at++;
                        if (at >= ret->user_depth)
                                break;
                        old_native = native;
                }
                if (n + VPROF_PYTHON_FRAME_WORDS > room)
                        break;
                out[n] = (py[i] & ~VPROF_PYTHON_FRAME_NATIVE_MASK) | (__u64)at << VPROF_PYTHON_FRAME_NATIVE_SHIFT;
                out[n + 1] = py[i + 1];
                n += VPROF_PYTHON_FRAME_WORDS;
        }
        if (n < (words & ~1u))
                ret->flags |= VPROF_SAMPLE_PYTHON_TRUNCATED;
        ret->python_depth = (__u16)n;
}

bool unwind_pending_finish(AddressSpace *as, const struct vprof_sample_stack *c, struct vprof_sample *ret)
{
        const struct vprof_sample *s = &c->sample;
        unsigned kdepth = MIN((unsigned)s->kernel_depth, (unsigned)VPROF_MAX_KERNEL_FRAMES);
        unsigned udepth = MIN((unsigned)s->user_depth, (unsigned)VPROF_MAX_USER_FRAMES);
        const __u64 *walk = s->frames + kdepth;
        uint64_t out[VPROF_MAX_USER_FRAMES];
        size_t n, j = 0, tail = 0;
        bool complete;

        assert(as);
        assert(c);
        assert(ret);

        if (udepth == 0)
                return false;
        n = interpret(as, c, out, &complete);
        if (!complete) {
                /* Where the interpreter stopped, the BPF walk may go on rightly: when it ended at the outermost
                 * frame by a CFI step, its frames from the last one that the interpreter reached are whole.
                 * Recursion repeats a return address: from its last repetition, never counting a frame twice. */
                if (s->walk_end != VPROF_WALK_END || n <= 1)
                        return false;
                for (j = udepth; j > 0; j--)
                        if ((walk[j - 1] & ~VPROF_FRAME_EXACT) == out[n - 1])
                                break;
                if (j == 0)
                        return false;
                tail = MIN((size_t)(udepth - j), (size_t)VPROF_MAX_USER_FRAMES - n);
                /* Nothing the BPF walk had not: its own frames up to there. */
                if (j == n && memcmp(out, walk, n * sizeof(*out)) == 0)
                        return false;
        }
        memcpy(ret, s, VPROF_SAMPLE_SIZE(kdepth));
        ret->flags &= ~VPROF_SAMPLE_WITH_STACK;
        memcpy(ret->frames + kdepth, out, n * sizeof(*out));
        memcpy(ret->frames + kdepth + n, walk + j, tail * sizeof(*out));
        ret->user_depth = (__u16)(n + tail);
        ret->window_words = 0; /* the walk has the leaf's callers: nothing to put back */
        if (complete && n >= VPROF_MAX_USER_FRAMES) {
                ret->walk_end = VPROF_WALK_DEPTH;
                ret->flags |= VPROF_SAMPLE_USER_TRUNCATED;
        } else if (complete)
                ret->walk_end = VPROF_WALK_END;
        keep_python_frames(s, ret);
        return true;
}
