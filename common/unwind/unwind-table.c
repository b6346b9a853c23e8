/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfa-program.h"
#include "eh-frame.h"
#include "macros.h"
#include "unwind-table.h"

/* The compiler of unwind tables (docs/UNWINDING.md): each FDE of the sorted table, in address order, run over
 * its whole function (cfa_program_rows()); each row reduced to a rule of vprof-abi.h; consecutive equal rules
 * merged. Lookups by the interpreter (eh_frame_unwind_step()) and in the table agree at every address, except
 * in the padding between two functions, which keeps the rule of the function before it. */

/* DWARF register numbers on x86-64. */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7

/* The DWARF expression operations of the forms we recognize (DWARF 5 section 2.5). */
#define OP_DEREF 0x06
#define OP_AND 0x1a
#define OP_PLUS 0x22
#define OP_PLUS_UCONST 0x23
#define OP_SHL 0x24
#define OP_GE 0x2a
#define OP_LIT0 0x30
#define OP_LIT31 0x4f
#define OP_BREG0 0x70
#define OP_BREG31 0x8f

/* Padding shorter than this between two functions keeps the rule before it: never executed, not worth a
 * row. */
#define GAP_MIN 16

/* The rule fields' ranges (vprof-abi.h). */
#define RBP_WORDS_MIN (-64)
#define RBP_WORDS_MAX 63
#define RBP_FROM_RBP 0x80u
#define DEREF_A_MIN (-2048)
#define DEREF_A_MAX 2047
#define DEREF_B_MAX (255 * 8)
#define REG_LEAF_MAX 15

struct UnwindTableBuilder {
        const EhFrame *e;
        size_t n_entries;
        size_t next; /* the next entry of e's table to compile */
        uint64_t base;
        /* The rows so far, merged; the first a GAP at base. */
        struct vprof_unwind_entry *rows;
        size_t n_rows, allocated;
        /* Where the last function compiled ends, and whether a GAP holds from there (at the start, or after a
         * damaged FDE) rather than the last function's rule. */
        uint64_t covered_end;
        bool gap_open;
        int error; /* a failed step fails every later one */
        UnwindTableStats stats;
};

const char *unwind_table_kind_name(uint32_t kind)
{
        static const char *const names[] = {
                [VPROF_UNWIND_GAP] = "gap",
                [VPROF_UNWIND_CFA_RSP] = "cfa-rsp",
                [VPROF_UNWIND_CFA_RBP] = "cfa-rbp",
                [VPROF_UNWIND_DEREF_RSP] = "deref-rsp",
                [VPROF_UNWIND_DEREF_RBP] = "deref-rbp",
                [VPROF_UNWIND_PLT] = "plt",
                [VPROF_UNWIND_SIGNAL] = "signal",
                [VPROF_UNWIND_END] = "end",
                [VPROF_UNWIND_REG_LEAF] = "reg-leaf",
                [VPROF_UNWIND_UNSUPPORTED] = "unsupported",
        };

        return kind < ELEMENTSOF(names) && names[kind] ? names[kind] : "invalid";
}

/* The expression's bytes, when exactly those of GCC's PLT entries: CFA = rsp + 8 + ((rip & 15) >= T) << 3,
 * DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litT; DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus. */
static bool match_plt(const uint8_t *p, uint32_t size, uint32_t *ret_threshold)
{
        static const uint8_t head[] = { OP_BREG0 + DWARF_REG_RSP, 8, OP_BREG0 + 16, 0, OP_LIT0 + 15, OP_AND };
        static const uint8_t tail[] = { OP_GE, OP_LIT0 + 3, OP_SHL, OP_PLUS };

        if (!p || size != sizeof(head) + 1 + sizeof(tail) || memcmp(p, head, sizeof(head)) != 0 ||
            p[sizeof(head)] < OP_LIT0 || p[sizeof(head)] > OP_LIT31 ||
            memcmp(p + sizeof(head) + 1, tail, sizeof(tail)) != 0)
                return false;
        *ret_threshold = p[sizeof(head)] - OP_LIT0;
        return true;
}

/* DW_OP_bregN a; DW_OP_deref [; DW_OP_plus_uconst b]: a word the frame saved (the realigned frame's pointer to
 * its caller's stack). */
