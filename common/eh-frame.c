/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "eh-frame.h"
#include "elf-util.h"
#include "log.h"

/* The formats are those of the LSB (.eh_frame, .eh_frame_hdr) and DWARF 5 section 6.4 (the CFA program). */

/* DWARF register numbers on x86-64. */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7

/* Pointer encodings, DW_EH_PE_*: the low nibble is the format, bits 4-6 what it is relative to. */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SIGNED 0x08
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_FORMAT_MASK 0x0f
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_APPLICATION_MASK 0x70
#define PE_OMIT 0xff

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

/* One function: its start, relative to .eh_frame like the 32-bit .eh_frame_hdr table, and its FDE. */
typedef struct EhFrameEntry {
        int32_t pc;
        uint32_t fde;
} EhFrameEntry;

struct EhFrame {
        uint8_t *data; /* .eh_frame, up to its terminator */
        size_t size;
        uint64_t vaddr;
        EhFrameEntry *entries; /* sorted by pc */
        size_t n_entries;
};

/* A bounded reader: every read checks end, which is the end of the record being read, at most the
 * section's. */
typedef struct Cursor {
        const uint8_t *data;
        size_t pos, end;
        uint64_t vaddr; /* of data[0], for pc-relative pointers */
} Cursor;

typedef struct Cie {
        uint64_t code_align;
        int64_t data_align;
        uint64_t ra_register;
        uint8_t fde_encoding; /* of pc_begin and pc_range in its FDEs */
        bool augmented;       /* "z": FDEs carry augmentation data to skip */
        size_t insns, insns_end;
} Cie;

typedef struct Fde {
        uint64_t pc_begin, pc_range;
        size_t insns, insns_end;
} Fde;

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

/* The state of the CFA program run up to pc. */
typedef struct Interp {
        const EhFrame *e;
        const Cie *cie;
        uint64_t pc;
        uint64_t loc; /* where the current row starts */
        bool in_cie;
        Row row;
        Row initial; /* after the CIE's instructions: what DW_CFA_restore goes back to */
        Row stack[STATE_STACK_MAX];
        size_t n_stack;
} Interp;

static int read_le(Cursor *c, size_t n, uint64_t *ret)
{
        uint64_t v = 0;

        if (c->end - c->pos < n)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                v |= (uint64_t)c->data[c->pos + i] << (8 * i);
        c->pos += n;
        *ret = v;
        return 0;
}

static int read_u8(Cursor *c, uint8_t *ret)
{
        if (c->pos >= c->end)
                return -EBADMSG;
        *ret = c->data[c->pos++];
        return 0;
}

/* The bits beyond 64 of an over-long LEB128 are dropped; the end of the record bounds the loop. */
static int read_leb128(Cursor *c, bool is_signed, uint64_t *ret)
{
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b;

        do {
                if (c->pos >= c->end)
                        return -EBADMSG;
                b = c->data[c->pos++];
                if (shift < 64)
                        v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
        } while (b & 0x80);

        if (is_signed && shift < 64 && (b & 0x40))
                v |= UINT64_MAX << shift;
        *ret = v;
        return 0;
}

static int read_uleb128(Cursor *c, uint64_t *ret)
{
        return read_leb128(c, false, ret);
}

static int read_sleb128(Cursor *c, int64_t *ret)
{
        uint64_t v;
        int r;

        r = read_leb128(c, true, &v);
        if (r < 0)
                return r;
        *ret = (int64_t)v;
        return 0;
}

static int skip_block(Cursor *c)
{
        uint64_t len;
        int r;

        r = read_uleb128(c, &len);
        if (r < 0)
                return r;
        if (len > c->end - c->pos)
                return -EBADMSG;
        c->pos += len;
        return 0;
}

/* A pointer in the given DW_EH_PE_* encoding. datarel: the base of DW_EH_PE_datarel, NULL where it has none
 * we know (.eh_frame itself: the GOT). An indirect pointer is given as the address where it is stored: only
 * personality routines use that, and we never need their value. */
