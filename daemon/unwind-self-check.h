/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "target.h"
#include "vprof-abi.h"

/* The unwind self-check (UnwindSelfCheck=N): for 1 in N kept samples the BPF program also hands over the top of
 * the user stack with the walk's frames (struct vprof_stack_copy). The daemon unwinds that copy again with its own
 * CFI interpreter (unwinder.h, the code that the tables are compiled from), from the same registers, taking the
 * frame-pointer step where the walk evidently took it, and compares frame by frame: a check of the compiled tables
 * and of their walk in BPF that runs on real programs (docs/UNWINDING.md). The sample itself is counted by its own
 * record. */

typedef struct UnwindSelfCheckStats {
        uint64_t checked;   /* copies of targets' samples looked at: agreed + disagreed + unchecked */
        uint64_t agreed;    /* every frame the interpreter found within the copy is the walk's */
        uint64_t disagreed; /* a frame differs, or one unwinder ends where the other goes on */
        uint64_t unchecked; /* not one CFI step to compare: the innermost frame without CFI for the daemon (the
                             * vDSO, JIT code), a rule the interpreter does not evaluate (DWARF expressions: PLT,
                             * realigned frames, signal frames), a frame larger than the copy, a walk of
                             * frame-pointer steps only, a copy from before an exec() */
        uint64_t steps;     /* CFI steps compared, over the agreed and the disagreed copies */
        uint64_t lost;      /* copies the ring buffer had no room for (their samples were kept) */
} UnwindSelfCheckStats;

typedef enum UnwindCheckOutcome {
        UNWIND_CHECK_UNCHECKED,
        UNWIND_CHECK_AGREED,
        UNWIND_CHECK_DISAGREED,
} UnwindCheckOutcome;

typedef struct UnwindCheckResult {
        UnwindCheckOutcome outcome;
        unsigned steps;             /* CFI steps compared */
        /* UNWIND_CHECK_DISAGREED: the first user frame that differs (frame - 1 took the step), what each found
         * there (0: none, that unwinder ends) and why they differ. */
        unsigned frame;
        uint64_t walk_frame;
        uint64_t interpreter_frame;
        const char *reason;
} UnwindCheckResult;

/* The comparison for one copy of a process whose maps and files as holds: no I/O but the CFI read through as. */
void unwind_self_check_compare(AddressSpace *as, const struct vprof_stack_copy *c, UnwindCheckResult *ret);

/* The counters, and the rate limit of the lines that say where a check disagreed. */
typedef struct UnwindSelfCheck {
        UnwindSelfCheckStats stats; /* lost stays 0: the BPF program counts those */
        uint64_t log_window_usec;
        unsigned logged;
} UnwindSelfCheck;

/* A stack copy of target t, size bytes as the ring buffer holds it: compared and counted; a disagreement logged at
 * debug level, a few per minute at most. */
void unwind_self_check_record(UnwindSelfCheck *sc, Target *t, const struct vprof_stack_copy *c, size_t size);

/* The counters as one line at info level: what the tests read until the bus shows them. */
void unwind_self_check_log(const UnwindSelfCheckStats *s);
