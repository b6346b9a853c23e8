/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "address-space.h"
#include "eh-frame.h"
#include "unwind-table.h"

/* One step from a frame of a process to its caller, from the call frame information of the code: the
 * entry point of the unwinding layer. The frame-pointer walk done in BPF loses the caller of a function
 * without a frame (a leaf, a libc system call wrapper, a prologue); the CFI of the file mapped at the
 * frame's ip (.eh_frame, else .debug_frame of the file or of its separate debug file: eh-frame.h) says where
 * that function keeps its return address. Each file's CFI is parsed on the first step through it and kept
 * with the symbolizer's entry of the file (an attachment, symbolizer.h), counted in its budget. */

/* The return address of the innermost user frame. sp, bp: the user registers when the stack was captured;
 * window: n_words words copied from the user stack at sp. 0 and *ret_return_address on success; -ENOENT no
 * CFI for ip (not in a file mapping, the vDSO, a file without .eh_frame or .debug_frame) or the outermost
 * frame; -ERANGE, -EOPNOTSUPP, -EBADMSG as eh_frame_unwind_step(). */
int unwinder_leaf(AddressSpace *as, uint64_t ip, uint64_t sp, uint64_t bp, const uint64_t *window,
                  size_t n_words, uint64_t *ret_return_address);

/* One step of the same from any frame: regs->ip is the frame's instruction (return_address: a caller's
 * return address, looked up at the call), window holds n_words words from regs->sp up. Fills the caller's ip
 * (its return address), sp and bp. Errors as unwinder_leaf(). */
int unwinder_step(AddressSpace *as, const UnwindRegs *regs, bool return_address, const uint64_t *window,
                  size_t n_words, UnwindRegs *ret_caller);

/* What the CFI of the file mapped at ip says of the frame there (looked up as unwinder_step() does), for a caller
 * that must tell apart what unwinder_step() returns -ENOENT for. -ENOENT when there is no CFI there (as
 * unwinder_leaf()), -EBADMSG malformed CFI. */
typedef enum UnwinderFrameKind {
        UNWINDER_FRAME_NO_FDE,    /* the file has CFI, but no FDE covers ip */
        UNWINDER_FRAME_OUTERMOST, /* the return address is undefined: _start, a thread's first function */
        UNWINDER_FRAME_RULE,      /* a rule for the caller */
} UnwinderFrameKind;
int unwinder_frame_kind(AddressSpace *as, uint64_t ip, bool return_address, UnwinderFrameKind *ret);

/* The bias (run-time address - ELF vaddr) of the segment holding addr, in a file with CFI: what a compiled table
 * of the file (unwind-table.h) is placed at in this process. Errors as unwinder_leaf(). */
int unwinder_code_bias(AddressSpace *as, uint64_t addr, uint64_t *ret_bias);

/* The digest of the CFI of the file mapped at addr (eh_frame_digest(): what a table compiled from it depends
 * on), copied to ret: the key under which files share a compiled table; and, when ret_bias is not NULL, the
 * bias as unwinder_code_bias() gives it. Errors as unwinder_leaf(). */
int unwinder_cfi_digest(AddressSpace *as, uint64_t addr, uint8_t ret[static EH_FRAME_DIGEST_SIZE],
                        uint64_t *ret_bias);

/* The compilation of the unwind table of the file whose code is mapped at addr, from the CFI that steps use,
 * in steps as unwind-table.h's builder. It holds that CFI, so it may go on after the process exits or the file
 * leaves the symbolizer's cache. -ENOENT: no CFI there (as unwinder_leaf()), or none to compile. */
typedef struct UnwinderTableBuild UnwinderTableBuild;
int unwinder_table_build_new(AddressSpace *as, uint64_t addr, UnwinderTableBuild **ret);
/* The digest of the CFI the build compiles (unwinder_cfi_digest()): its table's key. */
const uint8_t *unwinder_table_build_digest(const UnwinderTableBuild *b);
int unwinder_table_build_step(UnwinderTableBuild *b, size_t max_fdes);
int unwinder_table_build_finish(UnwinderTableBuild *b, UnwindTable **ret);
UnwinderTableBuild *unwinder_table_build_free(UnwinderTableBuild *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(UnwinderTableBuild *, unwinder_table_build_free);
