/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "cfa-program.h"
#include "macros.h"

/* DWARF register numbers on x86-64. */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7

/* Call frame instructions, DW_CFA_*: the first three carry an operand in their low 6 bits. */
#define CFA_ADVANCE_LOC 0x40
#define CFA_OFFSET 0x80
#define CFA_RESTORE 0xc0
#define CFA_NOP 0x00
#define CFA_SET_LOC 0x01
#define CFA_ADVANCE_LOC1 0x02
#define CFA_ADVANCE_LOC2 0x03
#define CFA_ADVANCE_LOC4 0x04
#define CFA_OFFSET_EXTENDED 0x05
#define CFA_RESTORE_EXTENDED 0x06
#define CFA_UNDEFINED 0x07
#define CFA_SAME_VALUE 0x08
#define CFA_REGISTER 0x09
#define CFA_REMEMBER_STATE 0x0a
#define CFA_RESTORE_STATE 0x0b
#define CFA_DEF_CFA 0x0c
#define CFA_DEF_CFA_REGISTER 0x0d
#define CFA_DEF_CFA_OFFSET 0x0e
#define CFA_DEF_CFA_EXPRESSION 0x0f
#define CFA_EXPRESSION 0x10
#define CFA_OFFSET_EXTENDED_SF 0x11
#define CFA_DEF_CFA_SF 0x12
#define CFA_DEF_CFA_OFFSET_SF 0x13
#define CFA_VAL_OFFSET 0x14
#define CFA_VAL_OFFSET_SF 0x15
#define CFA_VAL_EXPRESSION 0x16
#define CFA_GNU_WINDOW_SAVE 0x2d
#define CFA_GNU_ARGS_SIZE 0x2e
#define CFA_GNU_NEGATIVE_OFFSET_EXTENDED 0x2f

/* GCC nests remember_state at most a few deep (one per epilogue in flight); deeper is a broken file. */
#define STATE_STACK_MAX 16

/* The state of the CFA program run up to pc, or over the whole function when emit is set. */
typedef struct Interp {
        const CfaCie *cie;
        uint64_t pc;
        uint64_t loc;  /* where the current row starts */
        uint64_t next; /* where the row after it starts, once an advance went beyond pc; UINT64_MAX before */
        CfaRowFunc emit;
        void *userdata;
        uint64_t pc_end; /* emit: the end of the function */
        bool in_cie;
        Row row;
        Row initial; /* after the CIE's instructions: what DW_CFA_restore goes back to */
        Row stack[STATE_STACK_MAX];
        size_t n_stack;
} Interp;

static Rule default_rule(int column)
{
        /* rbp is callee-saved: untouched unless said otherwise. A return address without a rule is none. */
        return (Rule) { .type = column == COLUMN_RBP ? RULE_SAME : RULE_UNDEFINED };
}

static int column_of(const Interp *in, uint64_t reg)
{
        if (reg == in->cie->ra_register)
                return COLUMN_RA;
        if (reg == DWARF_REG_RBP)
                return COLUMN_RBP;
        return -1;
}

static void set_rule(Interp *in, uint64_t reg, RuleType type, int64_t value)
{
        int col = column_of(in, reg);

        if (col >= 0)
                in->row.columns[col] = (Rule) { .type = type, .value = value };
}

static void restore_rule(Interp *in, uint64_t reg)
{
        int col = column_of(in, reg);

        if (col >= 0)
                in->row.columns[col] = in->in_cie ? default_rule(col) : in->initial.columns[col];
}

/* Offsets are factored by the CIE's data alignment; the arithmetic wraps instead of overflowing. */
static int64_t factored(const Interp *in, uint64_t n)
{
        return (int64_t)(n * (uint64_t)in->cie->data_align);
}

/* 1 when the new row starts beyond pc: the current one is the answer. Over a whole function: the current row
 * is emitted when the location moves, and 1 past the function's end. */
static int set_loc(Interp *in, uint64_t loc)
{
        int r;

        if (loc < in->loc)
                return -EBADMSG;
        if (in->emit) {
                if (loc == in->loc)
                        return 0;
                r = in->emit(in->loc, MIN(loc, in->pc_end), &in->row, in->userdata);
                if (r < 0)
                        return r;
                in->loc = loc;
                return loc >= in->pc_end;
        }
        if (loc > in->pc) {
                in->next = loc;
                return 1;
        }
        in->loc = loc;
        return 0;
}

