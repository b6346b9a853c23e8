/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The file cache's layout, for symbolizer.c (the cache, kernel symbols) and address-space.c (one process's
 * mappings, which hold the cache's entries); nothing else includes this. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "elf-symbols.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "symbolizer.h"

typedef struct FileKey {
        uint64_t dev;
        uint64_t ino;
} FileKey;

/* One mapped file, by (st_dev, st_ino). Size and mtime tell a file from a later one that got the inode
 * number of a deleted one. */
typedef struct FileEntry {
        FileKey key;
        int64_t size;
        struct timespec mtime;
        ElfSymbols *elf; /* NULL: not ELF, or unreadable; kept so it is not tried again */
        SymbolSource source;
        char *debug_file; /* the separate debug file elf's symbols came from, as the target sees it */
        /* A layer's data of the file (the unwinder's call frame information): loaded on its first use, as
         * most files never hold a sampled ip. */
        const FileAttachmentType *attachment_type; /* of attachment; NULL until one is loaded */
        void *attachment;
        bool attachment_loaded; /* tried: a file without one is not read again */
        unsigned refs;          /* mappings of address spaces that point here: while > 0, it stays */
        size_t bytes;           /* of elf and the attachment, counted in Symbolizer.used */
        uint64_t load_usec;     /* spent reading its symbols (debug file included) and its attachment */
} FileEntry;

struct Symbolizer {
        Hashmap *files;          /* FileKey* -> FileEntry*: the current entry of each file */
        FileEntry **entries;     /* every entry made, with the replaced ones that address spaces may hold */
        size_t n_entries;
        Kallsyms *kallsyms;
        char *kallsyms_path;     /* NULL: KALLSYMS_PATH */
        bool kallsyms_loaded;    /* tried; a failure is not retried on every kernel frame */
        uint64_t kallsyms_restricted; /* reads of kallsyms that found the addresses hidden */
        uint64_t kallsyms_read_usec;
        uint64_t kallsyms_generation; /* reads of kallsyms so far */
        uint64_t kallsyms_reread_usec;

        /* The budget of the parsed files (0: none). Past it, files no address space uses are dropped; when
         * every file is in use, a new file's symbols are not kept (its frames are named by offset). */
        size_t budget;
        size_t used;
        uint64_t skipped;        /* files left without symbols or attachment for the budget */
        uint64_t damaged;        /* files that changed while they were read (elf-util.h) */
        char *debug_dir;         /* NULL: DEBUG_DIRECTORY_DEFAULT */
        DebugFetch debug_fetch;  /* NULL: no remote debug files */
        void *debug_fetch_userdata;
};

/* The cache entry of the file open at fd, parsing the file when it is new. path: the file as the process
 * maps it, for messages and for finding its debug file; root: the process's root (/proc/PID/root) to look
 * for debug files under, NULL for ours (a process gone has none left). */
int symbolizer_get_file(Symbolizer *s, int fd, const char *path, const char *root, FileEntry **ret);

/* The separate debug file of entry, for an attachment or the DWARF of its code: the one its symbols came from,
 * opened again; else, for a file with .symtab, whose debug file was never looked for, one by its build-id (a
 * .gnu_debuglink is recorded for stripped files only). root as for symbolizer_get_file(). The descriptor, -1
 * when there is none, or -ENOMEM. */
int symbolizer_open_debug_file(Symbolizer *s, const FileEntry *entry, const char *root);

/* Loads the attachment of type of entry from the file open at fd (-1: the file could not be opened again, it
 * gets none), once: counted in the budget, or dropped when it does not fit. path and root as for
 * symbolizer_get_file(), for finding the file's debug file. 0, or -ENOMEM. */
int symbolizer_load_attachment(Symbolizer *s, FileEntry *entry, const FileAttachmentType *type, int fd,
                               const char *path, const char *root);
