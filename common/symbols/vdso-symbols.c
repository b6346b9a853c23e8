/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array-util.h"
#include "vdso-symbols.h"

/* A vDSO is a page or two; anything much larger is not one. */
#define VDSO_MAX_SIZE (UINT64_C(1) << 20)

typedef struct VdsoSymbol {
        uint64_t start; /* from the start of the image's first segment, i.e. of the mapping */
        uint64_t size;  /* 0: unknown, up to the next symbol */
        char *name;
} VdsoSymbol;

struct VdsoSymbols {
        VdsoSymbol *syms;
        size_t n;
        unsigned n_ref; /* a forked child shares its parent's: the same image at the same address */
};

static void elf_endp_local(Elf **e)
{
        if (*e)
                elf_end(*e);
}

static size_t leading_underscores(const char *s)
{
        size_t n = 0;

        while (s[n] == '_')
                n++;
        return n;
}

/* By start; of aliases at one start the plainer name first ("clock_gettime" before "__vdso_clock_gettime"),
 * then by name, so the choice does not depend on the symbol table's order. */
static int symbol_compare(const void *a, const void *b)
{
        const VdsoSymbol *x = a, *y = b;
        size_t ux, uy;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        ux = leading_underscores(x->name);
        uy = leading_underscores(y->name);
        if (ux != uy)
                return ux < uy ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* The vaddr the mapping starts at: that of the segment holding file offset 0. */
static int image_base(Elf *elf, uint64_t *ret)
{
        size_t n;

        if (elf_getphdrnum(elf, &n) < 0)
                return -ENOEXEC;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;

                if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
                        *ret = ph.p_vaddr;
                        return 0;
                }
        }
        return -ENOEXEC;
}

int vdso_symbols_parse(const void *image, size_t size, VdsoSymbols **ret)
{
        _cleanup_(vdso_symbols_freep) VdsoSymbols *v = NULL;
        _cleanup_(elf_endp_local) Elf *elf = NULL;
        Elf_Scn *scn = NULL;
        uint64_t base;
        size_t kept = 0;
        int r;

        assert(image || size == 0);
        assert(ret);

        if (size == 0)
                return -EINVAL;
        if (elf_version(EV_CURRENT) == EV_NONE)
                return -EOPNOTSUPP;
        /* libelf does not write to a read-only image; the cast is its API's. */
        elf = elf_memory((char *)image, size);
        if (!elf || elf_kind(elf) != ELF_K_ELF)
                return -ENOEXEC;
        r = image_base(elf, &base);
        if (r < 0)
                return r;

        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        v->n_ref = 1;

        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh, strings;
                Elf_Data *data;
                size_t count;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
                        continue;
                /* The process can rewrite its vDSO: a string table marked compressed would have libelf
                 * inflate it to what its header claims, up to a thousand times the image. */
                if (!gelf_getshdr(elf_getscn(elf, sh.sh_link), &strings) ||
                    (strings.sh_flags & SHF_COMPRESSED))
                        return -ENOEXEC;
                data = elf_getdata(scn, NULL);
                if (!data)
                        return -ENOEXEC;
                count = sh.sh_size / sh.sh_entsize;
                v->syms = calloc(MAX(count, (size_t)1), sizeof(VdsoSymbol));
                if (!v->syms)
                        return -ENOMEM;
                for (size_t i = 0; i < count; i++) {
                        GElf_Sym sym;
                        const char *name;

                        if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
                            sym.st_shndx == SHN_UNDEF || sym.st_value < base)
                                continue;
                        name = elf_strptr(elf, sh.sh_link, sym.st_name);
                        if (!name || !name[0])
                                continue;
                        v->syms[v->n].name = strdup(name);
                        if (!v->syms[v->n].name)
                                return -ENOMEM;
                        v->syms[v->n].start = sym.st_value - base;
                        v->syms[v->n].size = sym.st_size;
                        v->n++;
                }
                break;
        }
        if (v->n == 0)
                return -ENOEXEC;

        qsort(v->syms, v->n, sizeof(VdsoSymbol), symbol_compare);
        for (size_t i = 0; i < v->n; i++) {
                if (kept > 0 && v->syms[kept - 1].start == v->syms[i].start) {
                        free(v->syms[i].name);
                        continue;
                }
                v->syms[kept++] = v->syms[i];
        }
        v->n = kept;
        *ret = TAKE_PTR(v);
        return 0;
}

int vdso_symbols_read(pid_t pid, uint64_t start, uint64_t end, VdsoSymbols **ret)
{
        _cleanup_free_ void *image = NULL;
        _cleanup_close_ int fd = -1;
        char path[64];
        size_t size;
        ssize_t n;

        assert(ret);

        if (pid <= 0 || end <= start || end - start > VDSO_MAX_SIZE)
                return -EINVAL;
        size = (size_t)(end - start);
        image = malloc(size);
        if (!image)
                return -ENOMEM;
        snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        n = pread(fd, image, size, (off_t)start);
        if (n < 0)
                return -errno;
        if ((size_t)n != size)
                return -EIO;
        return vdso_symbols_parse(image, size, ret);
}

const char *vdso_symbols_lookup(const VdsoSymbols *v, uint64_t offset, uint64_t *ret_offset)
{
        size_t lo;
        const VdsoSymbol *s;

        if (!v)
                return NULL;
        lo = ARRAY_UPPER_BOUND(v->syms, v->n, start, offset);
        if (lo == 0)
                return NULL;
        s = &v->syms[lo - 1];
        /* A symbol's size bounds it; past it lies code no exported symbol names (a helper not inlined). */
        if (s->size > 0 && offset - s->start >= s->size)
                return NULL;
        if (ret_offset)
                *ret_offset = offset - s->start;
        return s->name;
}

size_t vdso_symbols_count(const VdsoSymbols *v)
{
        return v ? v->n : 0;
}

VdsoSymbols *vdso_symbols_ref(VdsoSymbols *v)
{
        if (v)
                v->n_ref++;
        return v;
}

VdsoSymbols *vdso_symbols_free(VdsoSymbols *v)
{
        if (!v || --v->n_ref > 0)
                return NULL;
        for (size_t i = 0; i < v->n; i++)
                free(v->syms[i].name);
        free(v->syms);
        free(v);
        return NULL;
}
