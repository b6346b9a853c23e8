/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The compiler of unwind tables (common/unwind/unwind-table.c) on hand-made CFI: each form of rule it knows,
 * each it refuses, the layout of functions (padding, gaps, overlaps, repeated and empty FDEs, a header that
 * lies), damaged CFA programs, the fullest index span, the 4 GiB limit; and cfa_program_rows(), which it runs
 * over each function. Every table is also checked against the interpreter at every address around it. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "unwind-table-check.h"

#define FAKE_EH_FRAME_VADDR UINT64_C(0x400000)
#define FAKE_HDR_VADDR UINT64_C(0x3ff000)

typedef struct Cfi {
        uint8_t data[8192];
        size_t n, cie;
        uint32_t fdes[16]; /* offsets, for a header */
        uint32_t pcs[16];
        size_t n_fdes;
} Cfi;

static void put(Cfi *c, const void *p, size_t n)
{
        ck_assert_uint_le(c->n + n, sizeof(c->data));
        if (n > 0)
                memcpy(c->data + c->n, p, n);
        c->n += n;
}

static void put_u32(Cfi *c, uint32_t v)
{
        uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

        put(c, b, 4);
}

static void patch_u32(Cfi *c, size_t at, uint32_t v)
{
        for (size_t i = 0; i < 4; i++)
                c->data[at + i] = (uint8_t)(v >> (8 * i));
}

/* A CIE as GCC writes them (code alignment 1, data alignment -8, return address column 16, FDE pointers
 * udata4), with "zR" or "zRS", its instructions after GCC's initial ones (CFA = rsp + 8, return address at
 * CFA - 8). */
static void cfi_cie(Cfi *c, bool signal_frame, const uint8_t *insns, size_t n)
{
        static const uint8_t initial[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
        size_t len_at = c->n;

        c->cie = c->n;
        put_u32(c, 0);
        put_u32(c, 0); /* CIE id */
        put(c, (const uint8_t[]) { 1 }, 1);
        put(c, signal_frame ? "zRS" : "zR", signal_frame ? 4 : 3);
        put(c, (const uint8_t[]) { 1, 0x78, 16, 1, 0x03 }, 5);
        put(c, initial, sizeof(initial));
        put(c, insns, n);
        patch_u32(c, len_at, (uint32_t)(c->n - len_at - 4));
}

static void cfi_fde(Cfi *c, uint32_t pc, uint32_t range, const uint8_t *insns, size_t n)
{
        size_t len_at = c->n;

        ck_assert_uint_lt(c->n_fdes, ELEMENTSOF(c->fdes));
        c->fdes[c->n_fdes] = (uint32_t)c->n;
        c->pcs[c->n_fdes++] = pc;
        put_u32(c, 0);
        put_u32(c, (uint32_t)(c->n - c->cie)); /* back to the CIE */
        put_u32(c, pc);
        put_u32(c, range);
        put(c, (const uint8_t[]) { 0 }, 1); /* no augmentation data */
        put(c, insns, n);
        patch_u32(c, len_at, (uint32_t)(c->n - len_at - 4));
}

/* .eh_frame (with its terminator) scanned, or through a header whose table gives the FDEs' pcs (as said, or
 * as pcs[] was changed since). */
static EhFrame *cfi_load(Cfi *c, bool hdr)
{
        uint8_t h[16 + 8 * ELEMENTSOF(c->fdes)];
        size_t n = 0;
        EhFrame *e = NULL;
        uint32_t v[4 + 2 * ELEMENTSOF(c->fdes)];

        put_u32(c, 0);
        if (hdr) {
                /* Sorted by pc, as a linker writes it. */
                for (size_t i = 1; i < c->n_fdes; i++)
                        for (size_t j = i; j > 0 && c->pcs[j - 1] > c->pcs[j]; j--) {
                                uint32_t p = c->pcs[j], f = c->fdes[j];

                                c->pcs[j] = c->pcs[j - 1];
                                c->fdes[j] = c->fdes[j - 1];
                                c->pcs[j - 1] = p;
                                c->fdes[j - 1] = f;
                        }
                h[0] = 1;    /* version */
                h[1] = 0x1b; /* eh_frame_ptr: pcrel sdata4 */
                h[2] = 0x03; /* fde_count: udata4 */
                h[3] = 0x3b; /* table: datarel sdata4 */
                v[n++] = (uint32_t)(FAKE_EH_FRAME_VADDR - (FAKE_HDR_VADDR + 4));
                v[n++] = (uint32_t)c->n_fdes;
                for (size_t i = 0; i < c->n_fdes; i++) {
                        v[n++] = (uint32_t)(c->pcs[i] - FAKE_HDR_VADDR);
                        v[n++] = (uint32_t)(FAKE_EH_FRAME_VADDR + c->fdes[i] - FAKE_HDR_VADDR);
                }
                for (size_t i = 0; i < n; i++)
                        for (size_t k = 0; k < 4; k++)
                                h[4 + 4 * i + k] = (uint8_t)(v[i] >> (8 * k));
        }
        ck_assert_int_eq(eh_frame_new(c->data, c->n, FAKE_EH_FRAME_VADDR, hdr ? h : NULL, hdr ? 4 + 4 * n : 0,
                                      FAKE_HDR_VADDR, &e),
                         0);
        return e;
}

/* The rule of one FDE at 0x1000..0x1100 whose program is insns (after the CIE's extra ones), at pc. */
static uint32_t one_rule(bool signal_frame, const uint8_t *cie_insns, size_t n_cie, const uint8_t *insns,
                         size_t n, uint64_t pc, UnwindTableStats *ret_stats)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
        Cfi c = {};

        cfi_cie(&c, signal_frame, cie_insns, n_cie);
        cfi_fde(&c, 0x1000, 0x100, insns, n);
        e = cfi_load(&c, false);
        t = compile(e);
        check_invariants(t);
        for (uint64_t p = 0xf00; p < 0x1200; p++)
                check_pc(t, e, p);
        if (ret_stats)
                *ret_stats = t->stats;
        return rule_at(t, pc);
}

