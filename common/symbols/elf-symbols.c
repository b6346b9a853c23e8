/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "array-util.h"
#include "elf-symbols.h"
#include "elf-util.h"
#include "log.h"
#include "utf8.h"
#include "xz-util.h"

/* A MiniDebugInfo ELF holds only a .symtab and its strings: a few MiB even for the largest libraries. The
 * bound is for the compressed section and for what it decompresses to. */
#define MINIDEBUGINFO_MAX (UINT64_C(256) << 20)
/* What one file may make us read (elf-util.h), far above real files: a symbol table of 11 million symbols
 * (the largest programs have a few million), 512 MiB of their names; notes hold a build-id of 20 bytes. A
 * larger one is refused, -EFBIG, rather than allocated for. */
#define SYMTAB_MAX (UINT64_C(256) << 20)
#define STRTAB_MAX (UINT64_C(512) << 20)
#define NOTES_MAX (UINT64_C(16) << 20)
#define DEBUGLINK_MAX (UINT64_C(64) << 10)

/* 16 bytes a symbol: a C++ library has 100000 of them. */
typedef struct ElfSym {
        uint64_t start;
        uint32_t size; /* never 0 once loaded: size-0 symbols get the distance to the next one */
        uint32_t name; /* offset into names */
} ElfSym;

typedef struct ElfSegment {
        uint64_t offset, vaddr, filesz, memsz;
        uint32_t flags;
} ElfSegment;

struct ElfSymbols {
        ElfSym *syms;
        size_t n_syms;
        ElfSegment *segments;
        size_t n_segments;
        char *names;
        size_t names_size;
        char *build_id;
        char *debuglink;        /* .gnu_debuglink: the debug file's name; NULL when none */
        uint32_t debuglink_crc; /* and the CRC-32 of its whole contents */
        bool has_debugdata;     /* a .gnu_debugdata section (MiniDebugInfo) */
        ElfSymbolSource source;
        bool dyn; /* ET_DYN */
};

/* A symbol as read from the table, before sorting; name points into the ELF's string table. */
typedef struct Candidate {
        uint64_t start, size;
        const char *name;
        size_t name_len;
        unsigned char bind;
} Candidate;

/* The symbols read from one or more tables; the ELF images they point into must outlive the list. */
typedef struct Candidates {
        Candidate *c;
        size_t n, allocated;
} Candidates;

static void candidates_done(Candidates *c)
{
        free(c->c);
}


