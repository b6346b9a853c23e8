/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwarf-cursor.h"

/* The CFA program of a function, DWARF 5 section 6.4: run up to a pc, it gives the row of the unwinding table
 * there, which says how to find the caller's registers; run over the whole function, it gives every row
 * (cfa_program_rows(), for the compiler of unwind tables, unwind-table.h). Only the x86-64 rules a step needs
 * are kept. */

/* The registers of one frame; ip and sp are run-time addresses. */
typedef struct UnwindRegs {
        uint64_t ip, sp, bp;
} UnwindRegs;

/* What a CIE says about the CFA programs of its FDEs. */
typedef struct CfaCie {
        uint64_t code_align;
        int64_t data_align;
        uint64_t ra_register;
        uint8_t fde_encoding; /* of pc_begin and pc_range in its FDEs, and of DW_CFA_set_loc */
        bool signal_frame;    /* augmentation "S": its FDEs are signal trampolines (__restore_rt) */
} CfaCie;

typedef enum RuleType {
        RULE_SAME,
        RULE_UNDEFINED,
        RULE_OFFSET,         /* saved at CFA + value */
        RULE_VAL_OFFSET,     /* is CFA + value */
        RULE_REGISTER,       /* saved in register value */
        RULE_EXPRESSION,     /* saved at the address a DWARF expression computes, which we do not evaluate */
        RULE_VAL_EXPRESSION, /* is the value a DWARF expression computes */
} RuleType;

/* Expressions are kept as their bytes in the section (expr_size of them at expr), which the compiler of
 * unwind tables matches against the forms it knows; pointer and size apart, so that a row stays small in the
 * EhFrame's row cache. */
typedef struct Rule {
        RuleType type;
        uint32_t expr_size;
        int64_t value;
        const uint8_t *expr; /* RULE_EXPRESSION, RULE_VAL_EXPRESSION */
} Rule;

/* Only the registers a step needs have rules kept; the rest are parsed and dropped. */
enum {
        COLUMN_RBP,
        COLUMN_RA,
        N_COLUMNS,
};

typedef struct Row {
        bool cfa_defined;
        bool cfa_expression;
        uint32_t cfa_expr_size;
        uint64_t cfa_register;
        int64_t cfa_offset;
        const uint8_t *cfa_expr; /* cfa_expression: DW_CFA_def_cfa_expression's bytes */
        Rule columns[N_COLUMNS];
} Row;

/* An expression's bytes as a cursor of their own. */
static inline Cursor expression_cursor(const uint8_t *expr, uint32_t size)
{
        return (Cursor) { .data = expr, .pos = 0, .end = expr ? size : 0 };
}

/* The row at pc of the function starting at pc_begin: the CIE's initial instructions run, then the FDE's.
 * Each cursor is bounded by its record. The row holds from *ret_lo up to *ret_hi (UINT64_MAX: to the end of the
 * function), so that a cache can answer for every pc in between. -EBADMSG malformed instructions. */
int cfa_program_run(const CfaCie *cie, Cursor cie_insns, Cursor fde_insns, uint64_t pc_begin, uint64_t pc,
                    Row *ret, uint64_t *ret_lo, uint64_t *ret_hi);

/* Called by cfa_program_rows() for each row: it holds for [lo, hi). A negative return stops the run with it. */
typedef int (*CfaRowFunc)(uint64_t lo, uint64_t hi, const Row *row, void *userdata);

/* Every row of the function [pc_begin, pc_end), in address order: the same interpreter as cfa_program_run(),
 * run to the end of the instructions, calling emit each time the location advances and once at the end; rows
 * are cut at pc_end and the instructions past it are not read. The rows for which cfa_program_run() would
 * succeed are emitted before a failure: on -EBADMSG, [the last emitted hi, pc_end) is where it fails (pc_begin
 * when nothing was emitted). Bounded by the instructions' bytes: at most one row per byte, and one more. */
int cfa_program_rows(const CfaCie *cie, Cursor cie_insns, Cursor fde_insns, uint64_t pc_begin, uint64_t pc_end,
                     CfaRowFunc emit, void *userdata);

/* The caller of the frame at regs, by the row at regs->ip: window, n_words and the errors are those of
 * eh_frame_unwind_step(). */
int cfa_row_unwind(const Row *row, const UnwindRegs *regs, const uint64_t *window, size_t n_words,
                   UnwindRegs *ret_caller);
