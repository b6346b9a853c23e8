/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "cfa-program.h"
#include "dwarf-cursor.h"
#include "eh-frame-internal.h"
#include "eh-frame-record.h"
#include "eh-frame.h"
#include "log.h"

/* The table of a file's functions from the FDEs of its CFI sections, whose records eh-frame-record.c parses, and
 * the row at a pc. The formats are those of the LSB (.eh_frame, .eh_frame_hdr) and DWARF 5 section 6.4. */

/* One function: its start, relative to the table's base like the 32-bit .eh_frame_hdr table, and its FDE. */
typedef struct EhFrameEntry {
        int32_t pc;
        uint32_t fde; /* its offset in .eh_frame, or with ENTRY_DEBUG_FRAME in .debug_frame */
} EhFrameEntry;

/* The entry's FDE is in .debug_frame: sections are at most 2 GiB (the loader reads at most EH_FRAME_MAX),
 * table_add() refuses the FDEs beyond. After .eh_frame's in the sort, at the same pc. */
#define ENTRY_DEBUG_FRAME (UINT32_C(1) << 31)

/* A row (or an error) and the pcs it holds for, [lo, hi), as found by the FDE search, the FDE's parsing and the
 * CFA program. An empty slot has lo == hi. */
typedef struct RowSlot {
        uint64_t lo, hi;
        int error; /* 0: row is the range's */
        Row row;
} RowSlot;

/* Slots of the row cache, at most: a sampled program keeps stopping at the same few thousand places, and finding
 * and running their CFI again costs thousands of instructions a step, against tens for a hit. */
#define ROW_CACHE_MAX 4096
/* Slots are chosen by pc in granules of this many bytes: a row usually covers a function's whole body, so the
 * pcs sampled near each other in it share one slot. */
#define ROW_CACHE_GRANULE_SHIFT 5

struct EhFrame {
        CfiSection eh_frame, debug_frame;
        /* The entries' pcs are relative to it: .eh_frame's address when it has FDEs, as .eh_frame_hdr's are,
         * else the lowest function of .debug_frame. */
        uint64_t base;
        EhFrameEntry *entries; /* sorted by pc */
        size_t n_entries;
        /* Direct-mapped by pc, a power of two of slots: filled by eh_frame_unwind_step(), which is why the
         * cache is behind a pointer (the EhFrame is const to its users) and why an EhFrame is for one thread
         * at a time. */
        RowSlot *row_cache;
        size_t row_cache_size;
        uint8_t digest[EH_FRAME_DIGEST_SIZE]; /* of all the above but the cache: eh_frame_digest() */
};

static const CfiSection *entry_section(const EhFrame *e, const EhFrameEntry *entry, size_t *ret_off)
{
        *ret_off = entry->fde & ~ENTRY_DEBUG_FRAME;
        return entry->fde & ENTRY_DEBUG_FRAME ? &e->debug_frame : &e->eh_frame;
}

static int table_add(EhFrame *e, size_t *allocated, uint64_t pc, size_t fde, uint32_t section_bit)
{
        int64_t rel = (int64_t)(pc - e->base);

        /* Out of reach of a 32-bit table, as of .eh_frame_hdr's: not code of this file. */
        if (rel < INT32_MIN || rel > INT32_MAX || fde >= ENTRY_DEBUG_FRAME)
                return 0;
        if (e->n_entries == *allocated) {
                size_t a = MAX(*allocated * 2, (size_t)64);
                EhFrameEntry *entries = realloc(e->entries, a * sizeof(EhFrameEntry));

                if (!entries)
                        return -ENOMEM;
                e->entries = entries;
                *allocated = a;
        }
        e->entries[e->n_entries++] =
                (EhFrameEntry) { .pc = (int32_t)rel, .fde = (uint32_t)fde | section_bit };
        return 0;
}

static int entry_compare(const void *a, const void *b)
{
        const EhFrameEntry *x = a, *y = b;

        if (x->pc != y->pc)
                return x->pc < y->pc ? -1 : 1;
        return x->fde < y->fde ? -1 : x->fde > y->fde;
}

