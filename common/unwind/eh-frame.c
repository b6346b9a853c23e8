/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "cfa-program.h"
#include "dwarf-cursor.h"
#include "eh-frame.h"
#include "elf-util.h"
#include "log.h"

/* The formats are those of the LSB (.eh_frame, .eh_frame_hdr) and DWARF 5 section 6.4 (CIE and FDE). */

/* One function: its start, relative to .eh_frame like the 32-bit .eh_frame_hdr table, and its FDE. */
typedef struct EhFrameEntry {
        int32_t pc;
        uint32_t fde;
} EhFrameEntry;

/* A row (or an error) and the pcs it holds for, [lo, hi), as found by the FDE search, the FDE's parsing and the
 * CFA program. An empty slot has lo == hi. */
typedef struct RowSlot {
        uint64_t lo, hi;
        int error; /* 0: row is the range's */
        Row row;
} RowSlot;

/* The most bytes of .eh_frame or .eh_frame_hdr read from a file (elf-util.h): the largest programs have a
 * few tens of MiB. Larger is refused, -EFBIG. */
#define EH_FRAME_MAX (UINT64_C(256) << 20)

/* Slots of the row cache, at most: a sampled program keeps stopping at the same few thousand places, and finding
 * and running their CFI again costs thousands of instructions a step, against tens for a hit. */
#define ROW_CACHE_MAX 4096
/* Slots are chosen by pc in granules of this many bytes: a row usually covers a function's whole body, so the
 * pcs sampled near each other in it share one slot. */
#define ROW_CACHE_GRANULE_SHIFT 5

struct EhFrame {
        uint8_t *data; /* .eh_frame, up to its terminator */
        size_t size;
        uint64_t vaddr;
        EhFrameEntry *entries; /* sorted by pc */
        size_t n_entries;
        /* Direct-mapped by pc, a power of two of slots: filled by eh_frame_unwind_step(), which is why the
         * cache is behind a pointer (the EhFrame is const to its users) and why an EhFrame is for one thread
         * at a time. */
        RowSlot *row_cache;
        size_t row_cache_size;
};

typedef struct Cie {
        CfaCie program;
        bool augmented; /* "z": FDEs carry augmentation data to skip */
        Cursor insns;   /* the initial instructions, up to the end of the record */
} Cie;

typedef struct Fde {
        uint64_t pc_begin, pc_range;
        Cursor insns;
} Fde;

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
                        r = read_u8(c, &cie->program.fde_encoding);
                        break;
                case 'L':
                        r = read_u8(c, &encoding);
                        break;
                case 'P':
                        r = read_u8(c, &encoding);
                        if (r >= 0)
                                r = read_encoded(c, encoding & PE_FORMAT_MASK, NULL, &ignored);
                        break;
                case 'S': /* a signal frame: the return address is the interrupted instruction, not a call's */
                        cie->program.signal_frame = true;
                        break;
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
        Cie cie = { .program.fde_encoding = PE_ABSPTR };
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
        r = read_uleb128(&c, &cie.program.code_align);
        if (r >= 0)
                r = read_sleb128(&c, &cie.program.data_align);
        if (r >= 0 && version == 1) {
                uint8_t ra;

                r = read_u8(&c, &ra);
                cie.program.ra_register = r >= 0 ? ra : 0;
        } else if (r >= 0)
                r = read_uleb128(&c, &cie.program.ra_register);
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

        cie.insns = c;
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
        r = read_encoded(&c, cie.program.fde_encoding, NULL, &fde.pc_begin);
        if (r >= 0)
                r = read_encoded(&c, cie.program.fde_encoding & PE_FORMAT_MASK, NULL, &fde.pc_range);
        if (r >= 0 && cie.augmented)
                r = skip_block(&c);
        if (r < 0)
                return r;
        fde.insns = c;

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

        assert(eh_frame || eh_frame_size == 0);
        assert(hdr || hdr_size == 0);
        assert(ret);

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

size_t eh_frame_memory(const EhFrame *e)
{
        return e ? sizeof(*e) + e->size + e->n_entries * sizeof(EhFrameEntry) + e->row_cache_size * sizeof(RowSlot)
                 : 0;
}

EhFrame *eh_frame_free(EhFrame *e)
{
        if (!e)
                return NULL;
        free(e->data);
        free(e->entries);
        free(e->row_cache);
        free(e);
        return NULL;
}

size_t eh_frame_count(const EhFrame *e)
{
        return e ? e->n_entries : 0;
}

/* A file without section headers still has the loader's PT_GNU_EH_FRAME: 0 and *ret (NULL when there is
 * none), or -EFBIG, -EIO. */
static int find_hdr_segment(ElfFile *f, Elf_Data **ret, uint64_t *ret_vaddr)
{
        size_t n;
        int r;

        if (elf_getphdrnum(f->elf, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_GNU_EH_FRAME)
                        continue;
                r = elf_file_chunk(f, phdr.p_offset, phdr.p_filesz, ELF_T_BYTE, EH_FRAME_MAX, ret);
                if (IN_SET(r, -EFBIG, -EIO))
                        return r;
                if (r >= 0)
                        *ret_vaddr = phdr.p_vaddr;
                return 0;
        }
        return 0;
}

/* .eh_frame found through the header's pointer, when there are no section headers: it runs to the end of
 * its segment at most (or EH_FRAME_MAX), eh_frame_new() finds its terminator. 0 and *ret (NULL when there is
 * none), or -EIO. */