static bool match_deref(Cursor expr, uint64_t *ret_reg, int64_t *ret_a, uint64_t *ret_b)
{
        uint64_t b = 0;
        uint8_t op, deref;
        int64_t a;

        if (read_u8(&expr, &op) < 0 || op < OP_BREG0 || op > OP_BREG31 || read_sleb128(&expr, &a) < 0 ||
            read_u8(&expr, &deref) < 0 || deref != OP_DEREF)
                return false;
        if (expr.pos < expr.end) {
                uint8_t plus;

                if (read_u8(&expr, &plus) < 0 || plus != OP_PLUS_UCONST || read_uleb128(&expr, &b) < 0 ||
                    expr.pos != expr.end)
                        return false;
        }
        *ret_reg = op - OP_BREG0;
        *ret_a = a;
        *ret_b = b;
        return true;
}

/* The rbp field of a rule: where the caller's rbp was saved, in words from the CFA or from the current rbp
 * (DW_OP_breg6 k, the realigned frames' form); 0 unchanged. -EOPNOTSUPP in another register, or off the
 * field's range. */
static int rbp_field(const Rule *rule, uint32_t *ret)
{
        uint32_t from = 0;
        int64_t k;

        switch (rule->type) {
        case RULE_SAME:
        case RULE_UNDEFINED:
                *ret = 0;
                return 0;
        case RULE_OFFSET:
                k = rule->value;
                /* CFA + 0 is the return address's caller side: never where rbp goes. */
                if (k == 0)
                        return -EOPNOTSUPP;
                break;
        case RULE_EXPRESSION: {
                Cursor expr = expression_cursor(rule->expr, rule->expr_size);
                uint8_t op;

                if (read_u8(&expr, &op) < 0 || op != OP_BREG0 + DWARF_REG_RBP || read_sleb128(&expr, &k) < 0 ||
                    expr.pos != expr.end)
                        return -EOPNOTSUPP;
                from = RBP_FROM_RBP;
                break;
        }
        default:
                return -EOPNOTSUPP;
        }
        if (k % 8 != 0 || k / 8 < RBP_WORDS_MIN || k / 8 > RBP_WORDS_MAX)
                return -EOPNOTSUPP;
        *ret = from | ((uint32_t)(k / 8) & 0x7fu);
        return 0;
}

static uint32_t unsupported(UnwindUnsupported reason, UnwindUnsupported *ret_reason)
{
        if (ret_reason)
                *ret_reason = reason;
        return VPROF_UNWIND_RULE(VPROF_UNWIND_UNSUPPORTED, 0, 0);
}

static bool off_in_range(int64_t off)
{
        return off >= VPROF_UNWIND_OFF_MIN && off <= VPROF_UNWIND_OFF_MAX;
}

/* The rule of a CFA expression, else UNSUPPORTED. */
static uint32_t expression_rule(const Row *row, UnwindUnsupported *ret_reason)
{
        uint32_t threshold, rbp;
        uint64_t reg, b;
        int64_t a;

        if (rbp_field(&row->columns[COLUMN_RBP], &rbp) < 0)
                return unsupported(UNWIND_UNSUPPORTED_RBP, ret_reason);
        if (match_plt(row->cfa_expr, row->cfa_expr_size, &threshold))
                return VPROF_UNWIND_RULE(VPROF_UNWIND_PLT, rbp, threshold);
        if (!match_deref(expression_cursor(row->cfa_expr, row->cfa_expr_size), &reg, &a, &b) ||
            !IN_SET(reg, DWARF_REG_RSP, DWARF_REG_RBP))
                return unsupported(UNWIND_UNSUPPORTED_CFA, ret_reason);
        if (a < DEREF_A_MIN || a > DEREF_A_MAX || b % 8 != 0 || b > DEREF_B_MAX)
                return unsupported(UNWIND_UNSUPPORTED_RANGE, ret_reason);
        return VPROF_UNWIND_RULE(reg == DWARF_REG_RSP ? VPROF_UNWIND_DEREF_RSP : VPROF_UNWIND_DEREF_RBP, rbp,
                                 ((uint32_t)a & 0xfffu) | (uint32_t)(b / 8) << 12);
}

