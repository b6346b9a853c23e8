/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The functions GCC inlined at an address: the chain of DW_TAG_inlined_subroutine scopes of a compile unit that
 * hold it, innermost first, ended by the DW_TAG_subprogram they were inlined into, as `eu-addr2line -i -f` and
 * `perf report --inline` show them, less the functions declared artificial (GCC's __attribute__((artificial)):
 * intrinsics such as immintrin.h's), whose code counts as their caller's, as debuggers step it. The walk goes down the unit's DIE tree itself: dwarf_getscopes() misses the
 * inlined scopes of LTO builds (Debian's python3.11). DWARF is untrusted: the depth of the walk, the DIEs it
 * visits and the chain's length are bounded. */

/* More inlined levels than this are cut at the innermost ones kept (GCC rarely nests past 10). */
#define INLINE_FRAMES_MAX 32

typedef struct InlineFrame {
        /* The function's name (DW_AT_linkage_name, else DW_AT_name, through DW_AT_abstract_origin), owned by the
         * Dwarf the unit came from; NULL when the DWARF names none. */
        const char *function;
        /* Where the caller (the next frame) called it: DW_AT_call_file/call_line of an inlined scope; NULL and 0
         * for the last frame, the subprogram, and where the DWARF does not say. */
        const char *call_file;
        int call_line;
        /* 1 for an inlined scope, 0 for the subprogram that ends the chain. */
        int inlined;
} InlineFrame;

#if HAVE_LIBDW
#include <elfutils/libdw.h>

/* The chain at vaddr in the compile unit cu, into frames[0..max): innermost first, the subprogram last. The
 * number of frames (1 when vaddr is in no inlined code, only the subprogram), 0 when no subprogram of the unit
 * holds vaddr. When the chain is longer than max, its innermost frames are dropped and the outermost kept. */
int inline_frames_walk(Dwarf_Die *cu, uint64_t vaddr, InlineFrame *frames, size_t max);
#endif
