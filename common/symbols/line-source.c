/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf-strings.h"
#include "line-source.h"
#include "macros.h"

#if HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

/* An address range of a compile unit, for the files without .debug_aranges. */
typedef struct UnitRange {
        uint64_t start, end;
        Dwarf_Die unit;
} UnitRange;

/* A debug section's bytes in memory. */
typedef struct DataSpan {
        const char *start, *end;
} DataSpan;

/* The debug sections a file's strings may be in: .debug_str, .debug_line_str, .debug_info, .debug_line and a
 * few more; more than this many are not looked at (a string in one of them is taken as libdw's own). */
#define DWARF_SPANS_MAX 24

/* The files a reader opened: few per query (a process's executable and libraries). */
typedef struct LineFile {
        dev_t dev;
        ino_t ino;
        uint64_t dwarf_bytes; /* its debug sections, as libdw holds them (read and decompressed) */
        DataSpan spans[DWARF_SPANS_MAX]; /* where those sections are in memory, for checking libdw's strings */
        size_t n_spans;
        int fd;
        Elf *elf;          /* read with ELF_C_READ: a target's file, which its owner may truncate, is never
                            * mapped (a mapping would give SIGBUS) */
        Dwarf *dwarf;      /* NULL: the file has no DWARF */
        UnitRange *ranges; /* by start; made on the first address .debug_aranges does not know */
        size_t n_ranges;
        bool indexed;
} LineFile;

struct LineReader {
        LineFile *files;
        size_t n_files;
};

int line_reader_new(LineReader **ret)
{
        LineReader *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

size_t line_reader_files(const LineReader *r)
{
        return r ? r->n_files : 0;
}

uint64_t line_reader_bytes(const LineReader *r)
{
        uint64_t bytes = 0;

        for (size_t i = 0; r && i < r->n_files; i++)
                bytes += r->files[i].dwarf_bytes;
        return bytes;
}

LineReader *line_reader_free(LineReader *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_files; i++) {
                if (r->files[i].dwarf)
                        dwarf_end(r->files[i].dwarf);
                if (r->files[i].elf)
                        elf_end(r->files[i].elf);
                free(r->files[i].ranges);
                safe_close(r->files[i].fd);
        }
        free(r->files);
        free(r);
        return NULL;
}

/* Sections libdw would read and decompress at dwarf_begin_elf() that neither reader uses: location lists (a
 * quarter of python3.11's DWARF, 5.6 of 22 MB), macros, CFI, the name indexes. Marked SHT_NOBITS in the Elf's
 * copy of the section headers (the file is not written), which libdw skips. */
static void hide_unused_sections(Elf *elf)
{
        static const char *const unused[] = {
                ".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo", ".debug_frame",
                ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names",
        };
        Elf_Scn *scn = NULL;
        size_t shstrndx;

        if (elf_getshdrstrndx(elf, &shstrndx) != 0)
                return;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *name;

                /* A name not starting with '.' (the empty one at the string table's last byte) is none of
                 * them, and skipping its first byte would read past its end (fuzz-inline-frames). */
                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
                    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)) || name[0] != '.')
                        continue;
                /* .zdebug_X is .debug_X compressed the GNU way: compared from "debug_". */
                name += strncmp(name, ".zdebug_", 8) == 0 ? 2 : 1;
                for (size_t i = 0; i < ELEMENTSOF(unused); i++)
                        if (strcmp(name, unused[i] + 1) == 0) {
                                shdr.sh_type = SHT_NOBITS;
                                (void)gelf_update_shdr(scn, &shdr);
                                break;
                        }
        }
}

/* The bytes of the debug sections libdw read, and where they are in memory: after dwarf_begin_elf(), a compressed
 * section's header has its decompressed size, and libdw has read (and decompressed) the sections it uses, so
 * elf_getdata() hands back its buffer without reading. */
