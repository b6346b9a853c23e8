/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What address-space.c and address-space-files.c share: the address space itself and the lookups of its
 * mappings and their files. Not for use outside common/symbols. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "address-space.h"
#include "perf-map.h"
#include "proc-maps.h"
#include "symbolizer-internal.h"
#include "vdso-symbols.h"

/* Files remembered from earlier snapshots, by device and inode (AddressSpace.known). */
#define KNOWN_FILES_MAX 32

typedef struct KnownFile {
        uint64_t inode;
        uint32_t dev_major, dev_minor;
        char *path;
} KnownFile;

struct AddressSpace {
        Symbolizer *symbolizer;
        pid_t pid;
        uint64_t start_time;     /* of the process, to tell it from a later one with its PID; 0: unknown */
        ProcMaps *maps;
        FileEntry **files;       /* per mapping: NULL until an address in it is resolved */
        uint64_t last_read_usec;
        uint64_t generation;     /* moves with every new snapshot: the read time, unique per process */
        bool gone;               /* exited: the snapshot is all there will be */

        /* JIT code: the perf map file, as last read, and what it was then (size, mtime, inode). */
        PerfMap *perf_map;
        pid_t nspid;             /* the PID as the process sees it, in the file's name; 0: not known yet */
        uint64_t perf_map_checked_usec;
        struct stat perf_map_stat;

        /* The vDSO's functions, from the image at vdso_start (0: not read yet; a new one after an exec). */
        VdsoSymbols *vdso;
        uint64_t vdso_start;

        /* The files of the executable mappings of earlier snapshots, newest last, a ring: the path of a file
         * mapped again (dlopen() after dlclose()) once /proc shows it no longer (address_space_apply()). */
        KnownFile known[KNOWN_FILES_MAX];
        size_t n_known;
        /* Kept up to date by changes in the order of the samples (address_space_apply()): a reading of /proc,
         * which may be ahead of them, only adds mappings where the snapshot has none. */
        bool follows_changes;
};

/* The mapping holding addr (NULL when none does), re-reading the maps on a miss. */
int address_space_find(AddressSpace *as, uint64_t addr, const ProcMap **ret);
/* The cache entry of a file mapping, opening the file the first time. type: load its attachment of that type
 * too, on first use; with the file open already when the entry is new, else opened again. */
int address_space_file(AddressSpace *as, const ProcMap *m, const FileAttachmentType *type, FileEntry **ret);
/* The mapping's file, opened through the process (its mount namespace, a deleted file): fd or -errno. */
int address_space_open_mapping(const AddressSpace *as, const ProcMap *m);
/* Whether the file open at fd is the one entry was made from. */
bool address_space_file_entry_is(const FileEntry *entry, int fd);
/* The root of the process, to look for its debug files under: NULL once it is gone. */
const char *address_space_root(const AddressSpace *as, char buf[static 64]);
/* The module name of a mapping, as the tables show it. */
const char *address_space_mapping_module(const ProcMap *m);
