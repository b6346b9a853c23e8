/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "vprof-abi.h"

/* The walks that the BPF program could not finish for want of a table on its way (a library just dlopen()ed, whose
 * table the daemon compiles and pushes a few milliseconds later): their samples come with the top of the user stack
 * (struct vprof_sample_stack), and the daemon walks that copy again with its own CFI interpreter (unwinder.h), which
 * reads the file's call frame information at once, from the mappings as the ring buffer's order has them. The sample
 * is then counted once, with the finished walk or, when the interpreter finds no better one, as the BPF program
 * walked it (docs/UNWINDING.md). */

typedef struct UnwindPendingStats {
        uint64_t finished;   /* walked again to the outermost frame, or to a frame of the BPF walk's from _start */
        uint64_t unfinished; /* counted as the BPF program walked them: the interpreter could do no better */
} UnwindPendingStats;

/* The user stack of c's sample walked again from its registers through the copy of its stack, with the CFI of the
 * files that as maps. true and *ret, the sample with that stack (and without its stack window, which it no longer
 * needs); false when the walk found no better stack than the BPF program's. No I/O but the CFI read through as. */
bool unwind_pending_finish(AddressSpace *as, const struct vprof_sample_stack *c, struct vprof_sample *ret);