uint32_t unwind_table_rule(const Row *row, const CfaCie *cie, UnwindUnsupported *ret_reason)
{
        const Rule *ra = &row->columns[COLUMN_RA];
        uint32_t rbp;

        assert(row);
        assert(cie);

        /* The whole trampoline: the registers are in the ucontext the kernel pushed, whatever its rows say. */
        if (cie->signal_frame)
                return VPROF_UNWIND_RULE(VPROF_UNWIND_SIGNAL, 0, 0);
        if (!row->cfa_defined)
                return unsupported(UNWIND_UNSUPPORTED_CFA, ret_reason);
        if (ra->type == RULE_UNDEFINED)
                return VPROF_UNWIND_RULE(VPROF_UNWIND_END, 0, 0);
        if (ra->type != RULE_OFFSET || ra->value != -8)
                return unsupported(UNWIND_UNSUPPORTED_RA, ret_reason);
        if (row->cfa_expression)
                return expression_rule(row, ret_reason);
        if (!off_in_range(row->cfa_offset))
                return unsupported(UNWIND_UNSUPPORTED_RANGE, ret_reason);
        if (rbp_field(&row->columns[COLUMN_RBP], &rbp) < 0)
                return unsupported(UNWIND_UNSUPPORTED_RBP, ret_reason);
        switch (row->cfa_register) {
        case DWARF_REG_RSP:
                return VPROF_UNWIND_RULE(VPROF_UNWIND_CFA_RSP, rbp, row->cfa_offset);
        case DWARF_REG_RBP:
                return VPROF_UNWIND_RULE(VPROF_UNWIND_CFA_RBP, rbp, row->cfa_offset);
        default:
                /* The rbp field holds the register: only where rbp is still the caller's. */
                if (row->cfa_register > REG_LEAF_MAX || rbp != 0)
                        return unsupported(UNWIND_UNSUPPORTED_REGISTER, ret_reason);
                return VPROF_UNWIND_RULE(VPROF_UNWIND_REG_LEAF, row->cfa_register, row->cfa_offset);
        }
}

/* Adds the rule from vaddr on. Addresses never go down; a rule at the address of the last row replaces it (a
 * function cut short, a row cut at the function's start), and a rule equal to the one in effect adds nothing.
 * -EFBIG beyond VPROF_UNWIND_MAX_ROWS rows or 4 GiB from the base. */
