/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the tests of the unwind tables' compiler check on every table (test-unwind-table.c on real files,
 * test-unwind-table-cfi.c on hand-made CFI): the invariants the BPF program relies on, and that at every
 * address the table's rule is the rule of the row the interpreter finds there (eh_frame_find_row(), the
 * daemon's own unwinder, which the compiler does not use). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "eh-frame.h"
#include "macros.h"
#include "unwind-table.h"
#include "vprof-abi.h"

#define RULE(kind, rbp, off) VPROF_UNWIND_RULE(VPROF_UNWIND_##kind, rbp, off)
#define RBP_CFA(n) ((uint32_t)(n) & 0x7fu)
#define RBP_RBP(n) (0x80u | ((uint32_t)(n) & 0x7fu))
#define GAP_RULE RULE(GAP, 0, 0)
#define UNSUPPORTED_RULE RULE(UNSUPPORTED, 0, 0)

static inline const char *rule_string(uint32_t rule, char buf[static 96])
{
        snprintf(buf, 96, "%s off %d rbp %s%+d (%#010x)", unwind_table_kind_name(VPROF_UNWIND_RULE_KIND(rule)),
                 VPROF_UNWIND_RULE_OFF(rule), VPROF_UNWIND_RULE_RBP_FROM_RBP(rule) ? "rbp" : "cfa",
                 8 * VPROF_UNWIND_RULE_RBP_WORDS(rule), rule);
        return buf;
}

static inline void assert_rule(uint32_t got, uint32_t want, uint64_t vaddr)
{
        char a[96], b[96];

        ck_assert_msg(got == want, "at %#llx: %s, expected %s", (unsigned long long)vaddr, rule_string(got, a),
                      rule_string(want, b));
}

/* Compiled in slices of max_fdes FDEs. */
static inline int compile_sliced(const EhFrame *e, size_t max_fdes, UnwindTable **ret)
{
        _cleanup_(unwind_table_builder_freep) UnwindTableBuilder *b = NULL;
        size_t steps = 0;
        int r;

        r = unwind_table_builder_new(e, &b);
        if (r < 0)
                return r;
        ck_assert_int_eq(unwind_table_builder_finish(b, ret), eh_frame_count(e) > 0 ? -EBUSY : -ENOENT);
        do {
                r = unwind_table_builder_step(b, max_fdes);
                ck_assert_uint_le(++steps, eh_frame_count(e) + 1);
        } while (r == 0);
        if (r < 0)
                return r;
        /* Done stays done. */
        ck_assert_int_eq(unwind_table_builder_step(b, max_fdes), 1);
        return unwind_table_builder_finish(b, ret);
}

static inline UnwindTable *compile(const EhFrame *e)
{
        UnwindTable *t = NULL;

        ck_assert_int_eq(compile_sliced(e, SIZE_MAX, &t), 0);
        return t;
}

/* The rule in effect at vaddr: GAP outside the table, as the BPF program reads it. */
static inline uint32_t rule_at(const UnwindTable *t, uint64_t vaddr)
{
        const struct vprof_unwind_entry *row = unwind_table_lookup(t, vaddr);

        return row ? row->b : GAP_RULE;
}

/* What every table must be: sorted rows from the base, the first at 0, no two consecutive equal rules, a GAP
 * last at the end; the index as the BPF program reads it; lookups right at every row's first and last byte. */
