/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The inline reader (line_reader_inline()) from the command line, for check-inline-addr2line.py, which compares
 * it with `eu-addr2line -i -f`: dump-inline-frames FILE < ADDRESSES prints, for each hexadecimal ELF address
 * read (one a line), the chain of functions at it, innermost first, separated by spaces; "??" when the reader
 * finds none. FILE is the file holding the DWARF (a separate debug file, for a stripped binary). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "line-source.h"

int main(int argc, char **argv)
{
        _cleanup_(line_reader_freep) LineReader *r = NULL;
        InlineFrame frames[INLINE_FRAMES_MAX + 1];
        char line[64];

        if (argc != 2) {
                fprintf(stderr, "usage: %s FILE < ADDRESSES\n", argv[0]);
                return 2;
        }
        if (line_reader_new(&r) < 0)
                return 1;
        while (fgets(line, sizeof(line), stdin)) {
                uint64_t vaddr = strtoull(line, NULL, 16);
                int fd = open(argv[1], O_RDONLY | O_CLOEXEC), n;

                if (fd < 0) {
                        perror(argv[1]);
                        return 1;
                }
                n = line_reader_inline(r, fd, vaddr, frames, ELEMENTSOF(frames));
                if (n <= 0)
                        fputs("??", stdout);
                for (int i = 0; i < n; i++)
                        printf("%s%s", i ? " " : "", frames[i].function ?: "??");
                putchar('\n');
        }
        return 0;
}
