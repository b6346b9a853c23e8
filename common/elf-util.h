/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gelf.h>
#include <libelf.h>

/* Opening an ELF file with libelf, shared by the readers of symbols and of CFI. */

void elf_endp(Elf **e);

/* A libelf handle on the regular file open at fd (the fd must stay open while the handle lives), and its
 * header: -ENOEXEC when it is not a regular ELF file, -EOPNOTSUPP when libelf cannot be initialized. */
int elf_open_fd(int fd, Elf **ret, GElf_Ehdr *ret_ehdr);