static int append(UnwindTableBuilder *b, uint64_t vaddr, uint32_t rule)
{
        struct vprof_unwind_entry *last = b->n_rows > 0 ? &b->rows[b->n_rows - 1] : NULL;
        uint64_t off;

        if (vaddr < b->base || vaddr - b->base > UINT32_MAX)
                return -EFBIG;
        off = vaddr - b->base;
        assert(!last || off >= last->a);
        if (last && off == last->a) {
                last->b = rule;
                if (b->n_rows > 1 && b->rows[b->n_rows - 2].b == rule)
                        b->n_rows--;
                return 0;
        }
        if (last && last->b == rule)
                return 0;
        if (b->n_rows == b->allocated) {
                size_t allocated = MIN(MAX(b->allocated * 2, (size_t)256), (size_t)VPROF_UNWIND_MAX_ROWS);
                struct vprof_unwind_entry *rows;

                if (b->n_rows >= VPROF_UNWIND_MAX_ROWS)
                        return -EFBIG;
                rows = realloc(b->rows, allocated * sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
                b->rows = rows;
                b->allocated = allocated;
        }
        b->rows[b->n_rows++] = (struct vprof_unwind_entry) { .a = (uint32_t)off, .b = rule };
        return 0;
}

int unwind_table_builder_new(const EhFrame *e, UnwindTableBuilder **ret)
{
        UnwindTableBuilder *b;
        int r;

        assert(e);
        assert(ret);

        if (eh_frame_count(e) == 0)
                return -ENOENT;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->e = e;
        b->n_entries = eh_frame_count(e);
        /* The table's first function is the lowest. */
        b->base = eh_frame_table_pc(e, 0) & ~(uint64_t)(VPROF_UNWIND_INDEX_SPAN - 1);
        b->covered_end = b->base;
        b->gap_open = true;
        /* Every address of the table has a row in effect, those below the first function too. */
        r = append(b, b->base, VPROF_UNWIND_RULE(VPROF_UNWIND_GAP, 0, 0));
        if (r < 0) {
                unwind_table_builder_free(b);
                return r;
        }
        *ret = b;
        return 0;
}

UnwindTableBuilder *unwind_table_builder_free(UnwindTableBuilder *b)
{
        if (!b)
                return NULL;
        free(b->rows);
        free(b);
        return NULL;
}

/* The rows of one function, as cfa_program_rows() gives them, cut to [start, end). */
typedef struct FunctionRows {
        UnwindTableBuilder *b;
        const CfaCie *cie;
        uint64_t start;
        uint64_t emitted_end; /* where the rows emitted so far end */
} FunctionRows;

static int function_row(uint64_t lo, uint64_t hi, const Row *row, void *userdata)
{
        FunctionRows *f = userdata;
        UnwindUnsupported reason = _UNWIND_UNSUPPORTED_MAX;
        uint32_t rule;

        f->emitted_end = hi;
        /* Before the part of the function that is this FDE's: a later row holds at its start. */
        if (hi <= f->start)
                return 0;
        f->b->stats.cfa_rows++;
        rule = unwind_table_rule(row, f->cie, &reason);
        if (reason < _UNWIND_UNSUPPORTED_MAX)
                f->b->stats.unsupported[reason]++;
        return append(f->b, MAX(lo, f->start), rule);
}

/* From vaddr, no rule: unless the previous one is a GAP already. */
static int open_gap(UnwindTableBuilder *b, uint64_t vaddr)
{
        int r;

        if (b->gap_open)
                return 0;
        r = append(b, vaddr, VPROF_UNWIND_RULE(VPROF_UNWIND_GAP, 0, 0));
        if (r < 0)
                return r;
        b->gap_open = true;
        return 0;
}

/* Before code that starts at vaddr: a gap from the end of the last function, unless it is padding. */
static int end_function(UnwindTableBuilder *b, uint64_t vaddr)
{
        if (vaddr - b->covered_end < GAP_MIN)
                return 0;
        return open_gap(b, b->covered_end);
}

/* The i-th function of the table. Its FDE holds from where the table says it starts up to the next one's
 * start (the last one up to the table's reach), within its own range: a lookup takes the last function that
 * starts at or below the address, as eh_frame_unwind_step() does. */
static int compile_function(UnwindTableBuilder *b, size_t i)
{
        uint64_t lo = eh_frame_table_pc(b->e, i), hi = eh_frame_table_limit(b->e), start, end;
        FunctionRows f;
        EhFrameFde fde;
        int r;

        /* The next start, unless the table's addresses go round the 64-bit space there. */
        if (i + 1 < b->n_entries && eh_frame_table_pc(b->e, i + 1) >= lo)
                hi = eh_frame_table_pc(b->e, i + 1);
        /* Another FDE for the same address replaces it; an address below the previous function's end is a
         * table gone round the 32-bit space. */
        if (hi == lo || lo < b->covered_end) {
                b->stats.fdes_skipped++;
                return 0;
        }
        r = eh_frame_fde(b->e, i, &fde);
        if (r < 0) {
                /* Only its start is known: from there, nothing. */
                b->stats.fdes_bad++;
                b->stats.fdes_skipped++;
                r = end_function(b, lo);
                if (r >= 0)
                        r = open_gap(b, lo);
                if (r >= 0)
                        b->covered_end = lo;
                return r;
        }

        start = MAX(lo, fde.pc_begin);
        end = fde.pc_range > UINT64_MAX - fde.pc_begin ? UINT64_MAX : fde.pc_begin + fde.pc_range;
        if (end > hi) {
                b->stats.fdes_overlapping++;
                end = hi;
        }
        if (start >= end) {
                b->stats.fdes_skipped++;
                return 0;
        }
        r = end_function(b, start);
        if (r < 0)
                return r;

        f = (FunctionRows) { .b = b, .cie = &fde.cie, .start = start, .emitted_end = start };
        r = cfa_program_rows(&fde.cie, fde.cie_insns, fde.fde_insns, fde.pc_begin, end, function_row, &f);
        if (IN_SET(r, -EFBIG, -ENOMEM))
                return r;
        if (r < 0) {
                /* Malformed instructions: the rows before them stand, as they do for the interpreter. */
                b->stats.fdes_bad++;
                if (MAX(f.emitted_end, start) < end) {
                        b->stats.unsupported[UNWIND_UNSUPPORTED_MALFORMED]++;
                        r = append(b, MAX(f.emitted_end, start),
                                   VPROF_UNWIND_RULE(VPROF_UNWIND_UNSUPPORTED, 0, 0));
                        if (r < 0)
                                return r;
                }
        }
        b->stats.fdes++;
        b->stats.fdes_debug_frame += fde.debug_frame;
        b->covered_end = end;
        b->gap_open = false;
        return 0;
}

int unwind_table_builder_step(UnwindTableBuilder *b, size_t max_fdes)
{
        int r;

        assert(b);

        if (b->error < 0)
                return b->error;
        for (size_t n = 0; n < MAX(max_fdes, (size_t)1) && b->next < b->n_entries; n++) {
                r = compile_function(b, b->next++);
                if (r < 0)
                        return (b->error = r);
        }
        if (b->next < b->n_entries)
                return 0;
        /* After the last function: the table's end. */
        r = open_gap(b, b->covered_end);
        if (r < 0)
                return (b->error = r);
        return 1;
}

/* Index entry k covers [k, k + 1) spans from the base: a = the row in effect at its start, b = the last row
 * that starts in it (a when none does). A span has at most VPROF_UNWIND_INDEX_SPAN rows to search, a and those
 * starting after its first byte. */
static void build_index(UnwindTable *t)
{
        size_t j = 0;

        for (size_t k = 0; k < t->n_index; k++) {
                uint64_t lo = (uint64_t)k << VPROF_UNWIND_INDEX_SPAN_SHIFT, hi = lo + VPROF_UNWIND_INDEX_SPAN;
                size_t m;

                while (j + 1 < t->n_rows && t->rows[j + 1].a <= lo)
                        j++;
                m = j;
                while (m + 1 < t->n_rows && t->rows[m + 1].a < hi)
                        m++;
                t->index[k] = (struct vprof_unwind_entry) { .a = (uint32_t)j, .b = (uint32_t)m };
        }
}

int unwind_table_builder_finish(UnwindTableBuilder *b, UnwindTable **ret)
{
        UnwindTable *t;
        uint64_t size;

        assert(b);
        assert(ret);

        if (b->error < 0)
                return b->error;
        if (b->next < b->n_entries || !b->gap_open)
                return -EBUSY;
        /* No function compiled: the leading GAP alone. */
        if (b->stats.fdes == 0)
                return -ENOENT;
        assert(b->n_rows >= 2);

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        size = b->rows[b->n_rows - 1].a;
        t->base = b->base;
        t->end = b->base + size;
        t->n_index = (uint32_t)((size + VPROF_UNWIND_INDEX_SPAN - 1) >> VPROF_UNWIND_INDEX_SPAN_SHIFT);
        t->n_rows = (uint32_t)b->n_rows;
        /* One block, as the BPF map holds it: the index, then the rows. */
        t->index = malloc(((size_t)t->n_index + t->n_rows) * sizeof(struct vprof_unwind_entry));
        if (!t->index) {
                free(t);
                return -ENOMEM;
        }
        t->rows = t->index + t->n_index;
        memcpy(t->rows, b->rows, b->n_rows * sizeof(struct vprof_unwind_entry));
        build_index(t);

        t->stats = b->stats;
        for (size_t i = 0; i < t->n_rows; i++)
                t->stats.by_kind[VPROF_UNWIND_RULE_KIND(t->rows[i].b)]++;
        *ret = t;
        return 0;
}

UnwindTable *unwind_table_free(UnwindTable *t)
{
        if (!t)
                return NULL;
        free(t->index); /* the rows too: one block */
        free(t);
        return NULL;
}

const struct vprof_unwind_entry *unwind_table_lookup(const UnwindTable *t, uint64_t vaddr)
{
        const struct vprof_unwind_entry *ix;
        uint32_t off, base, n;

        assert(t);

        if (vaddr < t->base || vaddr >= t->end)
                return NULL;
        off = (uint32_t)(vaddr - t->base);
        if ((off >> VPROF_UNWIND_INDEX_SPAN_SHIFT) >= t->n_index)
                return NULL;
        ix = &t->index[off >> VPROF_UNWIND_INDEX_SPAN_SHIFT];
        base = ix->a;
        n = ix->b - ix->a + 1;
        /* The BPF program's search: a fixed number of branch-free halvings, the last row at or below off. Row
         * base is at or below off from the start, and n <= VPROF_UNWIND_INDEX_SPAN = 2^10. */
        for (unsigned step = 0; step < VPROF_UNWIND_INDEX_SPAN_SHIFT; step++) {
                uint32_t half = n >> 1;

                base += half * (uint32_t)(1 - (((uint64_t)off - t->rows[base + half].a) >> 63));
                n -= half;
        }
        return &t->rows[base];
}
