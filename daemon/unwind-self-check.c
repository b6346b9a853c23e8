/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "time-util.h"
#include "unwind-self-check.h"
#include "unwinder.h"

/* Disagreements logged per window, at most: a broken table would otherwise log every check. */
#define LOG_WINDOW_USEC (60 * USEC_PER_SEC)
#define LOG_PER_WINDOW 5

/* What makes the walk take the frame-pointer step for a frame: without any, every step was a CFI step. */
#define WALK_FP_FLAGS                                                                                           \
        (VPROF_WALK_FELL_BACK | VPROF_WALK_NO_ROW | VPROF_WALK_BAD_RULE | VPROF_WALK_UNKNOWN_PC |              \
         VPROF_WALK_NO_MAPPINGS | VPROF_WALK_LEAF_FP)

/* The words of the copy from addr up; NULL when addr is outside it or not a word's address (the window is read as
 * words, and a stack pointer is 8-byte aligned). */
static const uint64_t *copy_window(const struct vprof_stack_copy *c, uint64_t addr, size_t *ret_words)
{
        size_t bytes = MIN((size_t)c->stack_bytes, sizeof(c->stack));
        uint64_t off = addr - c->user_sp;

        if (addr < c->user_sp || off >= bytes || off % sizeof(uint64_t) != 0)
                return NULL;
        *ret_words = (bytes - (size_t)off) / sizeof(uint64_t);
        return (const uint64_t *)(c->stack + off);
}

/* The frame-pointer step as the BPF walk takes it: the frame record {saved rbp, return address} at rbp, wherever rbp
 * points (code without frame pointers leaves anything there, also an address that is no word's). */
static int fp_step(const struct vprof_stack_copy *c, const UnwindRegs *regs, UnwindRegs *ret)
{
        size_t bytes = MIN((size_t)c->stack_bytes, sizeof(c->stack));
        uint64_t off = regs->bp - c->user_sp, record[2];

        if (regs->bp < c->user_sp || off >= bytes || bytes - off < sizeof(record))
                return -ERANGE;
        memcpy(record, c->stack + off, sizeof(record));
        *ret = (UnwindRegs){ .ip = record[1], .sp = regs->bp + 16, .bp = record[0] };
        return 0;
}

static void disagree(UnwindCheckResult *res, unsigned frame, uint64_t walk, uint64_t interpreter, const char *reason)
{
        res->outcome = UNWIND_CHECK_DISAGREED;
        res->frame = frame;
        res->walk_frame = walk;
        res->interpreter_frame = interpreter;
        res->reason = reason;
}

/* What the CFI says of the frame at regs where the interpreter's step failed with r: the same kinds as
 * unwinder_frame_kind(), and -1 for anything else (the copy ends, a rule the interpreter does not evaluate,
 * malformed CFI, no CFI for the daemon). */
static int failed_step_kind(AddressSpace *as, int r, const UnwindRegs *regs, bool return_address)
{
        UnwinderFrameKind kind;

        if (r != -ENOENT || unwinder_frame_kind(as, regs->ip, return_address, &kind) < 0)
                return -1;
        return (int)kind;
}

/* Where the walk ended at frame i by a CFI step (an end marker, or a return address of 0), the interpreter should
 * end there too. r, caller: its step. trusted: regs are a real frame's, outside padding (see below). */
static void check_end(AddressSpace *as, int r, const UnwindRegs *regs, const UnwindRegs *caller, bool return_address,
                      bool trusted, unsigned i, UnwindCheckResult *res)
{
        int kind;

        if (r == 0) {
                if (caller->ip == 0)
                        res->steps++;
                else
                        disagree(res, i + 1, 0, caller->ip, "the walk ended, the interpreter finds a caller");
                return;
        }
        kind = failed_step_kind(as, r, regs, return_address);
        if (kind == UNWINDER_FRAME_OUTERMOST)
                res->steps++;
        else if (kind == UNWINDER_FRAME_NO_FDE && trusted)
                disagree(res, i + 1, 0, 0, "the walk ended by a rule where no FDE covers the frame");
}