static void table_sort(EhFrame *e)
{
        for (size_t i = 1; i < e->n_entries; i++)
                if (entry_compare(&e->entries[i - 1], &e->entries[i]) > 0) {
                        qsort(e->entries, e->n_entries, sizeof(EhFrameEntry), entry_compare);
                        return;
                }
}

static void table_reset(EhFrame *e)
{
        free(e->entries);
        e->entries = NULL;
        e->n_entries = 0;
}

/* .eh_frame_hdr's version and the address of .eh_frame it gives. */
static int hdr_start(Cursor *c, uint8_t *ret_count_encoding, uint8_t *ret_table_encoding,
                     uint64_t *ret_eh_frame)
{
        uint8_t version, ptr_encoding;
        int r;

        r = read_u8(c, &version);
        if (r >= 0)
                r = read_u8(c, &ptr_encoding);
        if (r >= 0)
                r = read_u8(c, ret_count_encoding);
        if (r >= 0)
                r = read_u8(c, ret_table_encoding);
        if (r < 0)
                return r;
        if (version != 1)
                return -EBADMSG;
        return read_encoded(c, ptr_encoding, &c->vaddr, ret_eh_frame);
}

int eh_frame_hdr_target(const void *hdr, size_t hdr_size, uint64_t hdr_vaddr, uint64_t *ret)
{
        Cursor c = { .data = hdr, .end = hdr_size, .vaddr = hdr_vaddr };
        uint8_t count_encoding, table_encoding;

        assert(hdr || hdr_size == 0);
        assert(ret);

        return hdr_start(&c, &count_encoding, &table_encoding, ret);
}

/* The binary search table of .eh_frame_hdr, decoded into ours: the linker sorted it already, and it spares
 * parsing every CIE and FDE. -ENOENT when there is none. */
static int load_hdr_table(EhFrame *e, const void *hdr, size_t hdr_size, uint64_t hdr_vaddr)
{
        Cursor c = { .data = hdr, .end = hdr_size, .vaddr = hdr_vaddr };
        uint8_t count_encoding, table_encoding;
        uint64_t eh_frame, count;
        size_t allocated;
        int r;

        r = hdr_start(&c, &count_encoding, &table_encoding, &eh_frame);
        if (r < 0)
                return r;
        if (eh_frame != e->eh_frame.vaddr)
                return -EBADMSG;
        if (count_encoding == PE_OMIT || table_encoding == PE_OMIT)
                return -ENOENT;
        r = read_encoded(&c, count_encoding, &hdr_vaddr, &count);
        if (r < 0)
                return r;
        if (count == 0)
                return -ENOENT;
        /* An entry takes 2 bytes at least: a larger count is a lie, not a reason to allocate. */
        if (count > (c.end - c.pos) / 2)
                return -EBADMSG;

        allocated = (size_t)count;
        e->entries = malloc(allocated * sizeof(EhFrameEntry));
        if (!e->entries)
                return -ENOMEM;
        for (size_t i = 0; i < count; i++) {
                uint64_t pc, fde;

                r = read_encoded(&c, table_encoding, &hdr_vaddr, &pc);
                if (r >= 0)
                        r = read_encoded(&c, table_encoding, &hdr_vaddr, &fde);
                if (r < 0)
                        return r;
                if (fde < e->eh_frame.vaddr || fde - e->eh_frame.vaddr >= e->eh_frame.size)
                        return -EBADMSG;
                r = table_add(e, &allocated, pc, (size_t)(fde - e->eh_frame.vaddr), 0);
                if (r < 0)
                        return r;
        }
        table_sort(e);
        return 0;
}

/* Called by scan() for each FDE that parsed and covers code. */
typedef int (*FdeFunc)(EhFrame *e, size_t off, const Fde *fde, void *userdata);

/* A function that a linker discarded leaves its FDE in .debug_frame (not in .eh_frame, which it edits), its
 * address resolved to a tombstone: 0 (GNU ld), or all ones, a range that wraps around (lld). No x86-64
 * program has code at 0, its ELF header. */