static int read_encoded(Cursor *c, uint8_t encoding, const uint64_t *datarel, uint64_t *ret)
{
        uint64_t field = c->vaddr + c->pos, v;
        size_t size;
        int r;

        if (encoding == PE_OMIT)
                return -EBADMSG;

        switch (encoding & PE_FORMAT_MASK) {
        case PE_ULEB128:
        case PE_SLEB128:
                size = 0;
                break;
        case PE_UDATA2:
        case PE_SDATA2:
                size = 2;
                break;
        case PE_UDATA4:
        case PE_SDATA4:
                size = 4;
                break;
        case PE_ABSPTR:
        case PE_SIGNED:
        case PE_UDATA8:
        case PE_SDATA8:
                size = 8;
                break;
        default:
                return -EBADMSG;
        }
        if (size == 0)
                r = read_leb128(c, encoding & PE_SIGNED, &v);
        else
                r = read_le(c, size, &v);
        if (r < 0)
                return r;
        if (size > 0 && size < 8 && (encoding & PE_SIGNED) && (v >> (size * 8 - 1)))
                v |= UINT64_MAX << (size * 8);

        switch (encoding & PE_APPLICATION_MASK) {
        case 0:
                break;
        case PE_PCREL:
                v += field;
                break;
        case PE_DATAREL:
                if (!datarel)
                        return -EOPNOTSUPP;
                v += *datarel;
                break;
        default: /* textrel, funcrel, aligned: not emitted for x86-64 */
                return -EOPNOTSUPP;
        }
        *ret = v;
        return 0;
}

/* The header of the CIE or FDE at off: the offset of its id field, its end, and the id (0 for a CIE, else the
 * distance back from the id field to the FDE's CIE). -ENODATA at the zero-length terminator. */
static int read_record(const uint8_t *data, size_t size, size_t off, size_t *ret_id_off, size_t *ret_end,
                       uint32_t *ret_id)
{
        Cursor c = { .data = data, .pos = off, .end = size };
        uint64_t len, id;
        int r;

        if (off > size)
                return -EBADMSG;
        r = read_le(&c, 4, &len);
        if (r < 0)
                return r;
        if (len == 0)
                return -ENODATA;
        if (len == UINT32_MAX) {
                r = read_le(&c, 8, &len);
                if (r < 0)
                        return r;
        }
        if (len < 4 || len > c.end - c.pos)
                return -EBADMSG;
        *ret_id_off = c.pos;
        *ret_end = c.pos + len;
        /* The id is 4 bytes in .eh_frame even with a 64-bit length. */
        r = read_le(&c, 4, &id);
        if (r < 0)
                return r;
        *ret_id = (uint32_t)id;
        return 0;
}