static inline void check_invariants(const UnwindTable *t)
{
        uint32_t by_kind[16] = {};
        size_t j = 0;

        ck_assert_uint_ge(t->n_rows, 2);
        ck_assert_uint_le(t->n_rows, VPROF_UNWIND_MAX_ROWS);
        ck_assert_uint_eq(t->base % VPROF_UNWIND_INDEX_SPAN, 0);
        ck_assert_uint_gt(t->end, t->base);
        ck_assert_uint_le(t->end - t->base, UINT32_MAX);
        ck_assert_uint_eq(t->rows[0].a, 0);
        ck_assert_ptr_eq(t->rows, t->index + t->n_index);
        for (size_t i = 0; i < t->n_rows; i++) {
                uint32_t kind = VPROF_UNWIND_RULE_KIND(t->rows[i].b);

                ck_assert_uint_le(kind, VPROF_UNWIND_UNSUPPORTED);
                by_kind[kind]++;
                if (i > 0) {
                        ck_assert_uint_gt(t->rows[i].a, t->rows[i - 1].a);
                        ck_assert_uint_ne(t->rows[i].b, t->rows[i - 1].b);
                }
                if (IN_SET(kind, VPROF_UNWIND_GAP, VPROF_UNWIND_SIGNAL, VPROF_UNWIND_END,
                           VPROF_UNWIND_UNSUPPORTED))
                        ck_assert_uint_eq(t->rows[i].b, kind);
        }
        ck_assert_uint_eq(t->rows[t->n_rows - 1].b, GAP_RULE);
        ck_assert_uint_eq(t->base + t->rows[t->n_rows - 1].a, t->end);
        ck_assert_int_eq(memcmp(by_kind, t->stats.by_kind, sizeof(by_kind)), 0);

        ck_assert_uint_eq(t->n_index, (t->end - t->base + VPROF_UNWIND_INDEX_SPAN - 1) / VPROF_UNWIND_INDEX_SPAN);
        for (size_t k = 0; k < t->n_index; k++) {
                uint64_t lo = (uint64_t)k * VPROF_UNWIND_INDEX_SPAN;
                size_t m;

                while (j + 1 < t->n_rows && t->rows[j + 1].a <= lo)
                        j++;
                m = j;
                while (m + 1 < t->n_rows && t->rows[m + 1].a < lo + VPROF_UNWIND_INDEX_SPAN)
                        m++;
                ck_assert_uint_eq(t->index[k].a, j);
                ck_assert_uint_eq(t->index[k].b, m);
                ck_assert_uint_le(m - j + 1, VPROF_UNWIND_INDEX_SPAN);
        }

        for (size_t i = 0; i + 1 < t->n_rows; i++) {
                ck_assert_ptr_eq(unwind_table_lookup(t, t->base + t->rows[i].a), &t->rows[i]);
                ck_assert_ptr_eq(unwind_table_lookup(t, t->base + t->rows[i + 1].a - 1), &t->rows[i]);
        }
        ck_assert_ptr_null(unwind_table_lookup(t, t->end));
        ck_assert_ptr_null(unwind_table_lookup(t, UINT64_MAX));
        if (t->base > 0)
                ck_assert_ptr_null(unwind_table_lookup(t, t->base - 1));
}

/* The same table whatever the slices. */
static inline void check_slices(const EhFrame *e, const UnwindTable *whole)
{
        static const size_t slices[] = { 0, 1, 7, 200 };

        for (size_t i = 0; i < ELEMENTSOF(slices); i++) {
                _cleanup_(unwind_table_freep) UnwindTable *t = NULL;

                ck_assert_int_eq(compile_sliced(e, slices[i], &t), 0);
                ck_assert_uint_eq(t->n_rows, whole->n_rows);
                ck_assert_uint_eq(t->n_index, whole->n_index);
                ck_assert_uint_eq(t->base, whole->base);
                ck_assert_int_eq(memcmp(t->index, whole->index, unwind_table_size(t)), 0);
                ck_assert_int_eq(memcmp(&t->stats, &whole->stats, sizeof(t->stats)), 0);
        }
}

/* ---- The property: the table agrees with the interpreter ---- */

/* The interpreter's rule at pc: 0, -ENOENT where no FDE covers pc, another error where its CFI fails. */
static inline int interpreter_rule(const EhFrame *e, uint64_t pc, uint32_t *ret)
{
        CfaCie cie;
        Row row;
        int r;

        r = eh_frame_find_row(e, pc, &row, &cie);
        if (r < 0)
                return r;
        *ret = unwind_table_rule(&row, &cie, NULL);
        return 0;
}

static inline void check_pc(const UnwindTable *t, const EhFrame *e, uint64_t pc)
{
        uint32_t want, got = rule_at(t, pc);
        char a[96];
        int r;

        r = interpreter_rule(e, pc, &want);
        if (r == 0) {
                assert_rule(got, want, pc);
                return;
        }
        if (r != -ENOENT) {
                /* Damaged CFI: no rule. */
                ck_assert_msg(IN_SET(got, GAP_RULE, UNSUPPORTED_RULE), "at %#llx: %s where the CFI fails",
                              (unsigned long long)pc, rule_string(got, a));
                return;
        }
        if (got == GAP_RULE)
                return;
        /* Else padding between two functions less than 16 bytes apart: the rule of the function before. */
        for (uint64_t below = pc - 1; below + 16 > pc && below < pc; below--) {
                if (interpreter_rule(e, below, &want) == -ENOENT)
                        continue;
                assert_rule(got, rule_at(t, below), pc);
                for (uint64_t above = pc + 1; above <= below + 16; above++)
                        if (interpreter_rule(e, above, &want) != -ENOENT)
                                return;
                break;
        }
        ck_assert_msg(false, "at %#llx: %s where no FDE is, not in padding", (unsigned long long)pc,
                      rule_string(got, a));
}
