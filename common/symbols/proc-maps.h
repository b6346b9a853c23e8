/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macros.h"

/* One line of /proc/PID/maps. */
typedef struct ProcMap {
        uint64_t start;
        uint64_t end;    /* exclusive */
        uint64_t offset; /* file offset of start */
        uint64_t inode;
        uint32_t dev_major;
        uint32_t dev_minor;
        bool readable, writable, executable;
        bool deleted;    /* the path ended in " (deleted)"; path has the suffix removed */
        char *path;      /* NULL for an anonymous mapping; "[vdso]", "[stack]"... for special ones */
        char *name;      /* the path as it is shown: its escape (utf8.h), path itself when it is its own; files
                          * are opened by path, never by name */
} ProcMap;

/* Mappings sorted by start address (the kernel already lists them so). */
typedef struct ProcMaps {
        ProcMap *maps;
        size_t n;
} ProcMaps;

/* Parse the text of a maps file (pure; for tests and for proc_maps_read()). */
int proc_maps_parse(const char *text, ProcMaps **ret);
/* Read and parse /proc/PID/maps. -ESRCH when the process is gone, -EFBIG when the file is over 64 MiB. */
int proc_maps_read(pid_t pid, ProcMaps **ret);
/* The mapping that contains addr, or NULL (binary search). */
const ProcMap *proc_maps_find(const ProcMaps *m, uint64_t addr);
/* A copy of m, of its own: a forked child's maps are its parent's until it execs. */
int proc_maps_copy(const ProcMaps *m, ProcMaps **ret);
ProcMaps *proc_maps_free(ProcMaps *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcMaps *, proc_maps_free);