static void note_dwarf_sections(LineFile *f)
{
        Elf_Scn *scn = NULL;
        size_t shstrndx;

        if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
                return;
        while ((scn = elf_nextscn(f->elf, scn))) {
                GElf_Shdr shdr;
                const char *name;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
                    !(name = elf_strptr(f->elf, shstrndx, shdr.sh_name)) ||
                    (strncmp(name, ".debug_", 7) != 0 && strncmp(name, ".zdebug_", 8) != 0))
                        continue;
                f->dwarf_bytes += shdr.sh_size;
                if (f->n_spans < DWARF_SPANS_MAX && (data = elf_getdata(scn, NULL)) && data->d_buf)
                        f->spans[f->n_spans++] = (DataSpan){ data->d_buf, (const char *)data->d_buf + data->d_size };
        }
}

/* Whether s, a string libdw gave, ends inside the section it starts in. libdw (0.188) hands out a string at
 * the very end of .debug_str, past its last NUL, for an offset equal to the section's size (fuzz-inline-frames).
 * A string in none of the sections is libdw's own (a directory and a file name joined). */
static bool string_in_bounds(const LineFile *f, const char *s)
{
        if (!s)
                return true;
        for (size_t i = 0; i < f->n_spans; i++)
                if (s >= f->spans[i].start && s <= f->spans[i].end)
                        return s < f->spans[i].end && memchr(s, 0, (size_t)(f->spans[i].end - s));
        return true;
}

/* The reader's file for fd, opened and its DWARF begun on first use; takes fd. */
static int line_reader_file(LineReader *r, int fd, LineFile **ret)
{
        _cleanup_close_ int owned = fd;
        struct stat st;
        LineFile *files;

        if (fstat(fd, &st) < 0)
                return -errno;
        for (size_t i = 0; i < r->n_files; i++)
                if (r->files[i].dev == st.st_dev && r->files[i].ino == st.st_ino) {
                        *ret = &r->files[i];
                        return 0;
                }
        files = reallocarray(r->files, r->n_files + 1, sizeof(*files));
        if (!files)
                return -ENOMEM;
        r->files = files;
        /* libelf reads through the descriptor, which must stay open while the Elf lives. Not dwarf_begin(fd),
         * which maps the file. */
        files[r->n_files] = (LineFile){
                .dev = st.st_dev,
                .ino = st.st_ino,
                .fd = TAKE_FD(owned),
        };
        (void)elf_version(EV_CURRENT);
        files[r->n_files].elf = elf_begin(files[r->n_files].fd, ELF_C_READ, NULL);
        if (files[r->n_files].elf) {
                hide_unused_sections(files[r->n_files].elf);
                files[r->n_files].dwarf = dwarf_begin_elf(files[r->n_files].elf, DWARF_C_READ, NULL);
        }
        if (files[r->n_files].dwarf && !dwarf_strings_terminated(files[r->n_files].elf)) {
                /* Malformed: read as a file without DWARF. */
                dwarf_end(files[r->n_files].dwarf);
                files[r->n_files].dwarf = NULL;
        }
        if (files[r->n_files].dwarf)
                note_dwarf_sections(&files[r->n_files]);
        *ret = &files[r->n_files++];
        return 0;
}

static int range_compare(const void *x, const void *y)
{
        const UnitRange *a = x, *b = y;

        return (a->start > b->start) - (a->start < b->start);
}

/* Every unit's ranges, sorted: libdw 0.188 makes no aranges of its own where the file has none (clang writes
 * none), and asking each unit for each address would cost units x functions. */
static int index_units(LineFile *f)
{
        Dwarf_CU *cu = NULL, *next;
        Dwarf_Die die;
        uint8_t type;
        size_t allocated = 0;

        f->indexed = true;
        while (dwarf_get_units(f->dwarf, cu, &next, NULL, &type, &die, NULL) == 0) {
                Dwarf_Addr base, start, end;
                ptrdiff_t off = 0;

                cu = next;
                while ((off = dwarf_ranges(&die, off, &base, &start, &end)) > 0) {
                        if (f->n_ranges == allocated) {
                                size_t a = MAX(allocated * 2, (size_t)16);
                                UnitRange *ranges = reallocarray(f->ranges, a, sizeof(*ranges));

                                if (!ranges)
                                        return -ENOMEM;
                                f->ranges = ranges;
                                allocated = a;
                        }
                        f->ranges[f->n_ranges++] = (UnitRange){.start = start, .end = end, .unit = die};
                }
        }
        if (f->n_ranges > 1)
                qsort(f->ranges, f->n_ranges, sizeof(*f->ranges), range_compare);
        return 0;
}

