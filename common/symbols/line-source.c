/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "line-source.h"

#if HAVE_LIBDW
#include <elfutils/libdw.h>

/* The files a reader opened: few per query (a process's executable and libraries). */
typedef struct LineFile {
        dev_t dev;
        ino_t ino;
        int fd;
        Dwarf *dwarf; /* NULL: the file has no DWARF */
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

LineReader *line_reader_free(LineReader *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_files; i++) {
                if (r->files[i].dwarf)
                        dwarf_end(r->files[i].dwarf);
                safe_close(r->files[i].fd);
        }
        free(r->files);
        free(r);
        return NULL;
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
        /* dwarf_begin() reads through the descriptor, which must stay open while the Dwarf lives. */
        files[r->n_files] = (LineFile){
                .dev = st.st_dev,
                .ino = st.st_ino,
                .fd = TAKE_FD(owned),
        };
        files[r->n_files].dwarf = dwarf_begin(files[r->n_files].fd, DWARF_C_READ);
        *ret = &files[r->n_files++];
        return 0;
}

/* The compile unit whose code holds vaddr: through .debug_aranges when the file has them, else by asking each
 * unit (clang writes no aranges, and libdw 0.188 builds none without them). */
static bool find_unit(Dwarf *dwarf, uint64_t vaddr, Dwarf_Die *ret)
{
        Dwarf_CU *cu = NULL, *next;
        uint8_t type;

        if (dwarf_addrdie(dwarf, vaddr, ret))
                return true;
        while (dwarf_get_units(dwarf, cu, &next, NULL, &type, ret, NULL) == 0) {
                cu = next;
                if (dwarf_haspc(ret, vaddr) > 0)
                        return true;
        }
        return false;
}

int line_reader_lookup(LineReader *r, int fd, uint64_t vaddr, char *buf, size_t size)
{
        Dwarf_Die cu;
        Dwarf_Line *line;
        const char *file;
        LineFile *f = NULL;
        int lineno, n;

        n = line_reader_file(r, fd, &f);
        if (n < 0)
                return n;
        if (!f->dwarf || !find_unit(f->dwarf, vaddr, &cu))
                return -ENOENT;
        line = dwarf_getsrc_die(&cu, vaddr);
        if (!line || dwarf_lineno(line, &lineno) != 0 || !(file = dwarf_linesrc(line, NULL, NULL)))
                return -ENOENT;
        n = snprintf(buf, size, "%s:%d", file, lineno);
        return n < 0 || (size_t)n >= size ? -ENOBUFS : 0;
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

int line_reader_lookup(_unused_ LineReader *r, int fd, _unused_ uint64_t vaddr, _unused_ char *buf,
                       _unused_ size_t size)
{
        safe_close(fd);
        return -EOPNOTSUPP;
}

#endif