void unwind_self_check_compare(AddressSpace *as, const struct vprof_stack_copy *c, UnwindCheckResult *ret)
{
        unsigned depth = MIN((unsigned)c->user_depth, (unsigned)VPROF_MAX_USER_FRAMES);
        UnwindCheckResult res = { .outcome = UNWIND_CHECK_UNCHECKED };
        bool may_fp = c->walk_flags & WALK_FP_FLAGS;
        /* No step so far taken as a frame-pointer step: regs are a real frame's, not one that frame pointers may
         * have made up in code that keeps none. */
        bool real = true;
        UnwindRegs regs;

        assert(as);
        assert(c);
        assert(ret);

        if (depth > 0)
                regs = (UnwindRegs){ .ip = c->frames[0] & ~VPROF_FRAME_EXACT, .sp = c->user_sp, .bp = c->user_bp };
        /* Frame i is the walk's (frame 0 by definition, the others compared at the step before); each step from it
         * by the interpreter must give the walk's frame i + 1. The record does not say which steps the walk took by
         * frame pointer; when its flags say it took some, a step where the frame-pointer step gives the walk's
         * frame and the CFI another one, or none at all, was one, and the comparison goes on from there. */
        for (unsigned i = 0; i < depth; i++) {
                bool return_address = i > 0 && !(c->frames[i] & VPROF_FRAME_EXACT), fp, trusted;
                UnwindRegs caller, fp_caller;
                const uint64_t *window;
                size_t n_words = 0;
                uint64_t walk;
                int r, kind, fp_r;

                /* A table covers the padding between functions, so a frame in it has a rule where the CFI has
                 * none. A real frame is never there, but for frame 0 in kernel mode, whose ip follows a system
                 * call that may end its function (__restore_rt's rt_sigreturn). */
                trusted = real && !(i == 0 && (c->flags & VPROF_SAMPLE_KERNEL_MODE));
                window = copy_window(c, regs.sp, &n_words);
                r = unwinder_step(as, &regs, return_address, window, n_words, &caller);
                if (i + 1 == depth) {
                        /* The walk ended here: by an end marker or a return address of 0, else for its own reasons
                         * (the frame-pointer chain's end, a fault, no progress, its depth). */
                        if (c->walk_end == VPROF_WALK_END)
                                check_end(as, r, &regs, &caller, return_address, trusted, i, &res);
                        break;
                }
                walk = c->frames[i + 1] & ~VPROF_FRAME_EXACT;
                fp_r = may_fp ? fp_step(c, &regs, &fp_caller) : -EOPNOTSUPP;
                fp = fp_r == 0 && fp_caller.ip == walk;
                if (r == 0 && caller.ip == walk) {
                        res.steps++;
                        /* Both steps give the walk's frame, with other registers (a realigned frame): which ones the
                         * walk went on with is unknown. */
                        if (fp && (fp_caller.sp != caller.sp || fp_caller.bp != caller.bp))
                                break;
                        regs = caller;
                        continue;
                }
                /* The walk may have taken the frame-pointer step through a record the copy does not hold (rbp a few
                 * bytes below the stack pointer, or near the copy's end): nothing to tell. */
                if (fp_r == -ERANGE)
                        break;
                kind = r < 0 ? failed_step_kind(as, r, &regs, return_address) : -1;
                /* Not where the interpreter cannot evaluate the rule: the walk's rule may be one it can, whose caller
                 * the frame-pointer step may give with another stack pointer. */
                if (fp && (r == 0 || r == -ENOENT) && kind != UNWINDER_FRAME_OUTERMOST) {
                        regs = fp_caller;
                        real = false;
                        continue;
                }
                if (r == 0)
                        disagree(&res, i + 1, walk, caller.ip, "the callers differ");
                else if (kind == UNWINDER_FRAME_OUTERMOST)
                        disagree(&res, i + 1, walk, 0, "the CFI marks the outermost frame, the walk goes on");
                else if (kind == UNWINDER_FRAME_NO_FDE && trusted)
                        disagree(&res, i + 1, walk, 0, "no FDE covers the frame, the walk found a caller");
                /* Else the copy ends, a rule the interpreter does not evaluate, malformed CFI: no more to compare. */
                break;
        }
        if (res.outcome != UNWIND_CHECK_DISAGREED && res.steps > 0)
                res.outcome = UNWIND_CHECK_AGREED;
        *ret = res;
}

