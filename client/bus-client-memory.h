/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

/* The daemon's Memory property (org.vprof.Profiler1(5)): where its RSS goes, in bytes. */
typedef struct StatusMemory {
        bool present; /* false: a daemon without the property */
        uint64_t rss, peak_rss;
        uint64_t tables, windows, unwind, symbols, bpf_maps, code, malloc_free, other; /* the parts of rss */
        uint64_t bpf_mappings;
        uint64_t unwind_arena; /* kernel memory, not in rss */
} StatusMemory;

/* The property's variant (a{st}) at m's position into *ret; keys this client does not know are skipped. */
int bus_read_status_memory(sd_bus_message *m, StatusMemory *ret);