static int bind_rank(unsigned char bind)
{
        return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static size_t leading_underscores(const char *s)
{
        size_t n = 0;

        while (s[n] == '_')
                n++;
        return n;
}

/* By address; at one address the name to keep comes first: a global over a weak or local one, then "malloc"
 * over "__libc_malloc", then a sized one, then by name so that the choice never depends on table order. */
static int candidate_compare(const void *a, const void *b)
{
        const Candidate *x = a, *y = b;
        size_t ux, uy;
        int r;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        if (bind_rank(x->bind) != bind_rank(y->bind))
                return bind_rank(x->bind) - bind_rank(y->bind);
        ux = leading_underscores(x->name);
        uy = leading_underscores(y->name);
        if (ux != uy)
                return ux < uy ? -1 : 1;
        if ((x->size == 0) != (y->size == 0))
                return x->size == 0 ? 1 : -1;
        r = strncmp(x->name, y->name, MIN(x->name_len, y->name_len));
        if (r != 0)
                return r;
        return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

/* The first section of this type (SHT_SYMTAB, SHT_DYNSYM), or NULL. */
static Elf_Scn *find_section_by_type(Elf *elf, Elf64_Word type)
{
        Elf_Scn *scn = NULL;
        GElf_Shdr shdr;

        while ((scn = elf_nextscn(elf, scn)))
                if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
                        return scn;
        return NULL;
}

/* The section of this name: 1 and *ret, 0 when there is none (or no readable section names), -EIO. */
static int find_section_by_name(ElfFile *f, const char *name, Elf_Scn **ret)
{
        Elf_Scn *scn = NULL;
        GElf_Shdr shdr;
        size_t shstrndx;
        int r;

        r = elf_file_section_names(f, &shstrndx);
        if (r <= 0)
                return r;
        while ((scn = elf_nextscn(f->elf, scn))) {
                const char *n;

                if (!gelf_getshdr(scn, &shdr))
                        continue;
                n = elf_strptr(f->elf, shstrndx, shdr.sh_name);
                if (n && strcmp(n, name) == 0) {
                        *ret = scn;
                        return 1;
                }
        }
        return 0;
}

/* The function symbols of one table (SHT_SYMTAB or SHT_DYNSYM; scn may be NULL), appended to cands. A table
 * or its strings beyond the bounds is -EFBIG, a file that shrank -EIO; one libelf cannot read names
 * nothing. */
static int collect_symbols(ElfFile *f, Elf_Scn *scn, Candidates *cands)
{
        Elf_Data *data;
        GElf_Shdr shdr_store, *shdr = &shdr_store;
        size_t count;
        int r;

        if (!scn || !gelf_getshdr(scn, shdr))
                return 0;
        if (shdr->sh_entsize == 0 || shdr->sh_type == SHT_NOBITS)
                return 0;
        r = elf_file_section(f, scn, SYMTAB_MAX, false, &data);
        if (r >= 0)
                r = elf_file_strings(f, shdr->sh_link, STRTAB_MAX);
        if (IN_SET(r, -EFBIG, -EIO))
                return r;
        if (r < 0)
                return 0;
        count = shdr->sh_size / shdr->sh_entsize;

        for (size_t i = 0; i < count; i++) {
                GElf_Sym sym;
                const char *name;
                int type;

                if (!gelf_getsym(data, (int)i, &sym))
                        break;
                type = GELF_ST_TYPE(sym.st_info);
                if (type != STT_FUNC && type != STT_GNU_IFUNC)
                        continue;
                if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
                        continue;
                name = elf_strptr(f->elf, shdr->sh_link, sym.st_name);
                if (!name || !*name)
                        continue;

                if (cands->n == cands->allocated) {
                        size_t a = MAX(cands->allocated * 2, (size_t)256);
                        Candidate *c = realloc(cands->c, a * sizeof(Candidate));
                        if (!c)
                                return -ENOMEM;
                        cands->c = c;
                        cands->allocated = a;
                }
                cands->c[cands->n++] = (Candidate) {
                        .start = sym.st_value,
                        .size = sym.st_size,
                        .name = name,
                        /* "memcpy@@GLIBC_2.14" in a .symtab: the version says nothing about where we are. */
                        .name_len = strcspn(name, "@"),
                        .bind = GELF_ST_BIND(sym.st_info),
                };
        }
        return 0;
}

static int load_segments(Elf *elf, ElfSymbols *e)
{
        size_t n;

        if (elf_getphdrnum(elf, &n) < 0)
                return -ENOEXEC;
        if (n == 0)
                return 0;
        e->segments = calloc(n, sizeof(ElfSegment));
        if (!e->segments)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
                        continue;
                e->segments[e->n_segments++] = (ElfSegment) {
                        .offset = phdr.p_offset,
                        .vaddr = phdr.p_vaddr,
                        .filesz = phdr.p_filesz,
                        .memsz = phdr.p_memsz,
                        .flags = phdr.p_flags,
                };
        }
        return 0;
}

/* Look for NT_GNU_BUILD_ID in one block of notes. */
static int find_build_id(Elf_Data *data, char **ret)
{
        GElf_Nhdr nhdr;
        size_t offset = 0, next, name_offset, desc_offset;

        while ((next = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
                const uint8_t *desc = (const uint8_t *)data->d_buf + desc_offset;
                char *hex;
                const char *name = (const char *)data->d_buf + name_offset;

                offset = next;
                if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != sizeof(ELF_NOTE_GNU) ||
                    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) != 0 || nhdr.n_descsz == 0)
                        continue;

                hex = malloc(nhdr.n_descsz * 2 + 1);
                if (!hex)
                        return -ENOMEM;
                for (size_t i = 0; i < nhdr.n_descsz; i++) {
                        hex[2 * i] = "0123456789abcdef"[desc[i] >> 4];
                        hex[2 * i + 1] = "0123456789abcdef"[desc[i] & 15];
                }
                hex[nhdr.n_descsz * 2] = '\0';
                *ret = hex;
                return 1;
        }
        return 0;
}

