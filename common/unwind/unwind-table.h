/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "eh-frame.h"
#include "vprof-abi.h"

/* A file's call frame information compiled into the table the BPF program walks (struct vprof_unwind_entry
 * and VPROF_UNWIND_* in vprof-abi.h; docs/UNWINDING.md). Pure: input is a parsed EhFrame (untrusted bytes,
 * every loop and allocation bounded), output plain arrays. Compiled in steps of a bounded number of FDEs, so
 * that the daemon's event loop never waits long for a large file. */

/* Why a row of a CFA program became VPROF_UNWIND_UNSUPPORTED. */
typedef enum UnwindUnsupported {
        UNWIND_UNSUPPORTED_CFA,       /* CFA undefined, or an expression of none of the known forms */
        UNWIND_UNSUPPORTED_REGISTER,  /* CFA in a register beyond r15, or in one while rbp is saved */
        UNWIND_UNSUPPORTED_RANGE,     /* an offset beyond its field's bits */
        UNWIND_UNSUPPORTED_RA,        /* the return address elsewhere than at CFA - 8 */
        UNWIND_UNSUPPORTED_RBP,       /* rbp in a register, by an expression, or off the field's range */
        UNWIND_UNSUPPORTED_MALFORMED, /* the CFA program fails from there (counted once per FDE) */
        _UNWIND_UNSUPPORTED_MAX,
} UnwindUnsupported;

typedef struct UnwindTableStats {
        uint32_t fdes;             /* FDEs compiled */
        uint32_t fdes_debug_frame; /* of those, from .debug_frame (code without .eh_frame) */
        uint32_t fdes_skipped;     /* empty, superseded (another at the same start) or damaged FDEs left out */
        uint32_t cfa_rows;         /* rows of the CFA programs, before merging */
        uint32_t by_kind[16];      /* rows of the table by enum vprof_unwind_kind */
        uint32_t fdes_overlapping; /* cut short by the next function's start (or by the table's reach) */
        uint32_t fdes_bad;         /* a malformed FDE or CIE (left out), or CFA program (compiled up to there) */
        uint32_t unsupported[_UNWIND_UNSUPPORTED_MAX]; /* UNSUPPORTED rows of the CFA programs, by reason */
} UnwindTableStats;

typedef struct UnwindTable {
        uint64_t base;                    /* ELF virtual address of pc_offset 0, a multiple of the index span */
        uint64_t end;                     /* ELF virtual address past the last code covered */
        struct vprof_unwind_entry *index; /* n_index entries, one per VPROF_UNWIND_INDEX_SPAN of [base, end) */
        struct vprof_unwind_entry *rows;  /* n_rows rows, sorted by pc_offset, the last one a GAP */
        uint32_t n_index;
        uint32_t n_rows;
        UnwindTableStats stats;
} UnwindTable;

typedef struct UnwindTableBuilder UnwindTableBuilder;

/* A builder over e, which must outlive it (and is not used by another thread meanwhile). -ENOMEM; -ENOENT
 * when e has no FDE. */
int unwind_table_builder_new(const EhFrame *e, UnwindTableBuilder **ret);
/* Compiles at most max_fdes more FDEs: 1 when all are done, 0 when more remain, negative errno on failure
 * (-EFBIG: more than VPROF_UNWIND_MAX_ROWS rows or 4 GiB of code; -ENOMEM). */
int unwind_table_builder_step(UnwindTableBuilder *b, size_t max_fdes);
/* The table, once step returned 1; the builder is spent. -ENOENT when no FDE could be compiled (every one
 * damaged or empty), -EBUSY before the last step. */
int unwind_table_builder_finish(UnwindTableBuilder *b, UnwindTable **ret);
UnwindTableBuilder *unwind_table_builder_free(UnwindTableBuilder *b);
UnwindTable *unwind_table_free(UnwindTable *t);

/* The rule of one row of a function's CFA program (cie: its CIE): what the compiler stores for it. For the
 * tests, which compare a table with the interpreter's rows. *ret_reason (may be NULL) is set for an
 * UNSUPPORTED rule only. */
uint32_t unwind_table_rule(const Row *row, const CfaCie *cie, UnwindUnsupported *ret_reason);
/* "gap", "cfa-rsp"...: a kind's name for logs and tests; "invalid" for others. */
const char *unwind_table_kind_name(uint32_t kind);

/* The table's bytes as the BPF map holds them: index then rows (t->index: one block, the rows after it). */
static inline size_t unwind_table_size(const UnwindTable *t)
{
        return ((size_t)t->n_index + t->n_rows) * sizeof(struct vprof_unwind_entry);
}

/* The row in effect at ELF virtual address vaddr: the same search the BPF program does, for tests and the
 * daemon's self-check. NULL outside [base, end). */
const struct vprof_unwind_entry *unwind_table_lookup(const UnwindTable *t, uint64_t vaddr);

static inline void unwind_table_freep(UnwindTable **t)
{
        if (*t)
                unwind_table_free(*t);
}
static inline void unwind_table_builder_freep(UnwindTableBuilder **b)
{
        if (*b)
                unwind_table_builder_free(*b);
}
