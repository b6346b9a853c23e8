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

typedef struct UnwindTableStats {
        uint32_t fdes;            /* FDEs compiled */
        uint32_t fdes_skipped;    /* empty, overlapping or damaged FDEs left out */
        uint32_t cfa_rows;        /* rows of the CFA programs, before merging */
        uint32_t by_kind[16];     /* rows of the table by enum vprof_unwind_kind */
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

/* A builder over e, which must outlive it. -ENOMEM; -ENOENT when e has no FDE. */
int unwind_table_builder_new(const EhFrame *e, UnwindTableBuilder **ret);
/* Compiles at most max_fdes more FDEs: 1 when all are done, 0 when more remain, negative errno on failure
 * (-EFBIG: more than VPROF_UNWIND_MAX_ROWS rows or 4 GiB of code; -ENOMEM). */
int unwind_table_builder_step(UnwindTableBuilder *b, size_t max_fdes);
/* The table, once step returned 1; the builder is spent. */
int unwind_table_builder_finish(UnwindTableBuilder *b, UnwindTable **ret);
UnwindTableBuilder *unwind_table_builder_free(UnwindTableBuilder *b);
UnwindTable *unwind_table_free(UnwindTable *t);

/* The table's bytes as the BPF map holds them: index then rows. */
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