static int advance(Interp *in, uint64_t delta)
{
        uint64_t d = delta * in->cie->code_align;

        /* Past the end of the address space is past pc too, and past the function's end. */
        if ((in->cie->code_align != 0 && d / in->cie->code_align != delta) || in->loc + d < in->loc)
                return in->emit ? set_loc(in, UINT64_MAX) : 1;
        return set_loc(in, in->loc + d);
}

/* Run the instructions from c: 1 when stopped at pc, 0 at their end. Every instruction takes at least a
 * byte, so c's end bounds the loop. */
static int run_program(Interp *in, Cursor c)
{
        int r = 0;

        while (r == 0 && c.pos < c.end) {
                uint64_t reg, n, v;
                int64_t s;
                uint8_t op;

                r = read_u8(&c, &op);
                if (r < 0)
                        return r;

                switch (op & 0xc0) {
                case CFA_ADVANCE_LOC:
                        r = advance(in, op & 0x3f);
                        continue;
                case CFA_OFFSET:
                        r = read_uleb128(&c, &n);
                        if (r >= 0)
                                set_rule(in, op & 0x3f, RULE_OFFSET, factored(in, n));
                        continue;
                case CFA_RESTORE:
                        restore_rule(in, op & 0x3f);
                        continue;
                }

                switch (op) {
                case CFA_NOP:
                case CFA_GNU_WINDOW_SAVE: /* SPARC, or AArch64's negate_ra_state: nothing on x86-64 */
                        break;
                case CFA_SET_LOC:
                        r = read_encoded(&c, in->cie->fde_encoding, NULL, &v);
                        if (r >= 0)
                                r = set_loc(in, v);
                        break;
                case CFA_ADVANCE_LOC1:
                case CFA_ADVANCE_LOC2:
                case CFA_ADVANCE_LOC4:
                        r = read_le(&c, op == CFA_ADVANCE_LOC1 ? 1 : op == CFA_ADVANCE_LOC2 ? 2 : 4, &v);
                        if (r >= 0)
                                r = advance(in, v);
                        break;
                case CFA_OFFSET_EXTENDED:
                case CFA_VAL_OFFSET:
                case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
                        r = read_uleb128(&c, &reg);
                        if (r >= 0)
                                r = read_uleb128(&c, &n);
                        if (r >= 0)
                                set_rule(in, reg, op == CFA_VAL_OFFSET ? RULE_VAL_OFFSET : RULE_OFFSET,
                                         factored(in, op == CFA_GNU_NEGATIVE_OFFSET_EXTENDED ? 0 - n : n));
                        break;
                case CFA_OFFSET_EXTENDED_SF:
                case CFA_VAL_OFFSET_SF:
                        r = read_uleb128(&c, &reg);
                        if (r >= 0)
                                r = read_sleb128(&c, &s);
                        if (r >= 0)
                                set_rule(in, reg, op == CFA_VAL_OFFSET_SF ? RULE_VAL_OFFSET : RULE_OFFSET,
                                         factored(in, (uint64_t)s));
                        break;
                case CFA_RESTORE_EXTENDED:
                case CFA_UNDEFINED:
                case CFA_SAME_VALUE:
                        r = read_uleb128(&c, &reg);
                        if (r < 0)
                                break;
                        if (op == CFA_RESTORE_EXTENDED)
                                restore_rule(in, reg);
                        else
                                set_rule(in, reg, op == CFA_UNDEFINED ? RULE_UNDEFINED : RULE_SAME, 0);
                        break;
                case CFA_REGISTER:
                        r = read_uleb128(&c, &reg);
                        if (r >= 0)
                                r = read_uleb128(&c, &n);
                        if (r >= 0)
                                set_rule(in, reg, RULE_REGISTER, (int64_t)n);
                        break;
                case CFA_REMEMBER_STATE:
                        if (in->n_stack >= STATE_STACK_MAX)
                                return -EBADMSG;
                        in->stack[in->n_stack++] = in->row;
                        break;
                case CFA_RESTORE_STATE:
                        /* The CFA rule comes back too, as GCC expects after an epilogue. */
                        if (in->n_stack == 0)
                                return -EBADMSG;
                        in->row = in->stack[--in->n_stack];
                        break;
                case CFA_DEF_CFA:
                case CFA_DEF_CFA_SF:
                        r = read_uleb128(&c, &reg);
                        if (r < 0)
                                break;
                        if (op == CFA_DEF_CFA) {
                                r = read_uleb128(&c, &n);
                                s = (int64_t)n;
                        } else {
                                r = read_sleb128(&c, &s);
                                s = factored(in, (uint64_t)s);
                        }
                        if (r >= 0) {
                                in->row.cfa_defined = true;
                                in->row.cfa_expression = false;
                                in->row.cfa_register = reg;
                                in->row.cfa_offset = s;
                        }
                        break;
                case CFA_DEF_CFA_REGISTER:
                        r = read_uleb128(&c, &reg);
                        if (r < 0)
                                break;
                        if (!in->row.cfa_defined || in->row.cfa_expression)
                                return -EBADMSG;
                        in->row.cfa_register = reg;
                        break;
                case CFA_DEF_CFA_OFFSET:
                case CFA_DEF_CFA_OFFSET_SF:
                        if (op == CFA_DEF_CFA_OFFSET) {
                                r = read_uleb128(&c, &n);
                                s = (int64_t)n;
                        } else {
                                r = read_sleb128(&c, &s);
                                s = factored(in, (uint64_t)s);
                        }
                        if (r < 0)
                                break;
                        if (!in->row.cfa_defined || in->row.cfa_expression)
                                return -EBADMSG;
                        in->row.cfa_offset = s;
                        break;
                case CFA_DEF_CFA_EXPRESSION: {
                        Cursor expr;

                        r = read_block(&c, &expr);
                        if (r < 0)
                                break;
                        if (expr.end - expr.pos > UINT32_MAX)
                                return -EBADMSG;
                        in->row.cfa_defined = true;
                        in->row.cfa_expression = true;
                        in->row.cfa_expr = expr.data + expr.pos;
                        in->row.cfa_expr_size = (uint32_t)(expr.end - expr.pos);
                        break;
                }
                case CFA_EXPRESSION:
                case CFA_VAL_EXPRESSION: {
                        Cursor expr;
                        int col;

                        r = read_uleb128(&c, &reg);
                        if (r >= 0)
                                r = read_block(&c, &expr);
                        if (r < 0)
                                break;
                        if (expr.end - expr.pos > UINT32_MAX)
                                return -EBADMSG;
                        set_rule(in, reg, op == CFA_EXPRESSION ? RULE_EXPRESSION : RULE_VAL_EXPRESSION, 0);
                        col = column_of(in, reg);
                        if (col >= 0) {
                                in->row.columns[col].expr = expr.data + expr.pos;
                                in->row.columns[col].expr_size = (uint32_t)(expr.end - expr.pos);
                        }
                        break;
                }
                case CFA_GNU_ARGS_SIZE:
                        r = read_uleb128(&c, &n);
                        break;
                default:
                        return -EBADMSG;
                }
        }
        return r;
}

