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
/* What became of [start, end): unmapped (path NULL), or mapped from the file at path (dev, inode) from offset,
 * executable and readable. */
typedef struct ProcMapChange {
        uint64_t start, end;
        const char *path;
        uint64_t offset, inode;
        uint32_t dev_major, dev_minor;
} ProcMapChange;

/* m with the change made (pure): mappings inside the range dropped, those across its ends cut there. -EINVAL for
 * an empty range, or a path that the maps file's format cannot hold (a newline in it). */
int proc_maps_apply(const ProcMaps *m, const ProcMapChange *c, ProcMaps **ret);

/* m and the mappings of fresh that overlap none of m's (pure): what a newer reading adds to a snapshot kept up to
 * date by changes in order (proc_maps_apply()), without undoing the changes still to come. */
int proc_maps_merge(const ProcMaps *m, const ProcMaps *fresh, ProcMaps **ret);

/* A copy of m, of its own: a forked child's maps are its parent's until it execs. */
int proc_maps_copy(const ProcMaps *m, ProcMaps **ret);
ProcMaps *proc_maps_free(ProcMaps *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcMaps *, proc_maps_free);