static int load_build_id(ElfFile *f, char **ret)
{
        Elf_Scn *scn = NULL;
        size_t n;
        int r;

        /* Section headers first; a file stripped of them still has the loader's PT_NOTE view. */
        while ((scn = elf_nextscn(f->elf, scn))) {
                GElf_Shdr shdr;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
                        continue;
                r = elf_file_section(f, scn, NOTES_MAX, false, &data);
                if (IN_SET(r, -EFBIG, -EIO))
                        return r;
                if (r < 0)
                        continue;
                r = find_build_id(data, ret);
                if (r != 0)
                        return r;
        }

        if (elf_getphdrnum(f->elf, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;
                Elf_Data *data;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_NOTE)
                        continue;
                r = elf_file_chunk(f, phdr.p_offset, phdr.p_filesz,
                                   phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR, NOTES_MAX, &data);
                if (IN_SET(r, -EFBIG, -EIO))
                        return r;
                if (r < 0)
                        continue;
                r = find_build_id(data, ret);
                if (r != 0)
                        return r;
        }
        return 0;
}

/* The end of the PT_LOAD segment holding vaddr, so that a last size-0 symbol does not cover everything. */
static uint64_t segment_end(const ElfSymbols *e, uint64_t vaddr)
{
        for (size_t i = 0; i < e->n_segments; i++)
                if (vaddr >= e->segments[i].vaddr && vaddr - e->segments[i].vaddr < e->segments[i].memsz)
                        return e->segments[i].vaddr + e->segments[i].memsz;
        return vaddr + 1;
}

/* Sort the candidates into e's table, replacing the one it had. */
static int build_table(ElfSymbols *e, Candidates *c)
{
        _cleanup_free_ ElfSym *syms = NULL;
        _cleanup_free_ char *names = NULL;
        Candidate *cands = c->c;
        size_t n = c->n, names_size = 0, kept = 0, used = 0, n_syms = 0;

        qsort(cands, n, sizeof(Candidate), candidate_compare);
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && cands[i].start == cands[i - 1].start)
                        continue;
                /* A symbol is named by whoever built the file: any bytes. Its name is kept escaped (utf8.h),
                 * once per file here, so that no lookup hands out a name the bus would refuse. */
                names_size += utf8_escaped_length(cands[i].name, cands[i].name_len) + 1;
                kept++;
        }
        if (names_size > UINT32_MAX)
                return -E2BIG;

        syms = malloc(MAX(kept, (size_t)1) * sizeof(ElfSym));
        names = malloc(MAX(names_size, (size_t)1));
        if (!syms || !names)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                const Candidate *x = &cands[i];
                uint64_t size = x->size;

                if (i > 0 && x->start == cands[i - 1].start)
                        continue;
                if (size == 0) {
                        /* The next distinct address: the sort put this one's duplicates right behind it. */
                        size_t j = i + 1;
                        while (j < n && cands[j].start == x->start)
                                j++;
                        size = (j < n ? cands[j].start : segment_end(e, x->start)) - x->start;
                }
                syms[n_syms++] = (ElfSym) {
                        .start = x->start,
                        .size = (uint32_t)MIN(MAX(size, (uint64_t)1), (uint64_t)UINT32_MAX),
                        .name = (uint32_t)used,
                };
                if (utf8_is_printable(x->name, x->name_len)) {
                        memcpy(names + used, x->name, x->name_len);
                        names[used + x->name_len] = '\0';
                        used += x->name_len + 1;
                } else {
                        utf8_escape_buf(x->name, x->name_len, names + used, names_size - used);
                        used += strlen(names + used) + 1;
                }
        }

        free(e->syms);
        free(e->names);
        e->syms = TAKE_PTR(syms);
        e->n_syms = n_syms;
        e->names = TAKE_PTR(names);
        e->names_size = names_size;
        return 0;
}

static int load_symbols(ElfFile *f, ElfSymbols *e)
{
        _cleanup_(candidates_done) Candidates c = {};
        int r;

        r = collect_symbols(f, find_section_by_type(f->elf, SHT_SYMTAB), &c);
        if (r < 0)
                return r;
        e->source = c.n > 0 ? ELF_SYMBOLS_SYMTAB : ELF_SYMBOLS_NONE;
        /* A .symtab without functions (debug info split off, or only a few markers left) is no better than
         * none: the exported ones in .dynsym are all a stripped binary has. */
        if (c.n == 0) {
                r = collect_symbols(f, find_section_by_type(f->elf, SHT_DYNSYM), &c);
                if (r < 0)
                        return r;
                if (c.n > 0)
                        e->source = ELF_SYMBOLS_DYNSYM;
        }
        if (c.n == 0)
                return 0;
        return build_table(e, &c);
}

