/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc/PID/maps parser (proc-maps.c): the input as the text of a maps file (cut at its first NUL, as
 * the reader's string would be), then lookups at the edges of every mapping and at addresses the input
 * holds. The kernel writes the file, but the paths in it are whatever names the process gave its files.
 * Seeds: this process's own maps, and lines of every kind (deleted files, spaces and newlines in names,
 * special mappings). */
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "macros.h"
#include "proc-maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        _cleanup_free_ char *text = malloc(size + 1);

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (proc_maps_parse(text, &m) < 0)
                return 0;

        for (size_t i = 0; i < m->n; i++) {
                const ProcMap *p = &m->maps[i];

                if (p->path && strlen(p->path) > size)
                        abort(); /* a path is a piece of the text */
                (void)proc_maps_find(m, p->start);
                (void)proc_maps_find(m, p->end - 1);
                (void)proc_maps_find(m, p->end);
        }
        for (size_t i = 0; i < 8; i++)
                (void)proc_maps_find(m, fuzz_word(data, size, i));
        return 0;
}

static int write_seeds(const char *dir)
{
        static const char lines[] =
                "55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567                    /usr/bin/true\n"
                "55d0c0a02000-55d0c0a06000 r-xp 00002000 fd:01 1234567                    /usr/bin/true\n"
                "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
                "7f0000001000-7f0000002000 rwxp 00000000 00:00 0                          [anon:jit code]\n"
                "7f0000002000-7f0000003000 r-xp 00000000 08:02 42       /tmp/a name with  spaces (deleted)\n"
                "7f0000003000-7f0000004000 r--p 00001000 08:02 43               /tmp/newline\\012name\n"
                "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
                "7ffd001f0000-7ffd001f2000 r-xp 00000000 00:00 0                          [vdso]\n"
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

        if (fuzz_write_file(dir, "kinds.maps", lines, strlen(lines)) < 0)
                return -1;
        return fuzz_copy_file("/proc/self/maps", 0, dir, "self.maps");
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