/* The augmentation data of a CIE, as its letters after "z" say, from a cursor bounded by the data's length. */
static int parse_augmentation(Cursor *c, const char *letters, Cie *cie)
{
        uint64_t ignored;
        uint8_t encoding;
        int r = 0;

        for (const char *a = letters; *a; a++) {
                switch (*a) {
                case 'R':
                        r = read_u8(c, &cie->fde_encoding);
                        break;
                case 'L':
                        r = read_u8(c, &encoding);
                        break;
                case 'P':
                        r = read_u8(c, &encoding);
                        if (r >= 0)
                                r = read_encoded(c, encoding & PE_FORMAT_MASK, NULL, &ignored);
                        break;
                case 'S': /* a signal frame */
                case 'B': /* AArch64 pointer authentication */
                case 'G': /* memory tagging */
                        break;
                default:
                        /* Data we cannot size: the length skips it, but 'R' must not come after it. */
                        return strchr(a, 'R') ? -EBADMSG : 0;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_cie(const EhFrame *e, size_t off, Cie *ret)
{
        Cursor c = { .data = e->data, .vaddr = e->vaddr };
        Cie cie = { .fde_encoding = PE_ABSPTR };
        const char *augmentation, *nul;
        size_t id_off, end;
        uint32_t id;
        uint8_t version;
        int r;

        r = read_record(e->data, e->size, off, &id_off, &end, &id);
        if (r < 0)
                return r == -ENODATA ? -EBADMSG : r;
        if (id != 0)
                return -EBADMSG;
        c.pos = id_off + 4;
        c.end = end;

        r = read_u8(&c, &version);
        if (r < 0)
                return r;
        /* Version 4 is .debug_frame's, not .eh_frame's. */
        if (!IN_SET(version, 1, 3))
                return -EBADMSG;
        augmentation = (const char *)c.data + c.pos;
        nul = memchr(augmentation, '\0', c.end - c.pos);
        if (!nul)
                return -EBADMSG;
        c.pos += (size_t)(nul - augmentation) + 1;
        r = read_uleb128(&c, &cie.code_align);
        if (r >= 0)
                r = read_sleb128(&c, &cie.data_align);
        if (r >= 0 && version == 1) {
                uint8_t ra;

                r = read_u8(&c, &ra);
                cie.ra_register = r >= 0 ? ra : 0;
        } else if (r >= 0)
                r = read_uleb128(&c, &cie.ra_register);
        if (r < 0)
                return r;

        if (augmentation[0] == 'z') {
                uint64_t len;
                Cursor data;

                r = read_uleb128(&c, &len);
                if (r < 0)
                        return r;
                if (len > c.end - c.pos)
                        return -EBADMSG;
                data = (Cursor) { .data = c.data, .pos = c.pos, .end = c.pos + len, .vaddr = c.vaddr };
                r = parse_augmentation(&data, augmentation + 1, &cie);
                if (r < 0)
                        return r;
                cie.augmented = true;
                c.pos = data.end;
        } else if (augmentation[0] != '\0')
                return -EBADMSG; /* "eh" and other pre-"z" forms, of which we cannot size the data */

        cie.insns = c.pos;
        cie.insns_end = c.end;
        *ret = cie;
        return 0;
}

/* The FDE at off, and its CIE. */
static int parse_fde(const EhFrame *e, size_t off, Fde *ret_fde, Cie *ret_cie)
{
        Cursor c = { .data = e->data, .vaddr = e->vaddr };
        size_t id_off, end;
        uint32_t id;
        Fde fde = {};
        Cie cie;
        int r;

        r = read_record(e->data, e->size, off, &id_off, &end, &id);
        if (r < 0)
                return r == -ENODATA ? -EBADMSG : r;
        if (id == 0 || id > id_off)
                return -EBADMSG;
        r = parse_cie(e, id_off - id, &cie);
        if (r < 0)
                return r;

        c.pos = id_off + 4;
        c.end = end;
        r = read_encoded(&c, cie.fde_encoding, NULL, &fde.pc_begin);
        if (r >= 0)
                r = read_encoded(&c, cie.fde_encoding & PE_FORMAT_MASK, NULL, &fde.pc_range);
        if (r >= 0 && cie.augmented)
                r = skip_block(&c);
        if (r < 0)
                return r;
        fde.insns = c.pos;
        fde.insns_end = c.end;

        *ret_fde = fde;
        *ret_cie = cie;
        return 0;
}

static int table_add(EhFrame *e, size_t *allocated, uint64_t pc, size_t fde)
{
        int64_t rel = (int64_t)(pc - e->vaddr);

        /* Out of reach of a 32-bit table, as of .eh_frame_hdr's: not code of this file. */
        if (rel < INT32_MIN || rel > INT32_MAX || fde > UINT32_MAX)
                return 0;
        if (e->n_entries == *allocated) {
                size_t a = MAX(*allocated * 2, (size_t)64);
                EhFrameEntry *entries = realloc(e->entries, a * sizeof(EhFrameEntry));

                if (!entries)
                        return -ENOMEM;
                e->entries = entries;
                *allocated = a;
        }
        e->entries[e->n_entries++] = (EhFrameEntry) { .pc = (int32_t)rel, .fde = (uint32_t)fde };
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
        if (eh_frame != e->vaddr)
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
                if (fde < e->vaddr || fde - e->vaddr >= e->size)
                        return -EBADMSG;
                r = table_add(e, &allocated, pc, (size_t)(fde - e->vaddr));
                if (r < 0)
                        return r;
        }
        table_sort(e);
        return 0;
}

/* Without a usable header: every FDE of .eh_frame, once. A malformed record ends the scan; the FDEs before it
 * stay usable. */
static int scan_eh_frame(EhFrame *e)
{
        size_t allocated = 0, off = 0;
        int r;

        while (off < e->size) {
                size_t id_off, end;
                uint32_t id;
                Fde fde;
                Cie cie;

                if (read_record(e->data, e->size, off, &id_off, &end, &id) < 0)
                        break;
                /* Zero-length FDEs are left over from functions the linker discarded. */
                if (id != 0 && parse_fde(e, off, &fde, &cie) >= 0 && fde.pc_range > 0) {
                        r = table_add(e, &allocated, fde.pc_begin, off);
                        if (r < 0)
                                return r;
                }
                off = end;
        }
        table_sort(e);
        return 0;
}

/* How much of data is .eh_frame: up to and with its terminator, or all of it. */
static size_t eh_frame_extent(const uint8_t *data, size_t size)
{
        size_t off = 0, id_off, end;
        uint32_t id;
        int r;

        while (off < size) {
                r = read_record(data, size, off, &id_off, &end, &id);
                if (r == -ENODATA)
                        return off + 4;
                if (r < 0)
                        return size;
                off = end;
        }
        return size;
}

int eh_frame_new(const void *eh_frame, size_t eh_frame_size, uint64_t eh_frame_vaddr, const void *hdr,
                 size_t hdr_size, uint64_t hdr_vaddr, EhFrame **ret)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        int r = -ENOENT;

        if ((!eh_frame && eh_frame_size > 0) || (!hdr && hdr_size > 0) || !ret)
                return -EINVAL;
        if (eh_frame_size == 0)
                return -ENOENT;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->size = eh_frame_extent(eh_frame, eh_frame_size);
        e->vaddr = eh_frame_vaddr;
        e->data = malloc(e->size);
        if (!e->data)
                return -ENOMEM;
        memcpy(e->data, eh_frame, e->size);

        if (hdr)
                r = load_hdr_table(e, hdr, hdr_size, hdr_vaddr);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (hdr)
                        log_debug_errno(r, "No usable .eh_frame_hdr table, scanning .eh_frame: %m");
                table_reset(e);
                r = scan_eh_frame(e);
                if (r < 0)
                        return r;
        }
        if (e->n_entries == 0)
                return -ENOENT;

        *ret = TAKE_PTR(e);
        return 0;
}