/* From the default rules, the CIE's initial instructions (whose row DW_CFA_restore goes back to), then the
 * FDE's: run_program()'s result. */
static int run_cie_and_fde(Interp *in, Cursor cie_insns, Cursor fde_insns)
{
        int r;

        for (int col = 0; col < N_COLUMNS; col++)
                in->row.columns[col] = default_rule(col);
        r = run_program(in, cie_insns);
        if (r == 0) {
                in->initial = in->row;
                in->in_cie = false;
                r = run_program(in, fde_insns);
        }
        return r;
}

int cfa_program_run(const CfaCie *cie, Cursor cie_insns, Cursor fde_insns, uint64_t pc_begin, uint64_t pc,
                    Row *ret, uint64_t *ret_lo, uint64_t *ret_hi)
{
        Interp in = { .cie = cie, .pc = pc, .loc = pc_begin, .next = UINT64_MAX, .in_cie = true };
        int r;

        assert(cie);
        assert(ret);
        assert(ret_lo);
        assert(ret_hi);

        r = run_cie_and_fde(&in, cie_insns, fde_insns);
        if (r < 0)
                return r;
        *ret = in.row;
        *ret_lo = in.loc;
        *ret_hi = in.next;
        return 0;
}

int cfa_program_rows(const CfaCie *cie, Cursor cie_insns, Cursor fde_insns, uint64_t pc_begin, uint64_t pc_end,
                     CfaRowFunc emit, void *userdata)
{
        Interp in = { .cie = cie, .loc = pc_begin, .next = UINT64_MAX, .emit = emit, .userdata = userdata,
                      .pc_end = pc_end, .in_cie = true };
        int r;

        assert(cie);
        assert(emit);

        if (pc_begin >= pc_end)
                return 0;
        r = run_cie_and_fde(&in, cie_insns, fde_insns);
        if (r < 0)
                return r;
        /* Stopped past the end: every row is out. Else the last one holds to the end. */
        if (r == 0)
                return emit(in.loc, pc_end, &in.row, userdata);
        return 0;
}

