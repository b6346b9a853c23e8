/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gelf.h>
#include <string.h>

#include "dwarf-strings.h"
#include "macros.h"

bool dwarf_strings_terminated(Elf *elf)
{
        static const char *const names[] = {
                ".debug_str", ".debug_line_str", ".zdebug_str", ".zdebug_line_str",
                ".debug_str.dwo", ".debug_line_str.dwo",
        };
        size_t shstrndx;
        Elf_Scn *scn = NULL;

        if (elf_getshdrstrndx(elf, &shstrndx) != 0)
                return false;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *name;
                Elf_Data *data;
                bool string_section = false;

                if (!gelf_getshdr(scn, &shdr) || !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        string_section = string_section || strcmp(name, names[i]) == 0;
                if (!string_section || shdr.sh_type == SHT_NOBITS)
                        continue;
                data = elf_getdata(scn, NULL);
                if (data && data->d_size > 0 && (!data->d_buf || ((const char *)data->d_buf)[data->d_size - 1] != 0))
                        return false;
        }
        return true;
}
