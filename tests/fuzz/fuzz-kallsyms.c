/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kallsyms parser (kallsyms.c): the input as the contents of /proc/kallsyms (through a memfd, as the
 * parser opens a path), then lookups at addresses the input holds and their neighbours. Seeds: the head of
 * this machine's /proc/kallsyms, lines of modules, and a restricted file of zero addresses. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-input.h"
#include "kallsyms.h"
#include "macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        _cleanup_close_ int fd = fuzz_memfd(data, size);
        const char *module;
        uint64_t offset;
        char path[64];

        if (fd < 0)
                return 0;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        if (kallsyms_load(path, &k) < 0)
                return 0;
        for (size_t i = 0; i < 16; i++) {
                uint64_t a = fuzz_word(data, size, i);

                (void)kallsyms_lookup(k, a, &module, &offset);
                (void)kallsyms_lookup(k, a + 0x10, &module, NULL);
        }
        (void)kallsyms_restricted(k);
        (void)kallsyms_count(k);
        return 0;
}

static int write_seeds(const char *dir)
{
        static const char modules[] =
                "ffffffff81000000 T _stext\n"
                "ffffffff81000010 t __pi_alias\n"
                "ffffffff81000010 T schedule\n"
                "ffffffff81000020 W weak_one\n"
                "ffffffff81000030 D some_data\n"
                "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n"
                "ffffffffc0a02000 T ext4_iget\t[ext4]\n"
                "ffffffffc0b00000 t nft_do_chain\t[nf_tables]\n";
        static const char restricted[] =
                "0000000000000000 T _stext\n"
                "0000000000000000 t schedule\n"
                "0000000000000000 t ext4_iget\t[ext4]\n";

        if (fuzz_write_file(dir, "modules.kallsyms", modules, strlen(modules)) < 0 ||
            fuzz_write_file(dir, "restricted.kallsyms", restricted, strlen(restricted)) < 0)
                return -1;
        /* The head of the real one (zero addresses without CAP_SYSLOG: a restricted seed then). */
        return fuzz_copy_file("/proc/kallsyms", 64 << 10, dir, "proc.kallsyms");
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
