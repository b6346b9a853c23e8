/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The inline reader (line_reader_inline(), common/symbols/inline-frames.c) as the symbolizer drives it, and the
 * line reader (line_reader_lookup()) at the same addresses: the
 * input is an ELF file with DWARF (a memfd), asked for the inlined functions at addresses inside its units'
 * ranges (which libdw lists from the same input) and at addresses the input holds; every name and call site
 * that comes out is read whole. Seeds: the GCC-built inlining workload and the DWARF fixtures (meson.build). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-input.h"
#include "line-source.h"
#include "macros.h"

#if HAVE_LIBDW
#include <elfutils/libdw.h>
#endif

/* Units and ranges looked at per input: enough to reach the code of the seeds, few enough to stay fast. */
#define UNITS_MAX 64
#define RANGES_MAX 16
#define POINTS_PER_RANGE 8

static void expand(LineReader *r, int fd, uint64_t vaddr)
{
        InlineFrame frames[INLINE_FRAMES_MAX + 1];
        char line[256];
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3), n;

        if (dup_fd < 0)
                return;
        /* The line reader (GetFunctionSources) on the same file and address: FILE:LINE, whole, or an error. */
        if (line_reader_lookup(r, dup_fd, vaddr, line, sizeof(line)) == 0 && strnlen(line, sizeof(line)) == sizeof(line))
                abort();
        dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
                return;
        n = line_reader_inline(r, dup_fd, vaddr, frames, ELEMENTSOF(frames));
        if (n > (int)ELEMENTSOF(frames))
                abort();
        for (int i = 0; i < n; i++) {
                /* Names and files point into the reader's DWARF: reading them whole must stay inside it. */
                if (frames[i].function && strlen(frames[i].function) == SIZE_MAX)
                        abort();
                if (frames[i].call_file && strlen(frames[i].call_file) == SIZE_MAX)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(line_reader_freep) LineReader *r = NULL;
        _cleanup_close_ int fd = -1;

        fd = fuzz_memfd(data, size);
        if (fd < 0 || line_reader_new(&r) < 0)
                return 0;
        for (size_t i = 0; i < 8; i++)
                expand(r, fd, fuzz_word(data, size, i));
#if HAVE_LIBDW
        {
                Dwarf *dwarf = dwarf_begin(fd, DWARF_C_READ);
                Dwarf_CU *cu = NULL, *next;
                Dwarf_Die die;
                uint8_t type;
                unsigned units = 0;

                while (dwarf && units++ < UNITS_MAX &&
                       dwarf_get_units(dwarf, cu, &next, NULL, &type, &die, NULL) == 0) {
                        Dwarf_Addr base, start, end;
                        ptrdiff_t off = 0;
                        unsigned ranges = 0;

                        cu = next;
                        while (ranges++ < RANGES_MAX && (off = dwarf_ranges(&die, off, &base, &start, &end)) > 0)
                                for (unsigned k = 0; k < POINTS_PER_RANGE && start < end; k++)
                                        expand(r, fd, start + (end - start) / POINTS_PER_RANGE * k);
                }
                if (dwarf)
                        dwarf_end(dwarf);
        }
#endif
        return 0;
}

/* The seeds are files (meson.build): none to make here. */
static int write_seeds(_unused_ const char *dir)
{
        return 0;
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