EhFrame *eh_frame_free(EhFrame *e)
{
        if (!e)
                return NULL;
        free(e->data);
        free(e->entries);
        free(e);
        return NULL;
}

size_t eh_frame_count(const EhFrame *e)
{
        return e ? e->n_entries : 0;
}

/* A file without section headers still has the loader's PT_GNU_EH_FRAME. */
static Elf_Data *find_hdr_segment(Elf *elf, uint64_t *ret_vaddr)
{
        size_t n;

        if (elf_getphdrnum(elf, &n) < 0)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_GNU_EH_FRAME)
                        continue;
                *ret_vaddr = phdr.p_vaddr;
                return elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz, ELF_T_BYTE);
        }
        return NULL;
}

/* .eh_frame found through the header's pointer, when there are no section headers: it runs to the end of
 * its segment at most, eh_frame_new() finds its terminator. */
static Elf_Data *find_eh_frame_from_hdr(Elf *elf, const Elf_Data *hdr, uint64_t hdr_vaddr, uint64_t *ret_vaddr)
{
        Cursor c = { .data = hdr->d_buf, .end = hdr->d_size, .vaddr = hdr_vaddr };
        uint8_t count_encoding, table_encoding;
        uint64_t vaddr;
        size_t n;

        if (hdr_start(&c, &count_encoding, &table_encoding, &vaddr) < 0 || elf_getphdrnum(elf, &n) < 0)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD || vaddr < phdr.p_vaddr ||
                    vaddr - phdr.p_vaddr >= phdr.p_filesz)
                        continue;
                *ret_vaddr = vaddr;
                return elf_getdata_rawchunk(elf, (int64_t)(phdr.p_offset + (vaddr - phdr.p_vaddr)),
                                            phdr.p_filesz - (vaddr - phdr.p_vaddr), ELF_T_BYTE);
        }
        return NULL;
}

