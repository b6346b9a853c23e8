/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>

#include "debug-file.h"
#include "elf-symbols.h"
#include "elf-util.h"
#include "log.h"
#include "open-util.h"
#include "python-detect.h"
#include "python-elf.h"
#include "python-version.h"

/* .rodata of libpython is about 1 MiB; the PY_VERSION string is looked for in at most this much. */
#define RODATA_MAX (UINT64_C(64) << 20)

enum {
        SYM_RUNTIME,
        SYM_EVAL,
        SYM_EVAL_COLD,
        SYM_CODE_TYPE,
        SYM_VERSION,
        _SYM_MAX,
};

static void wanted_init(PythonSymbol w[static _SYM_MAX])
{
        w[SYM_RUNTIME] = (PythonSymbol){.name = "_PyRuntime"};
        w[SYM_EVAL] = (PythonSymbol){.name = "_PyEval_EvalFrameDefault"};
        /* GCC's hot/cold split: a local symbol, in .symtab only (a debug file's for a stripped binary). */
        w[SYM_EVAL_COLD] = (PythonSymbol){.name = "_PyEval_EvalFrameDefault.cold"};
        w[SYM_CODE_TYPE] = (PythonSymbol){.name = "PyCode_Type"};
        w[SYM_VERSION] = (PythonSymbol){.name = "Py_Version"};
}

PythonInterpreter *python_interpreter_free(PythonInterpreter *p)
{
        if (!p)
                return NULL;
        free(p->build_id);
        free(p->dwarf_path);
        free(p);
        return NULL;
}

/* Whether [start, start + size) lies in one executable PT_LOAD segment of f. */
static bool in_code(ElfFile *f, uint64_t start, uint64_t size)
{
        size_t n;

        if (size == 0 || elf_getphdrnum(f->elf, &n) < 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD || !(phdr.p_flags & PF_X))
                        continue;
                if (start >= phdr.p_vaddr && start - phdr.p_vaddr < phdr.p_memsz &&
                    size <= phdr.p_memsz - (start - phdr.p_vaddr))
                        return true;
        }
        return false;
}

/* Whether the file holds all that its headers say it has: the section headers and every segment's bytes. A
 * copy cut short would otherwise read as a file without symbols. */
static bool file_complete(ElfFile *f)
{
        uint64_t shdrs = (uint64_t)f->ehdr.e_shnum * f->ehdr.e_shentsize;
        size_t n;

        if (f->ehdr.e_shoff > f->size || shdrs > f->size - f->ehdr.e_shoff)
                return false;
        if (elf_getphdrnum(f->elf, &n) < 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
                        continue;
                if (phdr.p_offset > f->size || phdr.p_filesz > f->size - phdr.p_offset)
                        return false;
        }
        return true;
}

/* Py_Version (3.11+): a const unsigned long, 8 bytes on LP64 (4 elsewhere); its low 32 bits are the value.
 */