static bool fde_discarded(const CfiSection *s, const Fde *fde, const Cie *cie)
{
        uint64_t top = (cie->program.fde_encoding & PE_FORMAT_MASK) == PE_UDATA4 ? UINT32_MAX : UINT64_MAX;

        return s->format == CFI_DEBUG_FRAME &&
               (fde->pc_begin == 0 || fde->pc_begin > top || fde->pc_range > top - fde->pc_begin);
}

/* Every FDE of s that covers code, in the section's order, once. A malformed record ends the scan; the FDEs
 * before it stay usable. Bounded by the section's bytes: a record takes 8 at least. */
static int scan(EhFrame *e, const CfiSection *s, FdeFunc f, void *userdata)
{
        size_t off = 0;
        int r;

        while (off < s->size) {
                Record rec;
                Fde fde;
                Cie cie;

                r = cfi_read_record(s, off, &rec);
                /* A zero word in .debug_frame, which has no terminator: padding between two contributions.
                 */
                if (r == -ENODATA && s->format == CFI_DEBUG_FRAME) {
                        off += 4;
                        continue;
                }
                if (r < 0)
                        break;
                /* Zero-length FDEs are left over from functions the linker discarded. */
                if (!rec.is_cie && cfi_parse_fde(s, off, &fde, &cie) >= 0 && fde.pc_range > 0 &&
                    !fde_discarded(s, &fde, &cie)) {
                        r = f(e, off, &fde, userdata);
                        if (r < 0)
                                return r;
                }
                off = rec.end;
        }
        return 0;
}

static int add_eh_frame_fde(EhFrame *e, size_t off, const Fde *fde, void *userdata)
{
        return table_add(e, userdata, fde->pc_begin, off, 0);
}

static int lowest_pc(EhFrame *e _unused_, size_t off _unused_, const Fde *fde, void *userdata)
{
        uint64_t *lowest = userdata;

        *lowest = MIN(*lowest, fde->pc_begin);
        return 0;
}

/* What .debug_frame's scan adds to a table of n_eh_frame entries from .eh_frame. */
typedef struct DebugFrameScan {
        size_t allocated;
        size_t n_eh_frame;
        size_t added;
} DebugFrameScan;

/* Whether .eh_frame's FDEs (the first n of the table, sorted) describe some of [lo, lo + range): the one
 * starting in it, or the one before it, when its range reaches lo. rel is lo relative to the base. */
static bool eh_frame_covers(const EhFrame *e, size_t n, int64_t rel, uint64_t lo, uint64_t range)
{
        int64_t rel_end = rel + (int64_t)MIN(range, (uint64_t)UINT32_MAX + 1);
        size_t a = 0, b = n, off;
        Fde fde;
        Cie cie;

        /* The first entry at or above lo. */
        while (a < b) {
                size_t mid = a + (b - a) / 2;

                if (e->entries[mid].pc < rel)
                        a = mid + 1;
                else
                        b = mid;
        }
        if (a < n && e->entries[a].pc < rel_end)
                return true;
        if (a == 0)
                return false;
        /* A damaged FDE covers nothing: the table has no rule for it either. */
        off = e->entries[a - 1].fde;
        if (cfi_parse_fde(&e->eh_frame, off, &fde, &cie) < 0)
                return false;
        return lo >= fde.pc_begin && lo - fde.pc_begin < fde.pc_range;
}

/* .debug_frame's FDE, for code that .eh_frame has none for: the CFI the program itself would use comes first
 * (and has the signal frames' "S"). */
static int add_debug_frame_fde(EhFrame *e, size_t off, const Fde *fde, void *userdata)
{
        DebugFrameScan *d = userdata;
        int64_t rel = (int64_t)(fde->pc_begin - e->base);
        size_t n = e->n_entries;
        int r;

        if (rel < INT32_MIN || rel > INT32_MAX ||
            eh_frame_covers(e, d->n_eh_frame, rel, fde->pc_begin, fde->pc_range))
                return 0;
        r = table_add(e, &d->allocated, fde->pc_begin, off, ENTRY_DEBUG_FRAME);
        if (r < 0)
                return r;
        d->added += e->n_entries - n;
        return 0;
}

