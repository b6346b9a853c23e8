/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "macros.h"
#include "python-elf.h"

/* Symbol tables and their names as elf-symbols.c bounds them; relocation tables of a large libpython are a
 * few MiB. */
#define SYMTAB_MAX (UINT64_C(256) << 20)
#define STRTAB_MAX (UINT64_C(512) << 20)
#define RELA_MAX (UINT64_C(256) << 20)

static int find_in_table(ElfFile *f, Elf_Scn *scn, PythonSymbol *wanted, size_t n_wanted)
{
        GElf_Shdr shdr;
        Elf_Data *data;
        size_t count;
        int r;

        if (!gelf_getshdr(scn, &shdr) || shdr.sh_entsize == 0 || shdr.sh_type == SHT_NOBITS)
                return 0;
        r = elf_file_section(f, scn, SYMTAB_MAX, false, &data);
        if (r >= 0)
                r = elf_file_strings(f, shdr.sh_link, STRTAB_MAX);
        if (IN_SET(r, -EFBIG, -EIO, -ENOMEM))
                return r;
        if (r < 0)
                return 0; /* unreadable: as if absent */
        count = shdr.sh_size / shdr.sh_entsize;
        for (size_t i = 0; i < count; i++) {
                GElf_Sym sym;
                const char *name;

                if (!gelf_getsym(data, (int)i, &sym))
                        break;
                if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
                        continue;
                name = elf_strptr(f->elf, shdr.sh_link, sym.st_name);
                if (!name)
                        continue;
                for (size_t k = 0; k < n_wanted; k++)
                        if (!wanted[k].found && strcmp(name, wanted[k].name) == 0) {
                                wanted[k].value = sym.st_value;
                                wanted[k].size = sym.st_size;
                                wanted[k].found = true;
                        }
        }
        return 0;
}

int python_elf_find_symbols(ElfFile *f, PythonSymbol *wanted, size_t n_wanted)
{
        Elf_Scn *scn = NULL;
        GElf_Shdr shdr;
        int r;

        assert(f);

        for (size_t k = 0; k < n_wanted; k++)
                wanted[k].found = false;
        while ((scn = elf_nextscn(f->elf, scn))) {
                if (!gelf_getshdr(scn, &shdr) || !IN_SET(shdr.sh_type, SHT_DYNSYM, SHT_SYMTAB))
                        continue;
                r = find_in_table(f, scn, wanted, n_wanted);
                if (r < 0)
                        return r;
        }
        return 0;
}

static Elf_Scn *section_by_name(ElfFile *f, const char *name)
{
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        GElf_Shdr shdr;

        if (elf_file_section_names(f, &shstrndx) <= 0)
                return NULL;
        while ((scn = elf_nextscn(f->elf, scn))) {
                const char *n;

                if (!gelf_getshdr(scn, &shdr))
                        continue;
                n = elf_strptr(f->elf, shstrndx, shdr.sh_name);
                if (n && strcmp(n, name) == 0)
                        return scn;
        }
        return NULL;
}

bool python_elf_has_section(ElfFile *f, const char *name)
{
        Elf_Scn *scn = section_by_name(f, name);
        GElf_Shdr shdr;

        return scn && gelf_getshdr(scn, &shdr) && shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
}

int python_elf_section(ElfFile *f, const char *name, uint64_t max, Elf_Data **ret_data)
{
        Elf_Scn *scn = section_by_name(f, name);

        if (!scn)
                return -ENOENT;
        return elf_file_section(f, scn, max, false, ret_data);
}

int python_elf_read(ElfFile *f, uint64_t vaddr, void *buf, size_t size)
{
        size_t n;

        assert(f);

        if (elf_getphdrnum(f->elf, &n) < 0)
                return -ENOENT;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;
                Elf_Data *data;
                int r;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
                        continue;
                /* Written so that no sum can wrap: vaddr and size are the file's word, or the caller's. */
                if (vaddr < phdr.p_vaddr || vaddr - phdr.p_vaddr > phdr.p_filesz ||
                    size > phdr.p_filesz - (vaddr - phdr.p_vaddr))
                        continue;
                if (phdr.p_offset > UINT64_MAX - (vaddr - phdr.p_vaddr))
                        return -ENOENT;
                r = elf_file_chunk(f, phdr.p_offset + (vaddr - phdr.p_vaddr), size, ELF_T_BYTE, size, &data);
                if (r == -EIO)
                        return r;
                if (r < 0 || data->d_size < size)
                        return -ENOENT;
                memcpy(buf, data->d_buf, size);
                return 0;
        }
        return -ENOENT;
}

static uint32_t relative_type(const ElfFile *f)
{
        switch (f->ehdr.e_machine) {
        case EM_X86_64:
                return R_X86_64_RELATIVE;
        case EM_AARCH64:
                return R_AARCH64_RELATIVE;
        default:
                return 0;
        }
}

/* The relocation at vaddr in f's RELA sections: 1 and its type and addend, 0 when none is. */
static int find_rela(ElfFile *f, uint64_t vaddr, uint32_t *ret_type, int64_t *ret_addend)
{
        Elf_Scn *scn = NULL;
        GElf_Shdr shdr;
        int r;

        while ((scn = elf_nextscn(f->elf, scn))) {
                Elf_Data *data;
                size_t count;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || shdr.sh_entsize == 0)
                        continue;
                r = elf_file_section(f, scn, RELA_MAX, false, &data);
                if (IN_SET(r, -EIO, -ENOMEM))
                        return r;
                if (r < 0)
                        continue;
                count = shdr.sh_size / shdr.sh_entsize;
                for (size_t i = 0; i < count; i++) {
                        GElf_Rela rela;

                        if (!gelf_getrela(data, (int)i, &rela))
                                break;
                        if (rela.r_offset != vaddr)
                                continue;
                        *ret_type = (uint32_t)GELF_R_TYPE(rela.r_info);
                        *ret_addend = rela.r_addend;
                        return 1;
                }
        }
        return 0;
}

int python_elf_read_pointer(ElfFile *f, uint64_t vaddr, uint64_t *ret)
{
        uint64_t stored;
        uint32_t type = 0;
        int64_t addend = 0;
        int r;

        assert(f);
        assert(ret);

        if (f->ehdr.e_ident[EI_CLASS] != ELFCLASS64 || f->ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
                return -EOPNOTSUPP;
        r = python_elf_read(f, vaddr, &stored, sizeof(stored));
        if (r < 0)
                return r;
        if (f->ehdr.e_type == ET_EXEC) {
                *ret = stored;
                return 0;
        }
        if (f->ehdr.e_type != ET_DYN || relative_type(f) == 0)
                return -EOPNOTSUPP;
        r = find_rela(f, vaddr, &type, &addend);
        if (r < 0)
                return r;
        if (r == 0 && stored == 0) {
                *ret = 0; /* a null pointer needs no relocation: the end of a table */
                return 0;
        }
        if (r == 0 || type != relative_type(f))
                return -EOPNOTSUPP;
        *ret = (uint64_t)addend;
        return 0;
}
