/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfa-program.h"
#include "dwarf-cursor.h"
#include "macros.h"

/* The call frame information of one x86-64 ELF file (.eh_frame, found through .eh_frame_hdr), for one
 * unwinding step: the frame-pointer walk done in BPF loses the caller of a function that has no frame set up
 * (a leaf, a libc system call wrapper, a function still in its prologue), and the CFI of the code at the
 * sampled ip says where that function keeps its return address. Code built without unwind tables but with
 * debug information has its CFI in .debug_frame instead (its own, or its separate debug file's): its FDEs
 * serve where .eh_frame has none. Pure: no /proc, no logging above debug. Every read is bounded by the
 * section, as the files come from untrusted processes. */
typedef struct EhFrame EhFrame;

/* Load the CFI of the ELF file open at fd (the fd is not kept), read as elf-util.h says: .eh_frame, and the
 * FDEs of .debug_frame for code that .eh_frame does not cover. -ENOENT when it has neither, -ENOEXEC when it
 * is not ELF, -EOPNOTSUPP when it is not x86-64, -EFBIG when a section (or what a compressed one inflates
 * to) is larger than 256 MiB, -EIO when the file changed while it was read. Keeps a copy of the sections it
 * uses and a table of 8 bytes a function. */
int eh_frame_load_fd(int fd, EhFrame **ret);
int eh_frame_load_path(const char *path, EhFrame **ret);
/* The same with the file's separate debug file open at debug_fd (-1: none), whose .debug_frame (compressed
 * or not) serves when the file has none of its own. The debug file is optional: its errors but -ENOMEM leave
 * it out. */
int eh_frame_load_fds(int fd, int debug_fd, EhFrame **ret);

/* A file's CFI sections, each of them may be absent (NULL, size 0). */
typedef struct CfiSections {
        const void *eh_frame;
        size_t eh_frame_size;
        uint64_t eh_frame_vaddr;
        const void *hdr; /* .eh_frame_hdr: may be without a search table, then .eh_frame is scanned */
        size_t hdr_size;
        uint64_t hdr_vaddr;
        const void *debug_frame; /* inflated, if it was compressed */
        size_t debug_frame_size;
} CfiSections;

/* From the section contents and their ELF virtual addresses. The bytes are copied (.debug_frame's only when
 * one of its FDEs is used). -ENOENT when there is no FDE at all. */
int eh_frame_new_sections(const CfiSections *s, EhFrame **ret);
/* The same from .eh_frame and its header alone. */
int eh_frame_new(const void *eh_frame, size_t eh_frame_size, uint64_t eh_frame_vaddr, const void *hdr,
                 size_t hdr_size, uint64_t hdr_vaddr, EhFrame **ret);

/* Bytes held, for the symbol cache's budget. */
size_t eh_frame_memory(const EhFrame *e);
EhFrame *eh_frame_free(EhFrame *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(EhFrame *, eh_frame_free);

/* The bytes of eh_frame_digest(): SHA-256. */
#define EH_FRAME_DIGEST_SIZE 32
/* What a table compiled from e (unwind-table.h) is a function of, as a SHA-256 digest: the CFI sections as e
 * holds them (.eh_frame up to its terminator, .debug_frame when one of its FDEs is used) with their
 * addresses, the table's base and its functions (from .eh_frame_hdr or a scan). Two EhFrames of one digest
 * compile to the same table, whatever the files' names or build-ids. Computed when e is made, from the
 * copies that every later read of e goes to, so that a file rewritten meanwhile cannot make e's table differ
 * from its digest; SHA-256, not a checksum, because the bytes come from files their owners choose: none can
 * make the digest of another user's CFI with bytes of their own. */
const uint8_t *eh_frame_digest(const EhFrame *e);
/* The digest computed again from e's bytes into ret (the value eh_frame_digest() took when e was made), for
 * measurements and tests: the number of bytes hashed. */
size_t eh_frame_digest_compute(const EhFrame *e, uint8_t ret[static EH_FRAME_DIGEST_SIZE]);

/* Functions (FDEs) in the lookup table. */
size_t eh_frame_count(const EhFrame *e);

/* The FDE of a function of the table, parsed: what the compiler of unwind tables (unwind-table.h) goes through
 * in address order. The cursors point into the EhFrame. */
typedef struct EhFrameFde {
        uint64_t pc_begin, pc_range; /* as the FDE says */
        CfaCie cie;
        Cursor cie_insns, fde_insns;
        bool debug_frame; /* from .debug_frame */
} EhFrameFde;

/* Where the table's i-th function starts (i < eh_frame_count()), in address order: a lookup of a pc from
 * there up to the next one's start uses that function's FDE (and finds nothing past the FDE's range). The
 * same as the FDE's pc_begin unless .eh_frame_hdr lies. */
uint64_t eh_frame_table_pc(const EhFrame *e, size_t i);
/* Its FDE and CIE: -EBADMSG when either is malformed. */
int eh_frame_fde(const EhFrame *e, size_t i, EhFrameFde *ret);
/* The first address past the table's reach, 2 GiB past its base (.eh_frame, as the 32-bit offsets of
 * .eh_frame_hdr; without .eh_frame's FDEs, the lowest function of .debug_frame): lookups there and beyond
 * find nothing, whatever an FDE's range says. UINT64_MAX when it wraps around. */
uint64_t eh_frame_table_limit(const EhFrame *e);

/* The row at pc (an ELF vaddr) by the CFA program run up to pc, as eh_frame_unwind_step() finds it (without
 * its cache), and the function's CIE. -ENOENT no FDE covers pc; -EBADMSG malformed CFI. */
int eh_frame_find_row(const EhFrame *e, uint64_t pc, Row *ret, CfaCie *ret_cie);

/* One step from the frame at regs to its caller. bias: run-time address - ELF vaddr of the file's code.
 * regs->ip is looked up as it is: right for the innermost frame, interrupted at ip; for a frame whose ip is a
 * return address, pass ip - 1. window: n_words words copied from the stack at regs->sp, the only memory read.
 * Fills the caller's ip (the return address), sp (the CFA) and bp (0 when the CFI says it cannot be
 * recovered). -ENOENT no FDE covers ip, or the CFI marks the outermost frame; -ERANGE a needed word lies
 * outside the window; -EOPNOTSUPP a DWARF expression or a register other than rsp and rbp is needed; -EBADMSG
 * malformed CFI. */
int eh_frame_unwind_step(const EhFrame *e, uint64_t bias, const UnwindRegs *regs, const uint64_t *window,
                         size_t n_words, UnwindRegs *ret_caller);