static int register_value(const UnwindRegs *regs, uint64_t reg, uint64_t *ret)
{
        if (reg == DWARF_REG_RSP)
                *ret = regs->sp;
        else if (reg == DWARF_REG_RBP)
                *ret = regs->bp;
        else
                return -EOPNOTSUPP; /* the sample has no other register */
        return 0;
}

static int window_read(const UnwindRegs *regs, const uint64_t *window, size_t n_words, uint64_t addr,
                       uint64_t *ret)
{
        size_t size = MIN(n_words, SIZE_MAX / sizeof(uint64_t)) * sizeof(uint64_t);
        uint64_t off = addr - regs->sp;

        if (addr < regs->sp || size < sizeof(uint64_t) || off > size - sizeof(uint64_t))
                return -ERANGE;
        memcpy(ret, (const uint8_t *)window + off, sizeof(uint64_t));
        return 0;
}

/* The caller's value of a register, by its rule; current is its value in the frame itself. */
static int rule_value(const Rule *rule, uint64_t cfa, uint64_t current, const UnwindRegs *regs,
                      const uint64_t *window, size_t n_words, uint64_t *ret)
{
        switch (rule->type) {
        case RULE_SAME:
                *ret = current;
                return 0;
        case RULE_UNDEFINED:
                *ret = 0;
                return 0;
        case RULE_OFFSET:
                return window_read(regs, window, n_words, cfa + (uint64_t)rule->value, ret);
        case RULE_VAL_OFFSET:
                *ret = cfa + (uint64_t)rule->value;
                return 0;
        case RULE_REGISTER:
                return register_value(regs, (uint64_t)rule->value, ret);
        case RULE_EXPRESSION:
        case RULE_VAL_EXPRESSION:
                return -EOPNOTSUPP;
        }
        return -EBADMSG;
}

int cfa_row_unwind(const Row *row, const UnwindRegs *regs, const uint64_t *window, size_t n_words,
                   UnwindRegs *ret_caller)
{
        uint64_t cfa, ra, bp;
        int r;

        assert(row);
        assert(regs);
        assert(window || n_words == 0);
        assert(ret_caller);

        if (!row->cfa_defined)
                return -EBADMSG;
        if (row->cfa_expression)
                return -EOPNOTSUPP;
        r = register_value(regs, row->cfa_register, &cfa);
        if (r < 0)
                return r;
        cfa += (uint64_t)row->cfa_offset;

        switch (row->columns[COLUMN_RA].type) {
        case RULE_UNDEFINED:
                return -ENOENT; /* the outermost frame: _start, a thread's start */
        case RULE_SAME:
                return -EBADMSG;
        default:
                break;
        }
        r = rule_value(&row->columns[COLUMN_RA], cfa, regs->ip, regs, window, n_words, &ra);
        if (r < 0)
                return r;
        r = rule_value(&row->columns[COLUMN_RBP], cfa, regs->bp, regs, window, n_words, &bp);
        if (r < 0)
                return r;

        /* On x86-64 the CFA is the caller's sp by definition. */
        *ret_caller = (UnwindRegs) { .ip = ra, .sp = cfa, .bp = bp };
        return 0;
}
