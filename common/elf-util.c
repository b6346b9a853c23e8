/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "elf-util.h"
#include "log.h"
#include "macros.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static bool elf_ok;

static void elf_init(void)
{
        elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

void elf_endp(Elf **e)
{
        if (*e)
                elf_end(*e);
}

int elf_open_fd(int fd, Elf **ret, GElf_Ehdr *ret_ehdr)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct stat st;

        if (fd < 0 || !ret || !ret_ehdr)
                return -EINVAL;
        pthread_once(&elf_once, elf_init);
        if (!elf_ok)
                return -EOPNOTSUPP;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        /* A device or a FIFO is not a binary, and libelf would block on a FIFO. */
        if (!S_ISREG(st.st_mode))
                return -ENOEXEC;

        elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, ret_ehdr)) {
                log_debug("Not an ELF file: %s", elf_errmsg(-1));
                return -ENOEXEC;
        }
        *ret = TAKE_PTR(elf);
        return 0;
}
