/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The compiler of unwind tables (unwind-table.c, over eh-frame.c, cfa-program.c, dwarf-cursor.c). The input
 * is fuzz-eh-frame.c's: an ELF file (also as the separate debug file of a binary without CFI of its own), or
 * raw .eh_frame (and .eh_frame_hdr, or .debug_frame) after a RawHeader. The builder runs in slices of a size
 * the input picks; a table must then hold the invariants the BPF program relies on (sorted rows from 0, no
 * two equal rules in a row, a GAP last, the index right, every span at most 1024 rows), and agree with the
 * interpreter (eh_frame_find_row()) where both have an answer. A violation aborts. Seeds: the fixtures
 * (run-fuzz.py: fixture-unwind and its damaged copies among them), this process's vDSO, and hand-made CFI of
 * each form the compiler knows. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eh-frame.h"
#include "fuzz-input.h"
#include "macros.h"
#include "unwind-table.h"

#define GAP_RULE VPROF_UNWIND_RULE(VPROF_UNWIND_GAP, 0, 0)
#define UNSUPPORTED_RULE VPROF_UNWIND_RULE(VPROF_UNWIND_UNSUPPORTED, 0, 0)
/* Addresses compared with the interpreter per input: evenly spread, and at the rows' edges. The interpreter
 * runs the CFA program from the function's start for each, which bounds the runs per second. */
#define PROPERTY_PCS 512
#define PROPERTY_ROWS 256

typedef struct __attribute__((packed)) RawHeader {
        uint8_t flags;
        uint32_t eh_frame_vaddr, hdr_vaddr, eh_frame_size, code_start;
} RawHeader;

#define CHECK(cond)                                                                                            \
        do {                                                                                                   \
                if (!(cond)) {                                                                                 \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
                        abort();                                                                               \
                }                                                                                              \
        } while (0)

static uint32_t rule_at(const UnwindTable *t, uint64_t pc)
{
        const struct vprof_unwind_entry *row = unwind_table_lookup(t, pc);

        return row ? row->b : GAP_RULE;
}