/* Where a stripped file's symbols may be: the name and CRC of its .gnu_debuglink file, whether it carries
 * .gnu_debugdata. */
static int load_debug_sections(ElfFile *f, ElfSymbols *e)
{
        Elf_Scn *scn = NULL;
        Elf_Data *data = NULL;
        int r;

        r = find_section_by_name(f, ".gnu_debugdata", &scn);
        if (r < 0)
                return r;
        e->has_debugdata = r > 0;

        r = find_section_by_name(f, ".gnu_debuglink", &scn);
        if (r > 0)
                r = elf_file_section(f, scn, DEBUGLINK_MAX, false, &data);
        if (r == -EIO)
                return r;
        if (r >= 0 && data && data->d_size >= 8) {
                /* The name, NUL-terminated, padded to 4 bytes, then the CRC in the file's byte order. */
                const uint8_t *p = data->d_buf;
                size_t len = strnlen(data->d_buf, data->d_size), crc_at = (len + 4) & ~(size_t)3;

                if (len == 0 || crc_at + 4 > data->d_size || memchr(p, '/', len))
                        return 0; /* malformed, or a path where a plain name belongs: ignored */
                e->debuglink = strndup(data->d_buf, len);
                if (!e->debuglink)
                        return -ENOMEM;
                if (f->ehdr.e_ident[EI_DATA] == ELFDATA2MSB)
                        e->debuglink_crc = (uint32_t)p[crc_at] << 24 | (uint32_t)p[crc_at + 1] << 16 |
                                           (uint32_t)p[crc_at + 2] << 8 | p[crc_at + 3];
                else
                        e->debuglink_crc = (uint32_t)p[crc_at + 3] << 24 | (uint32_t)p[crc_at + 2] << 16 |
                                           (uint32_t)p[crc_at + 1] << 8 | p[crc_at];
        }
        return 0;
}

int elf_symbols_load_fd(int fd, ElfSymbols **ret)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        int r;

        assert(ret);

        r = elf_file_open(fd, &f);
        if (r < 0)
                return r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        r = load_segments(f->elf, e);
        if (r < 0)
                return r;
        r = load_build_id(f, &e->build_id);
        if (r < 0)
                return r;
        r = load_symbols(f, e);
        if (r < 0)
                return r;
        if (e->source != ELF_SYMBOLS_SYMTAB) {
                r = load_debug_sections(f, e);
                if (r < 0)
                        return r;
        }
        e->dyn = f->ehdr.e_type == ET_DYN;
        /* Names read from a file that changed meanwhile may be another file's, or cut short. */
        r = elf_file_check(f);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(e);
        return 0;
}

int elf_symbols_load_path(const char *path, ElfSymbols **ret)
{
        _cleanup_close_ int fd = -1;

        assert(path);
        assert(ret);

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return elf_symbols_load_fd(fd, ret);
}

/* The symbols collected from f, a file added to e's (its debug file, its MiniDebugInfo's), as e's table, once f is
 * known not to have changed while they were read. */
static int use_symbols(ElfSymbols *e, ElfFile *f, Candidates *c, ElfSymbolSource source)
{
        int r;

        r = elf_file_check(f);
        if (r < 0)
                return r;
        r = build_table(e, c);
        if (r < 0)
                return r;
        e->source = source;
        return 0;
}

int elf_symbols_use_debug_fd(ElfSymbols *e, int fd)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        _cleanup_(candidates_done) Candidates c = {};
        _cleanup_free_ char *build_id = NULL;
        int r;

        assert(e);

        r = elf_file_open(fd, &f);
        if (r < 0)
                return r;
        /* The debug file of another build would name the wrong functions at every address. */
        r = load_build_id(f, &build_id);
        if (r < 0)
                return r;
        if (e->build_id && build_id && strcmp(e->build_id, build_id) != 0)
                return -ESTALE;

        r = collect_symbols(f, find_section_by_type(f->elf, SHT_SYMTAB), &c);
        if (r < 0)
                return r;
        if (c.n == 0)
                return -ENOENT;
        return use_symbols(e, f, &c, ELF_SYMBOLS_DEBUG_FILE);
}