/* "libc.so.6+0x2a3b4 (__read)": the file and the address in it, which objdump finds. */
static void describe(AddressSpace *as, uint64_t addr, bool return_address, char *buf, size_t size)
{
        uint64_t bias = 0;
        Symbol sym;

        if (addr == 0) {
                snprintf(buf, size, "none");
                return;
        }
        if (address_space_resolve(as, addr, return_address, &sym) < 0) {
                snprintf(buf, size, "0x%" PRIx64, addr);
                return;
        }
        if (unwinder_code_bias(as, addr - (return_address ? 1 : 0), &bias) < 0)
                bias = 0;
        snprintf(buf, size, "%s+0x%" PRIx64 " (%s) at 0x%" PRIx64, sym.module, addr - bias, sym.function ?: "?",
                 addr);
}

static void log_disagreement(UnwindSelfCheck *sc, Target *t, const struct vprof_stack_copy *c,
                             const UnwindCheckResult *res)
{
        char from[320], walk[320], interpreter[320];
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        unsigned i = res->frame - 1;

        if (now - sc->log_window_usec >= LOG_WINDOW_USEC) {
                sc->log_window_usec = now;
                sc->logged = 0;
        }
        if (sc->logged >= LOG_PER_WINDOW)
                return;
        sc->logged++;
        describe(t->address_space, c->frames[i] & ~VPROF_FRAME_EXACT, i > 0 && !(c->frames[i] & VPROF_FRAME_EXACT),
                 from, sizeof(from));
        describe(t->address_space, res->walk_frame, true, walk, sizeof(walk));
        describe(t->address_space, res->interpreter_frame, true, interpreter, sizeof(interpreter));
        log_debug("Unwind self-check of %d (TID %" PRIu32 "): frame %u differs, %s; from frame %u, %s: the walk "
                  "has %s, the interpreter %s (walk end %u, flags 0x%x, %u frames, %u bytes of stack).",
                  (int)t->pid, c->tid, res->frame, res->reason, i, from, walk, interpreter, c->walk_end,
                  c->walk_flags, c->user_depth, c->stack_bytes);
}

void unwind_self_check_record(UnwindSelfCheck *sc, Target *t, const struct vprof_stack_copy *c, size_t size)
{
        UnwindCheckResult res = { .outcome = UNWIND_CHECK_UNCHECKED };

        assert(sc);
        assert(t);
        assert(c);

        sc->stats.checked++;
        /* Cut short, or of the image before an exec(): nothing to compare it with. */
        if (size >= sizeof(*c) && t->address_space && c->exec_count == t->exec_count)
                unwind_self_check_compare(t->address_space, c, &res);
        sc->stats.steps += res.steps;
        switch (res.outcome) {
        case UNWIND_CHECK_AGREED:
                sc->stats.agreed++;
                break;
        case UNWIND_CHECK_DISAGREED:
                sc->stats.disagreed++;
                log_disagreement(sc, t, c, &res);
                break;
        case UNWIND_CHECK_UNCHECKED:
                sc->stats.unchecked++;
                break;
        }
}

void unwind_self_check_log(const UnwindSelfCheckStats *s)
{
        log_info("Unwind self-check: %" PRIu64 " checked, %" PRIu64 " agreed, %" PRIu64 " disagreed, %" PRIu64
                 " unchecked, %" PRIu64 " steps compared, %" PRIu64 " lost.",
                 s->checked, s->agreed, s->disagreed, s->unchecked, s->steps, s->lost);
}