/* The last row starting at or below off. */
static size_t last_row_at(const UnwindTable *t, uint64_t off)
{
        size_t lo = 0, hi = t->n_rows;

        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;

                if (t->rows[mid].a <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* Entry k: the row in effect at its span's start, the last one starting in it, at most 1024 rows. */
static void check_index_entry(const UnwindTable *t, size_t k)
{
        uint64_t lo = (uint64_t)k * VPROF_UNWIND_INDEX_SPAN;
        size_t j = last_row_at(t, lo), m = last_row_at(t, lo + VPROF_UNWIND_INDEX_SPAN - 1);

        CHECK(t->index[k].a == j && t->index[k].b == m && m - j < VPROF_UNWIND_INDEX_SPAN);
}

static void check_invariants(const UnwindTable *t)
{
        /* Every index entry of a small table; of a large one (an input can span 4 GiB, 4 Mi entries), 64 Ki
         * evenly spread and the last. */
        size_t stride = MAX(t->n_index / 65536, (size_t)1);

        CHECK(t->n_rows >= 2 && t->n_rows <= VPROF_UNWIND_MAX_ROWS);
        CHECK(t->base % VPROF_UNWIND_INDEX_SPAN == 0 && t->end > t->base && t->end - t->base <= UINT32_MAX);
        CHECK(t->rows[0].a == 0 && t->rows == t->index + t->n_index);
        CHECK(t->rows[t->n_rows - 1].b == GAP_RULE && t->base + t->rows[t->n_rows - 1].a == t->end);
        for (size_t i = 1; i < t->n_rows; i++)
                CHECK(t->rows[i].a > t->rows[i - 1].a && t->rows[i].b != t->rows[i - 1].b &&
                      VPROF_UNWIND_RULE_KIND(t->rows[i].b) <= VPROF_UNWIND_UNSUPPORTED);
        CHECK(t->n_index == (t->end - t->base + VPROF_UNWIND_INDEX_SPAN - 1) / VPROF_UNWIND_INDEX_SPAN);
        for (size_t k = 0; k < t->n_index; k += stride)
                check_index_entry(t, k);
        check_index_entry(t, t->n_index - 1);
        /* The search, at both ends of a row (of the first rows: an input may make millions). */
        for (size_t i = 0; i + 1 < t->n_rows && i < 4096; i++) {
                CHECK(unwind_table_lookup(t, t->base + t->rows[i].a) == &t->rows[i]);
                CHECK(unwind_table_lookup(t, t->base + t->rows[i + 1].a - 1) == &t->rows[i]);
        }
        CHECK(!unwind_table_lookup(t, t->end));
}

static int interpreter_rule(const EhFrame *e, uint64_t pc, uint32_t *ret)
{
        CfaCie cie;
        Row row;
        int r;

        r = eh_frame_find_row(e, pc, &row, &cie);
        if (r >= 0)
                *ret = unwind_table_rule(&row, &cie, NULL);
        return r;
}

/* The table's rule at pc is the interpreter's; where no FDE is, a GAP or the padding's; where the CFI fails,
 * no rule. */
static void check_pc(const UnwindTable *t, const EhFrame *e, uint64_t pc)
{
        uint32_t want, got = rule_at(t, pc);
        int r = interpreter_rule(e, pc, &want);

        if (r == 0) {
                CHECK(got == want);
                return;
        }
        if (r != -ENOENT) {
                CHECK(got == GAP_RULE || got == UNSUPPORTED_RULE);
                return;
        }
        if (got == GAP_RULE)
                return;
        for (uint64_t below = pc - 1; below + 16 > pc && below < pc; below--) {
                if (interpreter_rule(e, below, &want) == -ENOENT)
                        continue;
                CHECK(got == rule_at(t, below));
                for (uint64_t above = pc + 1; above <= below + 16; above++)
                        if (interpreter_rule(e, above, &want) != -ENOENT)
                                return;
                break;
        }
        CHECK(!"a rule where no FDE is, not in padding");
}

static void check_property(const UnwindTable *t, const EhFrame *e)
{
        uint64_t span = t->end - t->base, stride = MAX(span / PROPERTY_PCS, (uint64_t)1);

        for (uint64_t off = 0; off < span; off += stride)
                check_pc(t, e, t->base + off);
        /* Where rules change, on both sides. */
        for (size_t i = 1; i < t->n_rows && i < PROPERTY_ROWS; i++) {
                check_pc(t, e, t->base + t->rows[i].a);
                check_pc(t, e, t->base + t->rows[i].a - 1);
        }
}

/* An x86-64 ELF file with no sections: the binary whose separate debug file the input is. */
static int bare_elf(void)
{
        Elf64_Ehdr h = {
                .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
                .e_type = ET_DYN,
                .e_machine = EM_X86_64,
                .e_version = EV_CURRENT,
                .e_ehsize = sizeof(Elf64_Ehdr),
        };

        return fuzz_memfd((const uint8_t *)&h, sizeof(h));
}

static void compile(const EhFrame *e, size_t slice)
{
        _cleanup_(unwind_table_builder_freep) UnwindTableBuilder *b = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
        size_t steps = 0;
        int r;

        r = unwind_table_builder_new(e, &b);
        CHECK(r == 0);
        do {
                r = unwind_table_builder_step(b, slice);
                CHECK(++steps <= eh_frame_count(e) + 1);
        } while (r == 0);
        CHECK(r == 1 || r == -EFBIG);
        r = unwind_table_builder_finish(b, &t);
        CHECK(r == 0 || r == -ENOENT || r == -EFBIG);
        if (r < 0)
                return;
        check_invariants(t);
        check_property(t, e);
        (void)unwind_table_size(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        size_t slice;
        int r;

        if (size >= 4 && memcmp(data, ELFMAG, SELFMAG) == 0) {
                _cleanup_close_ int fd = fuzz_memfd(data, size), bare = -1;

                if (fd < 0)
                        return 0;
                /* As a debug file when the last byte says so: its .debug_frame alone. */
                if (data[size - 1] & 0x20) {
                        bare = bare_elf();
                        r = bare < 0 ? -EBADF : eh_frame_load_fds(bare, fd, &e);
                } else
                        r = eh_frame_load_fd(fd, &e);
        } else if (size >= sizeof(RawHeader)) {
                const uint8_t *p = data + sizeof(RawHeader);
                size_t left = size - sizeof(RawHeader), n;
                RawHeader h;

                memcpy(&h, data, sizeof(h));
                n = MIN((size_t)h.eh_frame_size, left);
                if (h.flags & 2)
                        r = eh_frame_new_sections(&(CfiSections) { .eh_frame = p,
                                                                   .eh_frame_size = n,
                                                                   .eh_frame_vaddr = h.eh_frame_vaddr,
                                                                   .debug_frame = p + n,
                                                                   .debug_frame_size = left - n },
                                                  &e);
                else if (h.flags & 1)
                        r = eh_frame_new(p, n, h.eh_frame_vaddr, p + n, left - n, h.hdr_vaddr, &e);
                else
                        r = eh_frame_new(p, left, h.eh_frame_vaddr, NULL, 0, 0, &e);
        } else
                return 0;
        if (r < 0)
                return 0;
        /* Slices of 1 to 16 FDEs, or all at once, as the last byte says. */
        slice = data[size - 1] & 0x10 ? SIZE_MAX : (size_t)(data[size - 1] & 0x0f) + 1;
        compile(e, slice);
        return 0;
}

/* ---- Seeds ---- */

typedef struct Seed {
        uint8_t data[512];
        size_t n, cie;
} Seed;

static void put(Seed *s, const void *p, size_t n)
{
        if (n > 0 && s->n + n <= sizeof(s->data)) {
                memcpy(s->data + s->n, p, n);
                s->n += n;
        }
}

static void put_u32(Seed *s, uint32_t v)
{
        uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

        put(s, b, 4);
}

static void patch_len(Seed *s, size_t at)
{
        uint32_t len = (uint32_t)(s->n - at - 4);

        for (size_t i = 0; i < 4; i++)
                s->data[at + i] = (uint8_t)(len >> (8 * i));
}

/* GCC's CIE ("zR" or "zRS", udata4 pointers, CFA = rsp + 8, return address at CFA - 8). */
static void seed_cie(Seed *s, bool signal_frame)
{
        size_t at = s->n;

        s->cie = at;
        put_u32(s, 0);
        put_u32(s, 0);
        put(s, (const uint8_t[]) { 1 }, 1);
        put(s, signal_frame ? "zRS" : "zR", signal_frame ? 4 : 3);
        put(s, (const uint8_t[]) { 1, 0x78, 16, 1, 0x03, 0x0c, 0x07, 0x08, 0x90, 0x01 }, 10);
        patch_len(s, at);
}

static void seed_fde(Seed *s, uint32_t pc, uint32_t range, const uint8_t *insns, size_t n)
{
        size_t at = s->n;

        put_u32(s, 0);
        put_u32(s, (uint32_t)(s->n - s->cie));
        put_u32(s, pc);
        put_u32(s, range);
        put(s, (const uint8_t[]) { 0 }, 1);
        put(s, insns, n);
        patch_len(s, at);
}

/* Raw .eh_frame, scanned: one FDE of each form, near and far from each other. */
static int write_handmade(const char *dir)
{
        static const uint8_t plt[] = { 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
        static const uint8_t drap[] = { 0x45, 0x0c, 0x0a, 0x00, 0x47, 0x10, 0x06, 0x02, 0x76, 0x00,
                                        0x44, 0x0f, 0x03, 0x76, 0x78, 0x06, 0x02, 0x30, 0x0c, 0x07, 0x08 };
        static const uint8_t frame_pointer[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x02, 0x20,
                                                 0x0a, 0x0c, 0x07, 0x08, 0x41, 0x0b };
        static const uint8_t deref_rsp[] = { 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x08 };
        static const uint8_t end[] = { 0x07, 0x10 };
        static const uint8_t big[] = { 0x44, 0x0e, 0x90, 0xa2, 0x04 };
        Seed s = {};
        RawHeader h = { .flags = 0, .eh_frame_vaddr = 0x8000, .code_start = 0x1000 };
        uint8_t buf[sizeof(RawHeader) + sizeof(s.data) + 4];

        seed_cie(&s, false);
        seed_fde(&s, 0x1000, 0x100, plt, sizeof(plt));
        seed_fde(&s, 0x1100, 0x80, drap, sizeof(drap));
        seed_fde(&s, 0x1188, 0x40, frame_pointer, sizeof(frame_pointer));
        seed_fde(&s, 0x1200, 0x20, deref_rsp, sizeof(deref_rsp));
        seed_fde(&s, 0x1210, 0x20, end, sizeof(end));
        seed_fde(&s, 0x1800, 0x40, big, sizeof(big));
        seed_cie(&s, true);
        seed_fde(&s, 0x1900, 0x10, NULL, 0);
        put_u32(&s, 0);
        h.eh_frame_size = (uint32_t)s.n;
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h), s.data, s.n);
        return fuzz_write_file(dir, "handmade.raw", buf, sizeof(h) + s.n);
}

/* fuzz_debug_frame()'s: alone, and after .eh_frame's handmade FDEs (the functions of both overlap:
 * .eh_frame's win). */
static int write_debug_frame(const char *dir)
{
        uint8_t buf[sizeof(RawHeader) + 1024];
        RawHeader h = { .flags = 2, .code_start = 0x1000 };
        Seed s = {};
        size_t n;

        n = fuzz_debug_frame(buf + sizeof(h), sizeof(buf) - sizeof(h), 0x1000);
        if (n == 0)
                return -1;
        memcpy(buf, &h, sizeof(h));
        if (fuzz_write_file(dir, "debug-frame.raw", buf, sizeof(h) + n) < 0)
                return -1;

        seed_cie(&s, false);
        seed_fde(&s, 0x1000, 0x40, NULL, 0);
        seed_fde(&s, 0x1200, 0x40, NULL, 0);
        put_u32(&s, 0);
        h = (RawHeader) { .flags = 2,
                          .eh_frame_vaddr = 0x8000,
                          .eh_frame_size = (uint32_t)s.n,
                          .code_start = 0x1000 };
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h), s.data, s.n);
        n = fuzz_debug_frame(buf + sizeof(h) + s.n, sizeof(buf) - sizeof(h) - s.n, 0x1000);
        if (n == 0)
                return -1;
        return fuzz_write_file(dir, "eh-frame-debug-frame.raw", buf, sizeof(h) + s.n + n);
}

static int write_seeds(const char *dir)
{
        const uint8_t *vdso;
        size_t size;

        vdso = fuzz_vdso(&size);
        if (vdso && fuzz_write_file(dir, "vdso.so", vdso, size) < 0)
                return -1;
        if (write_debug_frame(dir) < 0)
                return -1;
        return write_handmade(dir);
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