/* .debug_frame's FDEs into the table after .eh_frame's, which are sorted: 0, and *ret_added of them. The
 * table's base is .eh_frame's when it has entries, else the lowest function here. */
static int scan_debug_frame(EhFrame *e, size_t *ret_added)
{
        DebugFrameScan d = { .allocated = e->n_entries, .n_eh_frame = e->n_entries };
        int r;

        if (e->n_entries == 0) {
                uint64_t lowest = UINT64_MAX;

                r = scan(e, &e->debug_frame, lowest_pc, &lowest);
                if (r < 0)
                        return r;
                e->base = lowest;
        }
        r = scan(e, &e->debug_frame, add_debug_frame_fde, &d);
        if (r < 0)
                return r;
        table_sort(e);
        *ret_added = d.added;
        return 0;
}

/* How much of data is .eh_frame: up to and with its terminator, or all of it. */
static size_t eh_frame_extent(const uint8_t *data, size_t size)
{
        const CfiSection s = { .data = (uint8_t *)data, .size = size, .format = CFI_EH_FRAME };
        size_t off = 0;
        Record rec;
        int r;

        while (off < size) {
                r = cfi_read_record(&s, off, &rec);
                if (r == -ENODATA)
                        return off + 4;
                if (r < 0)
                        return size;
                off = rec.end;
        }
        return size;
}

static void digest_u64(struct sha256_ctx *ctx, uint64_t v)
{
        uint8_t le[8];

        for (size_t i = 0; i < sizeof(le); i++)
                le[i] = (uint8_t)(v >> (8 * i));
        sha256_update(ctx, sizeof(le), le);
}

static size_t digest_section(struct sha256_ctx *ctx, const CfiSection *s)
{
        digest_u64(ctx, s->size);
        digest_u64(ctx, s->vaddr);
        if (s->size > 0)
                sha256_update(ctx, s->size, s->data);
        return 16 + s->size;
}

/* Of the copies that every later read of e goes to, fields by their size first so that no two EhFrames feed
 * the same stream: what a table compiled from e depends on, and nothing else. */
size_t eh_frame_digest_compute(const EhFrame *e, uint8_t ret[static EH_FRAME_DIGEST_SIZE])
{
        struct sha256_ctx ctx;
        size_t bytes = 8 + 8 + 8;

        assert(e);
        assert(ret);

        sha256_init(&ctx);
        sha256_update(&ctx, 8, (const uint8_t *)"vprofcfi");
        digest_u64(&ctx, e->base);
        bytes += digest_section(&ctx, &e->eh_frame);
        bytes += digest_section(&ctx, &e->debug_frame);
        digest_u64(&ctx, e->n_entries);
        for (size_t i = 0; i < e->n_entries; i++)
                digest_u64(&ctx, (uint64_t)(uint32_t)e->entries[i].pc | (uint64_t)e->entries[i].fde << 32);
        sha256_digest(&ctx, EH_FRAME_DIGEST_SIZE, ret);
        return bytes + 8 * e->n_entries;
}

static int section_copy(CfiSection *s, const void *data, size_t size, uint64_t vaddr, CfiFormat format)
{
        *s = (CfiSection) { .size = size, .vaddr = vaddr, .format = format };
        if (size == 0)
                return 0;
        s->data = malloc(size);
        if (!s->data)
                return -ENOMEM;
        memcpy(s->data, data, size);
        return 0;
}

/* The table of .eh_frame's FDEs: through the header's, else by a scan. */
static int load_eh_frame_table(EhFrame *e, const CfiSections *s)
{
        size_t allocated = 0;
        int r = -ENOENT;

        if (e->eh_frame.size == 0)
                return 0;
        if (s->hdr)
                r = load_hdr_table(e, s->hdr, s->hdr_size, s->hdr_vaddr);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (s->hdr)
                        log_debug_errno(r, "No usable .eh_frame_hdr table, scanning .eh_frame: %m");
                table_reset(e);
                r = scan(e, &e->eh_frame, add_eh_frame_fde, &allocated);
                if (r < 0)
                        return r;
                table_sort(e);
        }
        return 0;
}

