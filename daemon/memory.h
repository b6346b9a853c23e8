/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "manager.h"

/* Where the daemon's resident memory goes, for `vprofctl status`. The RSS and its kinds come from the kernel
 * (/proc/self/status and, for the BPF maps, /proc/self/smaps); the parts held on the heap are the daemon's own
 * counts of the bytes it asked of malloc(); what neither explains is "other". The parts never add up to more
 * than the RSS: the counted heap parts and the allocator's free memory are bounded by the anonymous RSS, and
 * "other" is what is left. */
typedef struct MemoryStatus {
        uint64_t rss, peak_rss;     /* VmRSS, VmHWM */
        uint64_t tables;            /* the targets' tables (profile_memory()); not their current second's delta,
                                     * frame caches or address spaces, which are in other */
        uint64_t windows;           /* their time windows' buckets (profile_window_bytes()) */
        uint64_t unwind;            /* the unwind tables' bookkeeping and tables waiting for room */
        uint64_t symbols;           /* parsed symbol tables and CFI (the symbol cache) and kallsyms */
        uint64_t bpf_maps;          /* resident pages of the BPF maps mapped into the daemon (ring buffer...) */
        uint32_t bpf_mappings;      /* how many such mappings */
        uint64_t code;              /* other file-backed pages: the program and its libraries */
        uint64_t malloc_free;       /* free memory malloc() holds (mallinfo2()), at most what the RSS has left */
        uint64_t other;             /* the rest: stacks, the bus, the libraries' own heap, allocator overhead */
        uint64_t unwind_arena;      /* the unwind tables' BPF map: kernel memory, not in the RSS */
} MemoryStatus;

int memory_status_read(Manager *m, MemoryStatus *ret);