#define RULE_OF(insns, pc) one_rule(false, NULL, 0, insns, sizeof(insns), pc, NULL)

START_TEST(test_handmade_rules)
{
        static const uint8_t plt[] = { 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
        static const uint8_t plt10[] = { 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22 };
        static const uint8_t plt_other[] = { 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x34, 0x24,
                                             0x22 };
        static const uint8_t deref_rsp[] = { 0x0f, 0x03, 0x77, 0x10, 0x06 };
        static const uint8_t deref_rsp_plus[] = { 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x08 };
        static const uint8_t drap[] = { 0x0f, 0x03, 0x76, 0x78, 0x06, 0x10, 0x06, 0x02, 0x76, 0x00 };
        static const uint8_t deref_rbx[] = { 0x0f, 0x03, 0x73, 0x08, 0x06 };
        static const uint8_t deref_far[] = { 0x0f, 0x04, 0x77, 0x80, 0x20, 0x06 };   /* breg7 4096 */
        static const uint8_t deref_plus_odd[] = { 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x04 };
        static const uint8_t deref_trailing[] = { 0x0f, 0x04, 0x77, 0x10, 0x06, 0x06 };
        static const uint8_t frame_pointer[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06 };
        static const uint8_t ra_undefined[] = { 0x07, 0x10 };
        static const uint8_t ra_in_rbx[] = { 0x09, 0x10, 0x03 };
        static const uint8_t ra_elsewhere[] = { 0x90, 0x02 };
        static const uint8_t ra_expression[] = { 0x10, 0x10, 0x02, 0x77, 0x08 };
        static const uint8_t cfa_r10[] = { 0x0c, 0x0a, 0x00 };
        static const uint8_t cfa_r17[] = { 0x0c, 0x11, 0x08 };
        static const uint8_t cfa_r10_rbp_saved[] = { 0x86, 0x02, 0x0c, 0x0a, 0x00 };
        static const uint8_t cfa_max[] = { 0x0e, 0xff, 0xff, 0x1f };   /* 524287 */
        static const uint8_t cfa_far[] = { 0x0e, 0x80, 0x80, 0x20 };   /* 524288 */
        static const uint8_t rbp_far[] = { 0x86, 0x80, 0x01 };         /* rbp at CFA - 1024 */
        static const uint8_t rbp_val[] = { 0x14, 0x06, 0x02 };         /* val_offset */
        static const uint8_t rbp_register[] = { 0x09, 0x06, 0x03 };    /* in rbx */
        static const uint8_t rbp_expr_other[] = { 0x10, 0x06, 0x02, 0x77, 0x00 }; /* at [rsp] */
        static const uint8_t rbp_undefined[] = { 0x07, 0x06 };
        UnwindTableStats stats;

        ck_assert_uint_eq(RULE_OF((uint8_t[]) { 0x00 }, 0x1000), RULE(CFA_RSP, 0, 8));
        ck_assert_uint_eq(RULE_OF(plt, 0x1000), RULE(PLT, 0, 11));
        ck_assert_uint_eq(RULE_OF(plt10, 0x1000), RULE(PLT, 0, 10));
        ck_assert_uint_eq(RULE_OF(plt_other, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(deref_rsp, 0x1000), RULE(DEREF_RSP, 0, 16));
        ck_assert_uint_eq(RULE_OF(deref_rsp_plus, 0x1000), RULE(DEREF_RSP, 0, 16 | 1 << 12));
        ck_assert_uint_eq(RULE_OF(drap, 0x1000), RULE(DEREF_RBP, RBP_RBP(0), 0xff8));
        ck_assert_int_eq(VPROF_UNWIND_RULE_DEREF_A(RULE_OF(drap, 0x1000)), -8);
        ck_assert_uint_eq(VPROF_UNWIND_RULE_DEREF_B(RULE_OF(deref_rsp_plus, 0x1000)), 8);
        ck_assert_uint_eq(RULE_OF(deref_rbx, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(deref_far, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(deref_plus_odd, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(deref_trailing, 0x1000), UNSUPPORTED_RULE);

        ck_assert_uint_eq(RULE_OF(frame_pointer, 0x1000), RULE(CFA_RSP, 0, 8));
        ck_assert_uint_eq(RULE_OF(frame_pointer, 0x1001), RULE(CFA_RSP, RBP_CFA(-2), 16));
        ck_assert_uint_eq(RULE_OF(frame_pointer, 0x1004), RULE(CFA_RBP, RBP_CFA(-2), 16));
        ck_assert_uint_eq(RULE_OF(frame_pointer, 0x10ff), RULE(CFA_RBP, RBP_CFA(-2), 16));

        ck_assert_uint_eq(RULE_OF(ra_undefined, 0x1000), RULE(END, 0, 0));
        ck_assert_uint_eq(RULE_OF(ra_in_rbx, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(ra_elsewhere, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(ra_expression, 0x1000), UNSUPPORTED_RULE);
        one_rule(false, NULL, 0, ra_in_rbx, sizeof(ra_in_rbx), 0x1000, &stats);
        ck_assert_uint_eq(stats.unsupported[UNWIND_UNSUPPORTED_RA], 1);

        ck_assert_uint_eq(RULE_OF(cfa_r10, 0x1000), RULE(REG_LEAF, 10, 0));
        ck_assert_uint_eq(VPROF_UNWIND_RULE_REG(RULE_OF(cfa_r10, 0x1000)), 10);
        ck_assert_uint_eq(RULE_OF(cfa_r17, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(cfa_r10_rbp_saved, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(cfa_max, 0x1000), RULE(CFA_RSP, 0, 524287));
        ck_assert_int_eq(VPROF_UNWIND_RULE_OFF(RULE_OF(cfa_max, 0x1000)), 524287);
        ck_assert_uint_eq(RULE_OF(cfa_far, 0x1000), UNSUPPORTED_RULE);
        one_rule(false, NULL, 0, cfa_far, sizeof(cfa_far), 0x1000, &stats);
        ck_assert_uint_eq(stats.unsupported[UNWIND_UNSUPPORTED_RANGE], 1);

        ck_assert_uint_eq(RULE_OF(rbp_far, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(rbp_val, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(rbp_register, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(rbp_expr_other, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(rbp_undefined, 0x1000), RULE(CFA_RSP, 0, 8));
        one_rule(false, NULL, 0, rbp_val, sizeof(rbp_val), 0x1000, &stats);
        ck_assert_uint_eq(stats.unsupported[UNWIND_UNSUPPORTED_RBP], 1);

        /* A signal frame: one rule for the whole function, whatever its rows. */
        ck_assert_uint_eq(one_rule(true, NULL, 0, frame_pointer, sizeof(frame_pointer), 0x1004, &stats),
                          RULE(SIGNAL, 0, 0));
        ck_assert_uint_eq(stats.by_kind[VPROF_UNWIND_SIGNAL], 1);
        ck_assert_uint_eq(stats.cfa_rows, 3);
        /* The CIE's instructions are the function's first rows. */
        ck_assert_uint_eq(one_rule(false, ra_undefined, sizeof(ra_undefined), NULL, 0, 0x1000, NULL),
                          RULE(END, 0, 0));
}
END_TEST

START_TEST(test_handmade_program_errors)
{
        /* advance 1, CFA + 16, advance 1, restore_state with nothing remembered. */
        static const uint8_t fails[] = { 0x41, 0x0e, 0x10, 0x41, 0x0b };
        static const uint8_t fails_at_once[] = { 0x0b };
        /* CFA + 16, advance_loc4 past the function's end, then an unknown instruction: never read. */
        static const uint8_t past_end[] = { 0x0e, 0x10, 0x04, 0x00, 0x02, 0x00, 0x00, 0x20 };
        UnwindTableStats stats;

        ck_assert_uint_eq(one_rule(false, NULL, 0, fails, sizeof(fails), 0x1000, &stats), RULE(CFA_RSP, 0, 8));
        ck_assert_uint_eq(stats.fdes_bad, 1);
        ck_assert_uint_eq(stats.unsupported[UNWIND_UNSUPPORTED_MALFORMED], 1);
        ck_assert_uint_eq(RULE_OF(fails, 0x1001), RULE(CFA_RSP, 0, 16));
        ck_assert_uint_eq(RULE_OF(fails, 0x1002), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(fails, 0x10ff), UNSUPPORTED_RULE);
        ck_assert_uint_eq(RULE_OF(fails_at_once, 0x1000), UNSUPPORTED_RULE);
        ck_assert_uint_eq(one_rule(false, NULL, 0, past_end, sizeof(past_end), 0x10ff, &stats),
                          RULE(CFA_RSP, 0, 16));
        ck_assert_uint_eq(stats.fdes_bad, 0);
}
END_TEST

/* Functions near and far, overlapping, repeated, empty; the header's table as the lookup's authority. */
START_TEST(test_handmade_layout)
{
        static const uint8_t push[] = { 0x0e, 0x10 }; /* CFA = rsp + 16 from the start */
        static const uint8_t steps[] = { 0x41, 0x0e, 0x10, 0x41, 0x0e, 0x18, 0x41, 0x0e, 0x20 };
        for (unsigned hdr = 0; hdr < 2; hdr++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
                Cfi c = {};

                cfi_cie(&c, false, NULL, 0);
                cfi_fde(&c, 0x1000, 0x10, NULL, 0);        /* A: rsp + 8 */
                cfi_fde(&c, 0x1018, 0x18, push, 2);        /* B: 8 bytes of padding after A */
                cfi_fde(&c, 0x1040, 0x100, steps, 9);      /* C: 16 bytes after B, cut short by D */
                cfi_fde(&c, 0x1080, 0x10, push, 2);        /* D, inside C */
                cfi_fde(&c, 0x1200, 0x10, NULL, 0);        /* E, then F for the same address, which wins */
                cfi_fde(&c, 0x1200, 0x20, push, 2);
                cfi_fde(&c, 0x1300, 0, push, 2);           /* empty (dropped by the scan) */
                e = cfi_load(&c, hdr);
                t = compile(e);
                check_invariants(t);
                for (uint64_t pc = 0x0f00; pc < 0x1400; pc++)
                        check_pc(t, e, pc);

                ck_assert_uint_eq(t->base, 0x1000);
                ck_assert_uint_eq(t->end, 0x1220);
                ck_assert_uint_eq(rule_at(t, 0x0fff), GAP_RULE);
                ck_assert_uint_eq(rule_at(t, 0x1000), RULE(CFA_RSP, 0, 8));
                /* Padding: A's rule goes on. */
                ck_assert_uint_eq(rule_at(t, 0x1017), RULE(CFA_RSP, 0, 8));
                ck_assert_uint_eq(rule_at(t, 0x1018), RULE(CFA_RSP, 0, 16));
                ck_assert_uint_eq(rule_at(t, 0x102f), RULE(CFA_RSP, 0, 16));
                /* 16 bytes: a gap. */
                ck_assert_uint_eq(rule_at(t, 0x1030), GAP_RULE);
                ck_assert_uint_eq(rule_at(t, 0x103f), GAP_RULE);
                ck_assert_uint_eq(rule_at(t, 0x1040), RULE(CFA_RSP, 0, 8));
                ck_assert_uint_eq(rule_at(t, 0x1043), RULE(CFA_RSP, 0, 32));
                ck_assert_uint_eq(rule_at(t, 0x107f), RULE(CFA_RSP, 0, 32));
                /* D from its start; after it, C is no more (as for the interpreter). */
                ck_assert_uint_eq(rule_at(t, 0x1080), RULE(CFA_RSP, 0, 16));
                ck_assert_uint_eq(rule_at(t, 0x108f), RULE(CFA_RSP, 0, 16));
                ck_assert_uint_eq(rule_at(t, 0x1090), GAP_RULE);
                ck_assert_uint_eq(rule_at(t, 0x1200), RULE(CFA_RSP, 0, 16));
                ck_assert_uint_eq(rule_at(t, 0x121f), RULE(CFA_RSP, 0, 16));
                ck_assert_uint_eq(rule_at(t, 0x1220), GAP_RULE);
                ck_assert_uint_eq(rule_at(t, 0x1300), GAP_RULE);
                ck_assert_uint_eq(t->stats.fdes_overlapping, 1);
                ck_assert_uint_eq(t->stats.fdes, 5);
                ck_assert_uint_eq(t->stats.fdes_skipped, hdr ? 2 : 1);
        }
}
END_TEST

/* A header whose table says a function starts elsewhere than its FDE does: the table decides where lookups
 * go, as for the interpreter; an FDE the header points at that does not parse leaves a gap. */
/* A row at every byte: the index's spans at their fullest, 1024 rows, which the search's 10 halvings still
 * narrow to one; and the same one byte later, across two spans. */
START_TEST(test_handmade_dense)
{
        static uint8_t insns[1023 * 4];

        for (unsigned shift = 0; shift < 2; shift++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
                Cfi c = {};

                /* advance 1, CFA = rsp + 8 (i + 2): a new rule at each byte. */
                for (size_t i = 0; i < 1023; i++) {
                        uint32_t off = 8 * ((uint32_t)i + 2);

                        insns[4 * i] = 0x41;
                        insns[4 * i + 1] = 0x0e;
                        insns[4 * i + 2] = (uint8_t)(0x80 | (off & 0x7f));
                        insns[4 * i + 3] = (uint8_t)(off >> 7);
                }
                cfi_cie(&c, false, NULL, 0);
                cfi_fde(&c, 0x1000 + shift, 0x400, insns, sizeof(insns));
                e = cfi_load(&c, false);
                t = compile(e);
                check_invariants(t);
                ck_assert_uint_eq(t->n_rows, 1024 + 1 + shift);
                ck_assert_uint_eq(t->index[0].b - t->index[0].a + 1, 1024);
                for (uint64_t pc = 0x0ff0; pc < 0x1410; pc++)
                        check_pc(t, e, pc);
                ck_assert_uint_eq(rule_at(t, 0x13ff + shift), RULE(CFA_RSP, 0, 8 * 1024));
        }
}
END_TEST

START_TEST(test_handmade_lying_header)
{
        static const uint8_t push[] = { 0x0e, 0x10 };
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
        Cfi c = {};

        cfi_cie(&c, false, NULL, 0);
        cfi_fde(&c, 0x1000, 0x40, NULL, 0);
        cfi_fde(&c, 0x1040, 0x40, push, 2);
        cfi_fde(&c, 0x1100, 0x40, NULL, 0);
        c.pcs[1] = 0x1050; /* the table says B starts 16 bytes into it */
        c.pcs[2] = 0x10f0; /* and C 16 bytes before it */
        /* And a fourth entry at the CIE: no FDE there. */
        c.fdes[c.n_fdes] = (uint32_t)c.cie;
        c.pcs[c.n_fdes++] = 0x1200;
        e = cfi_load(&c, true);
        t = compile(e);
        check_invariants(t);
        for (uint64_t pc = 0x0f00; pc < 0x1400; pc++)
                check_pc(t, e, pc);
        ck_assert_uint_eq(rule_at(t, 0x1040), GAP_RULE);
        ck_assert_uint_eq(rule_at(t, 0x1050), RULE(CFA_RSP, 0, 16));
        ck_assert_uint_eq(rule_at(t, 0x10f0), GAP_RULE);
        ck_assert_uint_eq(rule_at(t, 0x1100), RULE(CFA_RSP, 0, 8));
        ck_assert_uint_eq(rule_at(t, 0x1200), GAP_RULE);
        ck_assert_uint_eq(t->stats.fdes_bad, 1);
}
END_TEST

/* 4 GiB of code or more: too big for 32-bit offsets. */
START_TEST(test_handmade_too_big)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        _cleanup_(unwind_table_builder_freep) UnwindTableBuilder *b = NULL;
        UnwindTable *t = NULL;
        Cfi c = {};
        int r;

        /* FDE pointers are absolute udata4, the table's pcs within 2 GiB of .eh_frame on either side: with
         * .eh_frame at 2 GiB, a function at 0 and one ending past 4 GiB. */
        cfi_cie(&c, false, NULL, 0);
        cfi_fde(&c, 0, 0x10, NULL, 0);
        cfi_fde(&c, 0xfffffff0, 0x100, NULL, 0);
        put_u32(&c, 0);
        ck_assert_int_eq(eh_frame_new(c.data, c.n, UINT64_C(0x80000000), NULL, 0, 0, &e), 0);
        ck_assert_uint_eq(eh_frame_count(e), 2);
        ck_assert_int_eq(unwind_table_builder_new(e, &b), 0);
        do
                r = unwind_table_builder_step(b, 1);
        while (r == 0);
        ck_assert_int_eq(r, -EFBIG);
        /* And stays failed. */
        ck_assert_int_eq(unwind_table_builder_step(b, 1), -EFBIG);
        ck_assert_int_eq(unwind_table_builder_finish(b, &t), -EFBIG);
        ck_assert_ptr_null(t);
}
END_TEST

/* A function running past 2 GiB from .eh_frame, beyond which no lookup reaches (32-bit offsets): cut there. */
START_TEST(test_handmade_reach)
{
        const uint64_t limit = FAKE_EH_FRAME_VADDR + UINT64_C(0x80000000);
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
        Cfi c = {};

        cfi_cie(&c, false, NULL, 0);
        cfi_fde(&c, (uint32_t)(limit - 0x100), 0x1000, (const uint8_t[]) { 0x0e, 0x10 }, 2);
        e = cfi_load(&c, false);
        ck_assert_uint_eq(eh_frame_table_limit(e), limit);
        t = compile(e);
        check_invariants(t);
        ck_assert_uint_eq(t->end, limit);
        ck_assert_uint_eq(rule_at(t, limit - 1), RULE(CFA_RSP, 0, 16));
        ck_assert_uint_eq(rule_at(t, limit), GAP_RULE);
        for (uint64_t pc = limit - 0x200; pc < limit + 0x1000; pc++)
                check_pc(t, e, pc);
}
END_TEST

/* What cfa_program_rows() gave. */
static struct {
        uint64_t lo[8], hi[8];
        size_t n;
} recorded;

static int record_row(uint64_t lo, uint64_t hi, const Row *row, void *userdata)
{
        (void)row;
        (void)userdata;
        ck_assert_uint_lt(recorded.n, 8);
        recorded.lo[recorded.n] = lo;
        recorded.hi[recorded.n++] = hi;
        return 0;
}

static int refuse_row(uint64_t lo, uint64_t hi, const Row *row, void *userdata)
{
        (void)lo;
        (void)hi;
        (void)row;
        (void)userdata;
        return -ENOSPC;
}

START_TEST(test_cfa_program_rows)
{
        /* push, def_cfa_offset 16; mov, def_cfa_register rbp; at 0x20 remember, back to rsp + 8; 0x21 restore. */
        static const uint8_t insns[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x02, 0x1c,
                                         0x0a, 0x0c, 0x07, 0x08, 0xc6, 0x41, 0x0b };
        static const uint64_t want_lo[] = { 0x1000, 0x1001, 0x1004, 0x1020, 0x1021 };
        static const uint64_t want_hi[] = { 0x1001, 0x1004, 0x1020, 0x1021, 0x1030 };
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        EhFrameFde fde;
        Cfi c = {};

        cfi_cie(&c, false, NULL, 0);
        cfi_fde(&c, 0x1000, 0x30, insns, sizeof(insns));
        e = cfi_load(&c, false);
        ck_assert_int_eq(eh_frame_fde(e, 0, &fde), 0);
        ck_assert_uint_eq(eh_frame_table_pc(e, 0), 0x1000);
        ck_assert_uint_eq(fde.pc_begin, 0x1000);
        ck_assert_uint_eq(fde.pc_range, 0x30);
        ck_assert(!fde.cie.signal_frame);

        recorded.n = 0;
        ck_assert_int_eq(cfa_program_rows(&fde.cie, fde.cie_insns, fde.fde_insns, fde.pc_begin,
                                          fde.pc_begin + fde.pc_range, record_row, NULL),
                         0);
        ck_assert_uint_eq(recorded.n, ELEMENTSOF(want_lo));
        for (size_t i = 0; i < recorded.n; i++) {
                ck_assert_uint_eq(recorded.lo[i], want_lo[i]);
                ck_assert_uint_eq(recorded.hi[i], want_hi[i]);
        }
        /* Cut at an earlier end: the instructions past it are not read. */
        recorded.n = 0;
        ck_assert_int_eq(cfa_program_rows(&fde.cie, fde.cie_insns, fde.fde_insns, fde.pc_begin, 0x1010, record_row,
                                          NULL),
                         0);
        ck_assert_uint_eq(recorded.n, 3);
        ck_assert_uint_eq(recorded.hi[2], 0x1010);
        /* Empty. */
        recorded.n = 0;
        ck_assert_int_eq(cfa_program_rows(&fde.cie, fde.cie_insns, fde.fde_insns, 0x1000, 0x1000, record_row, NULL),
                         0);
        ck_assert_uint_eq(recorded.n, 0);
        /* The callback's error stops the run. */
        ck_assert_int_eq(cfa_program_rows(&fde.cie, fde.cie_insns, fde.fde_insns, 0x1000, 0x1030, refuse_row, NULL),
                         -ENOSPC);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("unwind-table-cfi");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_cfa_program_rows);
        tcase_add_test(tc, test_handmade_rules);
        tcase_add_test(tc, test_handmade_program_errors);
        tcase_add_test(tc, test_handmade_layout);
        tcase_add_test(tc, test_handmade_dense);
        tcase_add_test(tc, test_handmade_lying_header);
        tcase_add_test(tc, test_handmade_too_big);
        tcase_add_test(tc, test_handmade_reach);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
