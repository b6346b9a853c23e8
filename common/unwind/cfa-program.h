/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwarf-cursor.h"
#include "eh-frame.h"

/* The CFA program of a function, DWARF 5 section 6.4: run up to a pc, it gives the row of the unwinding table
 * there, which says how to find the caller's registers. Only the x86-64 rules a step needs are kept. */

/* What a CIE says about the CFA programs of its FDEs. */
typedef struct CfaCie {
        uint64_t code_align;
        int64_t data_align;
        uint64_t ra_register;
        uint8_t fde_encoding; /* of pc_begin and pc_range in its FDEs, and of DW_CFA_set_loc */
} CfaCie;

typedef enum RuleType {
        RULE_SAME,
        RULE_UNDEFINED,
        RULE_OFFSET,     /* saved at CFA + value */
        RULE_VAL_OFFSET, /* is CFA + value */
        RULE_REGISTER,   /* saved in register value */
        RULE_EXPRESSION, /* a DWARF expression, which we do not evaluate */
} RuleType;

typedef struct Rule {
        RuleType type;
        int64_t value;
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
        uint64_t cfa_register;
        int64_t cfa_offset;
        Rule columns[N_COLUMNS];
} Row;

/* The row at pc of the function starting at pc_begin: the CIE's initial instructions run, then the FDE's.
 * Each cursor is bounded by its record. The row holds from *ret_lo up to *ret_hi (UINT64_MAX: to the end of the
 * function), so that a cache can answer for every pc in between. -EBADMSG malformed instructions. */
int cfa_program_run(const CfaCie *cie, Cursor cie_insns, Cursor fde_insns, uint64_t pc_begin, uint64_t pc,
                    Row *ret, uint64_t *ret_lo, uint64_t *ret_hi);

/* The caller of the frame at regs, by the row at regs->ip: window, n_words and the errors are those of
 * eh_frame_unwind_step(). */
int cfa_row_unwind(const Row *row, const UnwindRegs *regs, const uint64_t *window, size_t n_words,
                   UnwindRegs *ret_caller);