/* The compile unit whose code holds vaddr: through .debug_aranges when the file has them, else through the
 * index of the units' ranges. 1 with *ret set, 0 when none holds it. */
static int find_unit(LineFile *f, uint64_t vaddr, Dwarf_Die *ret)
{
        size_t lo = 0, hi;
        int r;

        if (dwarf_addrdie(f->dwarf, vaddr, ret))
                return 1;
        if (!f->indexed) {
                r = index_units(f);
                if (r < 0)
                        return r;
        }
        /* The last range starting at or below vaddr. */
        hi = f->n_ranges;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (f->ranges[mid].start <= vaddr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0 || vaddr >= f->ranges[lo - 1].end)
                return 0;
        *ret = f->ranges[lo - 1].unit;
        return 1;
}

/* The unit holding vaddr in the file open at fd (taken): 0, or -ENOENT when the file has no DWARF or no unit
 * covers vaddr, another -errno. */
static int unit_at(LineReader *r, int fd, uint64_t vaddr, Dwarf_Die *ret, LineFile **ret_file)
{
        LineFile *f = NULL;
        int n;

        n = line_reader_file(r, fd, &f);
        if (n < 0)
                return n;
        if (!f->dwarf)
                return -ENOENT;
        *ret_file = f;
        n = find_unit(f, vaddr, ret);
        return n < 0 ? n : n == 0 ? -ENOENT : 0;
}

int line_reader_lookup(LineReader *r, int fd, uint64_t vaddr, char *buf, size_t size)
{
        Dwarf_Die cu;
        Dwarf_Line *line;
        LineFile *f;
        const char *file;
        int lineno, n;

        n = unit_at(r, fd, vaddr, &cu, &f);
        if (n < 0)
                return n;
        line = dwarf_getsrc_die(&cu, vaddr);
        if (!line || dwarf_lineno(line, &lineno) != 0 || !(file = dwarf_linesrc(line, NULL, NULL)))
                return -ENOENT;
        if (!string_in_bounds(f, file))
                return -EBADMSG;
        /* A name relative to the unit's compile directory (clang's, sometimes) is made whole with it. */
        if (file[0] != '/') {
                Dwarf_Attribute attr;
                const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));

                if (dir && string_in_bounds(f, dir) && dir[0] == '/') {
                        n = snprintf(buf, size, "%s/%s:%d", dir, file, lineno);
                        return n < 0 || (size_t)n >= size ? -ENOBUFS : 0;
                }
        }
        n = snprintf(buf, size, "%s:%d", file, lineno);
        return n < 0 || (size_t)n >= size ? -ENOBUFS : 0;
}

int line_reader_inline(LineReader *r, int fd, uint64_t vaddr, InlineFrame *frames, size_t max)
{
        Dwarf_Die cu;
        LineFile *f;
        int n;

        n = unit_at(r, fd, vaddr, &cu, &f);
        if (n < 0)
                return n;
        n = inline_frames_walk(&cu, vaddr, frames, max);
        for (int i = 0; i < n; i++) {
                if (!string_in_bounds(f, frames[i].function))
                        return -EBADMSG;
                if (!string_in_bounds(f, frames[i].call_file))
                        frames[i].call_file = NULL;
        }
        return n == 0 ? -ENOENT : n;
}

#else

struct LineReader {
        int unused;
};

int line_reader_new(LineReader **ret)
{
        LineReader *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

LineReader *line_reader_free(LineReader *r)
{
        free(r);
        return NULL;
}

size_t line_reader_files(_unused_ const LineReader *r)
{
        return 0;
}

uint64_t line_reader_bytes(_unused_ const LineReader *r)
{
        return 0;
}

int line_reader_lookup(_unused_ LineReader *r, int fd, _unused_ uint64_t vaddr, _unused_ char *buf,
                       _unused_ size_t size)
{
        safe_close(fd);
        return -EOPNOTSUPP;
}

int line_reader_inline(_unused_ LineReader *r, int fd, _unused_ uint64_t vaddr, _unused_ InlineFrame *frames,
                       _unused_ size_t max)
{
        safe_close(fd);
        return -EOPNOTSUPP;
}

#endif