static int find_eh_frame_from_hdr(ElfFile *f, const Elf_Data *hdr, uint64_t hdr_vaddr, Elf_Data **ret,
                                  uint64_t *ret_vaddr)
{
        Cursor c = { .data = hdr->d_buf, .end = hdr->d_size, .vaddr = hdr_vaddr };
        uint8_t count_encoding, table_encoding;
        uint64_t vaddr;
        size_t n;
        int r;

        if (hdr_start(&c, &count_encoding, &table_encoding, &vaddr) < 0 || elf_getphdrnum(f->elf, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;
                uint64_t delta;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD || vaddr < phdr.p_vaddr ||
                    vaddr - phdr.p_vaddr >= phdr.p_filesz)
                        continue;
                delta = vaddr - phdr.p_vaddr;
                if (phdr.p_offset > UINT64_MAX - delta)
                        return 0;
                r = elf_file_chunk(f, phdr.p_offset + delta, MIN(phdr.p_filesz - delta, EH_FRAME_MAX),
                                   ELF_T_BYTE, EH_FRAME_MAX, ret);
                if (r == -EIO)
                        return r;
                if (r >= 0)
                        *ret_vaddr = vaddr;
                return 0;
        }
        return 0;
}

int eh_frame_load_fd(int fd, EhFrame **ret)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        Elf_Data *eh_frame = NULL, *hdr = NULL;
        uint64_t eh_frame_vaddr = 0, hdr_vaddr = 0;
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        int r;

        assert(ret);

        r = elf_file_open(fd, &f);
        if (r < 0)
                return r;
        /* The register numbers and the 8-byte stack words are those of x86-64. */
        if (f->ehdr.e_ident[EI_CLASS] != ELFCLASS64 || f->ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
            f->ehdr.e_machine != EM_X86_64)
                return -EOPNOTSUPP;

        if (elf_getshdrstrndx(f->elf, &shstrndx) >= 0) {
                r = elf_file_strings(f, shstrndx, ELF_SECTION_NAMES_MAX);
                if (r == -EIO)
                        return r;
                while (r >= 0 && (scn = elf_nextscn(f->elf, scn))) {
                        Elf_Data **data = NULL;
                        GElf_Shdr shdr;
                        const char *name;

                        /* SHT_NOBITS: a separate debug file, whose sections are placeholders. */
                        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
                                continue;
                        name = elf_strptr(f->elf, shstrndx, shdr.sh_name);
                        if (!name)
                                continue;
                        if (!eh_frame && strcmp(name, ".eh_frame") == 0) {
                                data = &eh_frame;
                                eh_frame_vaddr = shdr.sh_addr;
                        } else if (!hdr && strcmp(name, ".eh_frame_hdr") == 0) {
                                data = &hdr;
                                hdr_vaddr = shdr.sh_addr;
                        }
                        if (!data)
                                continue;
                        r = elf_file_section(f, scn, EH_FRAME_MAX, true, data);
                        if (IN_SET(r, -EFBIG, -EIO))
                                return r;
                        r = 0;
                }
        }
        if (!hdr) {
                r = find_hdr_segment(f, &hdr, &hdr_vaddr);
                if (r < 0)
                        return r;
        }
        if (!eh_frame && hdr) {
                r = find_eh_frame_from_hdr(f, hdr, hdr_vaddr, &eh_frame, &eh_frame_vaddr);
                if (r < 0)
                        return r;
        }
        if (!eh_frame)
                return -ENOENT;
        /* CFI read from a file that changed meanwhile may be another file's. */
        r = elf_file_check(f);
        if (r < 0)
                return r;

        return eh_frame_new(eh_frame->d_buf, eh_frame->d_size, eh_frame_vaddr, hdr ? hdr->d_buf : NULL,
                            hdr ? hdr->d_size : 0, hdr_vaddr, ret);
}

int eh_frame_load_path(const char *path, EhFrame **ret)
{
        _cleanup_close_ int fd = -1;

        assert(path);
        assert(ret);

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

uint64_t eh_frame_table_pc(const EhFrame *e, size_t i)
{
        assert(e);
        assert(i < e->n_entries);

        return e->vaddr + (uint64_t)(int64_t)e->entries[i].pc;
}

uint64_t eh_frame_table_limit(const EhFrame *e)
{
        const uint64_t reach = (uint64_t)INT32_MAX + 1;

        assert(e);

        return e->vaddr > UINT64_MAX - reach ? UINT64_MAX : e->vaddr + reach;
}

int eh_frame_fde(const EhFrame *e, size_t i, EhFrameFde *ret)
{
        Fde fde;
        Cie cie;
        int r;

        assert(e);
        assert(i < e->n_entries);
        assert(ret);

        r = parse_fde(e, e->entries[i].fde, &fde, &cie);
        if (r < 0)
                return r;
        *ret = (EhFrameFde) {
                .pc_begin = fde.pc_begin,
                .pc_range = fde.pc_range,
                .cie = cie.program,
                .cie_insns = cie.insns,
                .fde_insns = fde.insns,
        };
        return 0;
}

/* The row at pc, from the CFI: the part of a step that depends on pc alone; and the pcs it holds for. */
static int find_row(const EhFrame *e, uint64_t pc, Row *ret, uint64_t *ret_lo, uint64_t *ret_hi,
                    CfaCie *ret_cie)
{
        size_t off;
        Cie cie;
        Fde fde;
        int r;

        r = find_fde(e, pc, &off);
        if (r < 0)
                return r;
        r = parse_fde(e, off, &fde, &cie);
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