static int version_from_symbol(ElfFile *f, const PythonSymbol *s, uint32_t *ret)
{
        uint8_t buf[8] = {};
        uint32_t v;
        int r;

        if (!s->found || (s->size != 4 && s->size != 8) || f->ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
                return -ENOENT;
        r = python_elf_read(f, s->value, buf, s->size);
        if (r < 0)
                return r;
        v = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
        if (!python_version_valid(v))
                return -EBADMSG;
        *ret = v;
        return 0;
}

static int version_from_rodata(ElfFile *f, uint32_t *ret)
{
        Elf_Data *data;
        int r;

        r = python_elf_section(f, ".rodata", RODATA_MAX, &data);
        if (r < 0)
                return r;
        return python_version_scan(data->d_buf, data->d_size, ret);
}

typedef struct DebugSearch {
        const char *build_id;
        PythonSymbol cold;
        char *path; /* the debug file taken */
        bool has_dwarf;
        int error; /* -EIO, -ENOMEM met on the way */
} DebugSearch;

/* A candidate debug file: taken when its build-id is ours (a file at the build-id path may be anything). */
static int accept_debug_file(int fd, DebugFileKind kind, const char *path, void *userdata)
{
        DebugSearch *s = userdata;
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        const char *id;
        int r;

        (void)kind;
        if (elf_symbols_load_fd(fd, &e) < 0)
                return 0;
        id = elf_symbols_build_id(e);
        if (!id || strcmp(id, s->build_id) != 0) {
                log_debug("Debug file %s has another build-id, ignored", path);
                return 0;
        }
        if (elf_file_open(fd, &f) < 0)
                return 0;
        r = python_elf_find_symbols(f, &s->cold, 1);
        if (r == -ENOMEM)
                return r;
        s->has_dwarf = python_elf_has_section(f, ".debug_info");
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;
        return 1;
}

/* The separate debug file of a stripped interpreter: the .cold symbol, and where its DWARF is. */
static int search_debug_file(int fd, const PythonDetectOptions *o, const ElfSymbols *e, PythonInterpreter *p,
                             PythonSymbol *cold)
{
        DebugSearch s = {
                .build_id = p->build_id,
                .cold = {.name = cold->name},
        };
        struct stat st;
        uint32_t crc = 0;
        const char *link = elf_symbols_debuglink(e, &crc);
        DebugFileQuery q = {
                .root = o ? o->root : NULL,
                .debug_dir = o && o->debug_dir ? o->debug_dir : DEBUG_DIRECTORY_DEFAULT,
                .binary_path = o ? o->path : NULL,
                .build_id = p->build_id,
                .debuglink = link,
                .debuglink_crc = crc,
        };
        int r;

        if (!p->build_id)
                return 0;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        q.binary_dev = st.st_dev;
        q.binary_ino = st.st_ino;
        r = debug_file_find(&q, accept_debug_file, &s);
        if (r <= 0)
                return r;
        if (s.cold.found)
                *cold = s.cold;
        if (s.has_dwarf)
                p->dwarf_path = TAKE_PTR(s.path);
        free(s.path);
        return 0;
}

int python_detect_fd(int fd, const PythonDetectOptions *o, PythonInterpreter **ret)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        PythonSymbol w[_SYM_MAX];
        int r;

        assert(ret);

        r = elf_file_open(fd, &f);
        if (r < 0)
                return r;
        if (!file_complete(f))
                return -EIO;
        wanted_init(w);
        r = python_elf_find_symbols(f, w, _SYM_MAX);
        if (r < 0)
                return r;
        if (!w[SYM_RUNTIME].found || !w[SYM_EVAL].found)
                return -EMEDIUMTYPE;
        if (!in_code(f, w[SYM_EVAL].value, w[SYM_EVAL].size))
                return -EBADMSG;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        r = version_from_symbol(f, &w[SYM_VERSION], &p->version_hex);
        if (IN_SET(r, -EIO, -ENOMEM))
                return r;
        p->version_from_symbol = r >= 0;
        if (r < 0) {
                r = version_from_rodata(f, &p->version_hex);
                if (IN_SET(r, -EIO, -ENOMEM, -EFBIG))
                        return r;
                if (r < 0)
                        return -EPROTONOSUPPORT;
        }

        p->runtime = w[SYM_RUNTIME].value;
        p->runtime_size = w[SYM_RUNTIME].size;
        p->eval_start = w[SYM_EVAL].value;
        p->eval_end = w[SYM_EVAL].value + w[SYM_EVAL].size;
        p->code_type = w[SYM_CODE_TYPE].found ? w[SYM_CODE_TYPE].value : 0;
        p->pie_or_dso = f->ehdr.e_type == ET_DYN;
        p->own_dwarf = python_elf_has_section(f, ".debug_info");

        /* The build-id and .gnu_debuglink as the symbolizer reads them. */
        r = elf_symbols_load_fd(fd, &e);
        if (r < 0)
                return r;
        if (elf_symbols_build_id(e)) {
                p->build_id = strdup(elf_symbols_build_id(e));
                if (!p->build_id)
                        return -ENOMEM;
        }
        if (!w[SYM_EVAL_COLD].found || !p->own_dwarf) {
                r = search_debug_file(fd, o, e, p, &w[SYM_EVAL_COLD]);
                if (r < 0)
                        return r;
        }
        if (w[SYM_EVAL_COLD].found && in_code(f, w[SYM_EVAL_COLD].value, w[SYM_EVAL_COLD].size)) {
                p->eval_cold_start = w[SYM_EVAL_COLD].value;
                p->eval_cold_end = w[SYM_EVAL_COLD].value + w[SYM_EVAL_COLD].size;
        }

        r = elf_file_check(f);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int python_detect_path(const char *path, const PythonDetectOptions *o, PythonInterpreter **ret)
{
        _cleanup_close_ int fd = -1;
        PythonDetectOptions with_path = {};

        assert(path);

        fd = open_regular(path, 0);
        if (fd < 0)
                return fd;
        if (o)
                with_path = *o;
        if (!with_path.path && path[0] == '/')
                with_path.path = path;
        return python_detect_fd(fd, &with_path, ret);
}
