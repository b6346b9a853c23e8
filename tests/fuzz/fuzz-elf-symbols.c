/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ELF symbol reader (elf-symbols.c, through elf-util.c) as the symbolizer drives it: the input is a file
 * (a memfd), loaded; looked up at addresses of its segments and at addresses the input holds; then used as
 * its own separate debug file and MiniDebugInfo. The same bytes go to the vDSO reader, which parses an image
 * in memory. Seeds: the test fixtures (run-fuzz.py copies them) and this process's own vDSO. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf-symbols.h"
#include "fuzz-input.h"
#include "macros.h"
#include "vdso-symbols.h"

static void use_symbols(const ElfSymbols *e, const uint8_t *data, size_t size)
{
        uint64_t vaddr, offset;
        uint32_t crc;

        (void)elf_symbols_count(e);
        (void)elf_symbols_memory(e);
        (void)elf_symbols_build_id(e);
        (void)elf_symbols_debuglink(e, &crc);
        /* File offsets across the input, turned into addresses as the symbolizer does. */
        for (uint64_t o = 0; o < size + 4096; o += 1 + size / 64)
                if (elf_symbols_offset_to_vaddr(e, o, &vaddr) >= 0) {
                        (void)elf_symbols_lookup(e, vaddr, &offset);
                        (void)elf_symbols_lookup(e, vaddr - 1, NULL);
                }
        for (size_t i = 0; i < 16; i++) {
                const char *name = elf_symbols_lookup(e, fuzz_word(data, size, i), &offset);

                /* A name is a string: reading it whole must stay inside what the reader owns. */
                if (name && strlen(name) == SIZE_MAX)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_(vdso_symbols_freep) VdsoSymbols *v = NULL;
        _cleanup_close_ int fd = -1;

        fd = fuzz_memfd(data, size);
        if (fd < 0)
                return 0;
        if (elf_symbols_load_fd(fd, &e) >= 0) {
                use_symbols(e, data, size);
                /* The same file as its own debug file, then as the carrier of MiniDebugInfo: each keeps e
                 * usable whether it succeeds or not. */
                (void)elf_symbols_use_debug_fd(e, fd);
                use_symbols(e, data, size);
                (void)elf_symbols_use_minidebuginfo(e, fd);
                use_symbols(e, data, size);
        }

        if (size > 0 && size <= (1u << 20) && vdso_symbols_parse(data, size, &v) >= 0)
                for (size_t i = 0; i < 16; i++)
                        (void)vdso_symbols_lookup(v, fuzz_word(data, size, i) % (size + 64), NULL);
        return 0;
}

static int write_seeds(const char *dir)
{
        size_t size;
        const uint8_t *vdso = fuzz_vdso(&size);

        return vdso ? fuzz_write_file(dir, "vdso.so", vdso, size) : 0;
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