int elf_symbols_use_minidebuginfo(ElfSymbols *e, int fd)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        _cleanup_free_ void *buf = NULL;
        /* Declared after buf so that it ends before buf is freed. */
        _cleanup_(elf_file_freep) ElfFile *inner = NULL;
        _cleanup_(candidates_done) Candidates c = {};
        Elf_Scn *scn = NULL;
        Elf_Data *data;
        size_t size;
        int r;

        assert(e);

        if (!e->has_debugdata)
                return -ENOENT;
        r = elf_file_open(fd, &f);
        if (r < 0)
                return r;
        r = find_section_by_name(f, ".gnu_debugdata", &scn);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        r = elf_file_section(f, scn, MINIDEBUGINFO_MAX, false, &data);
        if (r == -ENODATA)
                return -ENOENT;
        if (r < 0)
                return r;
        r = xz_decompress(data->d_buf, data->d_size, MINIDEBUGINFO_MAX, &buf, &size);
        if (r < 0)
                return r;
        r = elf_file_memory(buf, size, &inner);
        if (r < 0)
                return r == -ENOEXEC ? -EBADMSG : r;

        /* Its .symtab has the functions .dynsym lacks, not those it has: the two together name them all. */
        r = collect_symbols(inner, find_section_by_type(inner->elf, SHT_SYMTAB), &c);
        if (r < 0)
                return r;
        if (c.n == 0)
                return -ENOENT;
        r = collect_symbols(f, find_section_by_type(f->elf, SHT_DYNSYM), &c);
        if (r < 0)
                return r;
        return use_symbols(e, f, &c, ELF_SYMBOLS_MINIDEBUGINFO);
}

int elf_symbols_offset_to_vaddr(const ElfSymbols *e, uint64_t file_offset, uint64_t *ret_vaddr)
{
        assert(e);
        assert(ret_vaddr);

        for (size_t i = 0; i < e->n_segments; i++) {
                const ElfSegment *s = &e->segments[i];

                if (file_offset >= s->offset && file_offset - s->offset < s->filesz) {
                        *ret_vaddr = file_offset - s->offset + s->vaddr;
                        return 0;
                }
        }
        return -ENOENT;
}

const char *elf_symbols_lookup(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_offset)
{
        size_t lo;
        const ElfSym *s;

        if (!e)
                return NULL;
        /* The last symbol starting at or below vaddr. */
        lo = ARRAY_UPPER_BOUND(e->syms, e->n_syms, start, vaddr);
        if (lo == 0)
                return NULL;
        s = &e->syms[lo - 1];
        if (vaddr - s->start >= s->size)
                return NULL;
        if (ret_offset)
                *ret_offset = vaddr - s->start;
        return e->names + s->name;
}

size_t elf_symbols_count(const ElfSymbols *e)
{
        return e ? e->n_syms : 0;
}

size_t elf_symbols_memory(const ElfSymbols *e)
{
        return e ? sizeof(*e) + e->n_syms * sizeof(ElfSym) + e->names_size + e->n_segments * sizeof(ElfSegment) +
                           (e->build_id ? strlen(e->build_id) + 1 : 0) +
                           (e->debuglink ? strlen(e->debuglink) + 1 : 0)
                 : 0;
}

ElfSymbolSource elf_symbols_source(const ElfSymbols *e)
{
        return e ? e->source : ELF_SYMBOLS_NONE;
}

const char *elf_symbols_debuglink(const ElfSymbols *e, uint32_t *ret_crc)
{
        if (!e || !e->debuglink)
                return NULL;
        if (ret_crc)
                *ret_crc = e->debuglink_crc;
        return e->debuglink;
}

bool elf_symbols_has_minidebuginfo(const ElfSymbols *e)
{
        return e && e->has_debugdata;
}

bool elf_symbols_is_pie_or_dso(const ElfSymbols *e)
{
        return e && e->dyn;
}

const char *elf_symbols_build_id(const ElfSymbols *e)
{
        return e ? e->build_id : NULL;
}

ElfSymbols *elf_symbols_free(ElfSymbols *e)
{
        if (!e)
                return NULL;
        free(e->syms);
        free(e->segments);
        free(e->names);
        free(e->build_id);
        free(e->debuglink);
        free(e);
        return NULL;
}