int eh_frame_new_sections(const CfiSections *s, EhFrame **ret)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        size_t added = 0;
        int r;

        assert(s);
        assert(s->eh_frame || s->eh_frame_size == 0);
        assert(s->hdr || s->hdr_size == 0);
        assert(s->debug_frame || s->debug_frame_size == 0);
        assert(ret);

        if (s->eh_frame_size == 0 && s->debug_frame_size == 0)
                return -ENOENT;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        r = section_copy(&e->eh_frame, s->eh_frame,
                         s->eh_frame_size > 0 ? eh_frame_extent(s->eh_frame, s->eh_frame_size) : 0,
                         s->eh_frame_vaddr, CFI_EH_FRAME);
        if (r < 0)
                return r;
        e->base = s->eh_frame_vaddr;
        r = load_eh_frame_table(e, s);
        if (r < 0)
                return r;

        if (s->debug_frame_size > 0) {
                /* Read in place: copied only when one of its FDEs is taken. */
                e->debug_frame = (CfiSection) { .data = (uint8_t *)s->debug_frame,
                                                .size = s->debug_frame_size,
                                                .format = CFI_DEBUG_FRAME };
                r = scan_debug_frame(e, &added);
                e->debug_frame = (CfiSection) { .format = CFI_DEBUG_FRAME };
                if (r < 0)
                        return r;
                if (added > 0) {
                        r = section_copy(&e->debug_frame, s->debug_frame, s->debug_frame_size, 0,
                                         CFI_DEBUG_FRAME);
                        if (r < 0)
                                return r;
                }
        }
        if (e->n_entries == 0)
                return -ENOENT;
        (void)eh_frame_digest_compute(e, e->digest);

        /* As many slots as functions up to the maximum: a small library's cache stays small. */
        e->row_cache_size = 1;
        while (e->row_cache_size < MIN(e->n_entries, (size_t)ROW_CACHE_MAX))
                e->row_cache_size <<= 1;
        e->row_cache = calloc(e->row_cache_size, sizeof(RowSlot));
        if (!e->row_cache)
                return -ENOMEM;

        *ret = TAKE_PTR(e);
        return 0;
}

int eh_frame_new(const void *eh_frame, size_t eh_frame_size, uint64_t eh_frame_vaddr, const void *hdr,
                 size_t hdr_size, uint64_t hdr_vaddr, EhFrame **ret)
{
        return eh_frame_new_sections(&(CfiSections) { .eh_frame = eh_frame,
                                                      .eh_frame_size = eh_frame_size,
                                                      .eh_frame_vaddr = eh_frame_vaddr,
                                                      .hdr = hdr,
                                                      .hdr_size = hdr_size,
                                                      .hdr_vaddr = hdr_vaddr },
                                     ret);
}

size_t eh_frame_memory(const EhFrame *e)
{
        return e ? sizeof(*e) + e->eh_frame.size + e->debug_frame.size +
                               e->n_entries * sizeof(EhFrameEntry) + e->row_cache_size * sizeof(RowSlot)
                 : 0;
}

EhFrame *eh_frame_free(EhFrame *e)
{
        if (!e)
                return NULL;
        free(e->eh_frame.data);
        free(e->debug_frame.data);
        free(e->entries);
        free(e->row_cache);
        free(e);
        return NULL;
}

const uint8_t *eh_frame_digest(const EhFrame *e)
{
        assert(e);

        return e->digest;
}

size_t eh_frame_count(const EhFrame *e)
{
        return e ? e->n_entries : 0;
}

/* The entry of the FDE whose function may cover pc: the last one starting at or below it. */
static int find_fde(const EhFrame *e, uint64_t pc, const EhFrameEntry **ret)
{
        int64_t rel = (int64_t)(pc - e->base);
        size_t lo;

        if (rel < INT32_MIN || rel > INT32_MAX)
                return -ENOENT;
        lo = ARRAY_UPPER_BOUND(e->entries, e->n_entries, pc, rel);
        if (lo == 0)
                return -ENOENT;
        *ret = &e->entries[lo - 1];
        return 0;
}