int eh_frame_load_fd(int fd, EhFrame **ret)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        Elf_Data *eh_frame = NULL, *hdr = NULL;
        uint64_t eh_frame_vaddr = 0, hdr_vaddr = 0;
        Elf_Scn *scn = NULL;
        GElf_Ehdr ehdr;
        size_t shstrndx;
        int r;

        if (!ret)
                return -EINVAL;
        r = elf_open_fd(fd, &elf, &ehdr);
        if (r < 0)
                return r;
        /* The register numbers and the 8-byte stack words are those of x86-64. */
        if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
            ehdr.e_machine != EM_X86_64)
                return -EOPNOTSUPP;

        if (elf_getshdrstrndx(elf, &shstrndx) >= 0)
                while ((scn = elf_nextscn(elf, scn))) {
                        GElf_Shdr shdr;
                        const char *name;

                        /* SHT_NOBITS: a separate debug file, whose sections are placeholders. */
                        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
                                continue;
                        name = elf_strptr(elf, shstrndx, shdr.sh_name);
                        if (!name)
                                continue;
                        if (!eh_frame && strcmp(name, ".eh_frame") == 0) {
                                eh_frame = elf_rawdata(scn, NULL);
                                eh_frame_vaddr = shdr.sh_addr;
                        } else if (!hdr && strcmp(name, ".eh_frame_hdr") == 0) {
                                hdr = elf_rawdata(scn, NULL);
                                hdr_vaddr = shdr.sh_addr;
                        }
                }
        if (!hdr)
                hdr = find_hdr_segment(elf, &hdr_vaddr);
        if (!eh_frame && hdr && hdr->d_buf)
                eh_frame = find_eh_frame_from_hdr(elf, hdr, hdr_vaddr, &eh_frame_vaddr);
        if (!eh_frame || !eh_frame->d_buf)
                return -ENOENT;
        if (hdr && !hdr->d_buf)
                hdr = NULL;

        return eh_frame_new(eh_frame->d_buf, eh_frame->d_size, eh_frame_vaddr, hdr ? hdr->d_buf : NULL,
                            hdr ? hdr->d_size : 0, hdr_vaddr, ret);
}

int eh_frame_load_path(const char *path, EhFrame **ret)
{
        _cleanup_close_ int fd = -1;

        if (!path || !ret)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return eh_frame_load_fd(fd, ret);
}

/* The offset of the FDE whose function may cover pc: the last one starting at or below it. */
static int find_fde(const EhFrame *e, uint64_t pc, size_t *ret)
{
        int64_t rel = (int64_t)(pc - e->vaddr);
        size_t lo = 0, hi = e->n_entries;

        if (rel < INT32_MIN || rel > INT32_MAX)
                return -ENOENT;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (e->entries[mid].pc <= rel)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return -ENOENT;
        *ret = e->entries[lo - 1].fde;
        return 0;
}

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

