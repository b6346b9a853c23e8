/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file-util.h"
#include "inline-cache.h"
#include "line-source.h"
#include "memory.h"
#include "profile-window.h"
#include "target.h"
#include "time-util.h"
#include "unwind-tables.h"

/* "Key:   123 kB" lines of /proc/self/status. */
static int read_status(uint64_t *rss, uint64_t *hwm, uint64_t *anon, uint64_t *file)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned long long kib;

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "VmRSS: %llu kB", &kib) == 1)
                        *rss = kib << 10;
                else if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
                        *hwm = kib << 10;
                else if (sscanf(line, "RssAnon: %llu kB", &kib) == 1)
                        *anon = kib << 10;
                else if (sscanf(line, "RssFile: %llu kB", &kib) == 1)
                        *file = kib << 10;
        }
        return 0;
}

/* The Rss: lines of the mappings of BPF maps: the kernel counts their pages as file pages. */
static int read_bpf_maps(uint64_t *ret_bytes, uint32_t *ret_n)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/smaps", "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        bool in_map = false;
        unsigned long long kib;

        if (!f)
                return -errno;
        *ret_bytes = 0;
        *ret_n = 0;
        /* getline(): a mapping's line holds a path of any length. */
        while (getline(&line, &size, f) >= 0) {
                /* A mapping's first line: "start-end perms offset dev inode [name]"; its fields have colons in
                 * the device only after a space, the field lines have one right after the key. */
                if (line[strcspn(line, " :")] == ' ') {
                        in_map = strstr(line, "anon_inode:bpf-map") != NULL;
                        *ret_n += in_map;
                } else if (in_map && sscanf(line, "Rss: %llu kB", &kib) == 1)
                        *ret_bytes += kib << 10;
        }
        return 0;
}

/* The BPF maps stay mapped at one size (the arena's slices come and go within a write): read again after this. */
#define BPF_MAPS_READ_USEC USEC_PER_SEC

static uint64_t take(uint64_t *left, uint64_t want)
{
        uint64_t got = MIN(*left, want);

        *left -= got;
        return got;
}

int memory_status_read(Manager *m, MemoryStatus *ret)
{
        uint64_t rss = 0, hwm = 0, anon = 0, file = 0, bpf = 0, tables = 0, windows = 0;
        UnwindTablesStats unwind = {};
        struct mallinfo2 mi = mallinfo2();
        uint32_t n_bpf = 0;
        Target *t;
        int r;

        r = read_status(&rss, &hwm, &anon, &file);
        if (r < 0)
                return r;
        if (m->bpf_maps_usec == 0 || now_usec(CLOCK_MONOTONIC) - m->bpf_maps_usec >= BPF_MAPS_READ_USEC) {
                r = read_bpf_maps(&m->bpf_maps_bytes, &m->bpf_maps_n);
                if (r < 0)
                        return r;
                m->bpf_maps_usec = now_usec(CLOCK_MONOTONIC);
        }
        bpf = m->bpf_maps_bytes;
        n_bpf = m->bpf_maps_n;
        HASHMAP_FOREACH(t, m->targets) {
                if (t->profile)
                        tables += profile_memory(t->profile);
                if (t->window)
                        windows += profile_window_bytes(t->window);
        }
        unwind_tables_get_stats(m->unwind_tables, &unwind);

        /* The heap parts out of the anonymous pages, the maps out of the file ones: none takes more than is
         * left, so that they add up to no more than the RSS whatever the counts say. */
        *ret = (MemoryStatus){ .rss = rss, .peak_rss = hwm, .bpf_mappings = n_bpf };
        ret->bpf_maps = take(&file, bpf);
        ret->code = file;
        ret->tables = take(&anon, tables);
        ret->windows = take(&anon, windows);
        ret->unwind = take(&anon, unwind.memory);
        ret->symbols = take(&anon, symbolizer_memory(m->symbolizer) + symbolizer_kallsyms_memory(m->symbolizer) +
                                           line_reader_bytes(m->drain.inline_reader) +
                                           inline_cache_memory(m->drain.inline_cache));
        ret->malloc_free = take(&anon, mi.fordblks);
        ret->other = rss - MIN(rss, ret->bpf_maps + ret->code + ret->tables + ret->windows + ret->unwind +
                                            ret->symbols + ret->malloc_free);
        ret->unwind_arena = unwind.arena_bytes;
        return 0;
}