uint64_t eh_frame_table_pc(const EhFrame *e, size_t i)
{
        assert(e);
        assert(i < e->n_entries);

        return e->base + (uint64_t)(int64_t)e->entries[i].pc;
}

uint64_t eh_frame_table_limit(const EhFrame *e)
{
        const uint64_t reach = (uint64_t)INT32_MAX + 1;

        assert(e);

        return e->base > UINT64_MAX - reach ? UINT64_MAX : e->base + reach;
}

int eh_frame_fde(const EhFrame *e, size_t i, EhFrameFde *ret)
{
        const CfiSection *s;
        size_t off;
        Fde fde;
        Cie cie;
        int r;

        assert(e);
        assert(i < e->n_entries);
        assert(ret);

        s = entry_section(e, &e->entries[i], &off);
        r = cfi_parse_fde(s, off, &fde, &cie);
        if (r < 0)
                return r;
        *ret = (EhFrameFde) {
                .pc_begin = fde.pc_begin,
                .pc_range = fde.pc_range,
                .cie = cie.program,
                .cie_insns = cie.insns,
                .fde_insns = fde.insns,
                .debug_frame = s->format == CFI_DEBUG_FRAME,
        };
        return 0;
}

/* The row at pc, from the CFI: the part of a step that depends on pc alone; and the pcs it holds for. */
static int find_row(const EhFrame *e, uint64_t pc, Row *ret, uint64_t *ret_lo, uint64_t *ret_hi,
                    CfaCie *ret_cie)
{
        const EhFrameEntry *entry;
        const CfiSection *s;
        size_t off;
        Cie cie;
        Fde fde;
        int r;

        r = find_fde(e, pc, &entry);
        if (r < 0)
                return r;
        s = entry_section(e, entry, &off);
        r = cfi_parse_fde(s, off, &fde, &cie);
        if (r < 0)
                return r;
        if (pc < fde.pc_begin || pc - fde.pc_begin >= fde.pc_range)
                return -ENOENT;
        r = cfa_program_run(&cie.program, cie.insns, fde.insns, fde.pc_begin, pc, ret, ret_lo, ret_hi);
        if (r < 0)
                return r;
        /* The row ends with the function at the latest. */
        *ret_hi = MIN(*ret_hi, fde.pc_begin + fde.pc_range);
        if (ret_cie)
                *ret_cie = cie.program;
        return 0;
}

int eh_frame_find_row(const EhFrame *e, uint64_t pc, Row *ret, CfaCie *ret_cie)
{
        uint64_t lo, hi;
        CfaCie cie;
        Row row;
        int r;

        assert(e);
        assert(ret);

        r = find_row(e, pc, &row, &lo, &hi, &cie);
        if (r < 0)
                return r;
        *ret = row;
        if (ret_cie)
                *ret_cie = cie;
        return 0;
}

int eh_frame_unwind_step(const EhFrame *e, uint64_t bias, const UnwindRegs *regs, const uint64_t *window,
                         size_t n_words, UnwindRegs *ret_caller)
{
        RowSlot *slot;
        uint64_t pc;

        assert(e);
        assert(regs);
        assert(window || n_words == 0);
        assert(ret_caller);

        pc = regs->ip - bias;
        /* Fibonacci hashing: the top bits of the product, which every bit of the granule feeds. */
        slot = &e->row_cache[((pc >> ROW_CACHE_GRANULE_SHIFT) * UINT64_C(0x9e3779b97f4a7c15)) >> 32 &
                             (e->row_cache_size - 1)];
        if (pc < slot->lo || pc >= slot->hi) {
                uint64_t lo, hi;

                /* An error is cached for its pc alone. Malformed CFI stays malformed. */
                slot->error = find_row(e, pc, &slot->row, &lo, &hi, NULL);
                if (slot->error < 0 || pc < lo || pc >= hi)
                        lo = pc, hi = pc + 1;
                slot->lo = lo;
                slot->hi = hi;
        }
        if (slot->error < 0)
                return slot->error;
        return cfa_row_unwind(&slot->row, regs, window, n_words, ret_caller);
}