/* 1 when the new row starts beyond pc: the current one is the answer. */
static int set_loc(Interp *in, uint64_t loc)
{
        if (loc < in->loc)
                return -EBADMSG;
        if (loc > in->pc)
                return 1;
        in->loc = loc;
        return 0;
}

static int advance(Interp *in, uint64_t delta)
{
        uint64_t d = delta * in->cie->code_align;

        /* Past the end of the address space is past pc too. */
        if ((in->cie->code_align != 0 && d / in->cie->code_align != delta) || in->loc + d < in->loc)
                return 1;
        return set_loc(in, in->loc + d);
}

/* Run the instructions in [start, end) of .eh_frame: 1 when stopped at pc, 0 at their end. Every instruction
 * takes at least a byte, so end bounds the loop. */
static int run_program(Interp *in, size_t start, size_t end)
{
        Cursor c = { .data = in->e->data, .pos = start, .end = end, .vaddr = in->e->vaddr };
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
                case CFA_DEF_CFA_EXPRESSION:
                        r = skip_block(&c);
                        in->row.cfa_defined = true;
                        in->row.cfa_expression = true;
                        break;
                case CFA_EXPRESSION:
                case CFA_VAL_EXPRESSION:
                        r = read_uleb128(&c, &reg);
                        if (r >= 0)
                                r = skip_block(&c);
                        if (r >= 0)
                                set_rule(in, reg, RULE_EXPRESSION, 0);
                        break;
                case CFA_GNU_ARGS_SIZE:
                        r = read_uleb128(&c, &n);
                        break;
                default:
                        return -EBADMSG;
                }
        }
        return r;
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
                return -EOPNOTSUPP;
        }
        return -EBADMSG;
}

int eh_frame_unwind_step(const EhFrame *e, uint64_t bias, const UnwindRegs *regs, const uint64_t *window,
                         size_t n_words, UnwindRegs *ret_caller)
{
        uint64_t pc, cfa, ra, bp;
        size_t off;
        Interp in;
        Cie cie;
        Fde fde;
        int r;

        if (!e || !regs || (!window && n_words > 0) || !ret_caller)
                return -EINVAL;

        pc = regs->ip - bias;
        r = find_fde(e, pc, &off);
        if (r < 0)
                return r;
        r = parse_fde(e, off, &fde, &cie);
        if (r < 0)
                return r;
        if (pc < fde.pc_begin || pc - fde.pc_begin >= fde.pc_range)
                return -ENOENT;

        in = (Interp) { .e = e, .cie = &cie, .pc = pc, .loc = fde.pc_begin, .in_cie = true };
        for (int col = 0; col < N_COLUMNS; col++)
                in.row.columns[col] = default_rule(col);
        r = run_program(&in, cie.insns, cie.insns_end);
        if (r == 0) {
                in.initial = in.row;
                in.in_cie = false;
                r = run_program(&in, fde.insns, fde.insns_end);
        }
        if (r < 0)
                return r;

        if (!in.row.cfa_defined)
                return -EBADMSG;
        if (in.row.cfa_expression)
                return -EOPNOTSUPP;
        r = register_value(regs, in.row.cfa_register, &cfa);
        if (r < 0)
                return r;
        cfa += (uint64_t)in.row.cfa_offset;

        switch (in.row.columns[COLUMN_RA].type) {
        case RULE_UNDEFINED:
                return -ENOENT; /* the outermost frame: _start, a thread's start */
        case RULE_SAME:
                return -EBADMSG;
        default:
                break;
        }
        r = rule_value(&in.row.columns[COLUMN_RA], cfa, regs->ip, regs, window, n_words, &ra);
        if (r < 0)
                return r;
        r = rule_value(&in.row.columns[COLUMN_RBP], cfa, regs->bp, regs, window, n_words, &bp);
        if (r < 0)
                return r;

        /* On x86-64 the CFA is the caller's sp by definition. */
        *ret_caller = (UnwindRegs) { .ip = ra, .sp = cfa, .bp = bp };
        return 0;
}
