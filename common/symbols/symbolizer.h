/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macros.h"

/* Turns addresses into (module, function). A Symbolizer is shared by every target: it caches parsed ELF
 * files by (device, inode), so each binary is parsed once, and kernel symbols. An AddressSpace
 * (address-space.h) is one process's view of the files it maps. */
typedef struct Symbolizer Symbolizer;

typedef struct Symbol {
        const char *module;   /* basename of the mapped file, "[vdso]", "kernel", "[unknown]"...; never NULL */
        const char *function; /* NULL when no symbol covers the address */
        uint64_t offset;      /* function ? address - symbol start : module-relative address (ELF vaddr) */
        bool code;            /* the address is in an executable mapping: a return address elsewhere is junk */
        bool transient;       /* the name may change for this address (JIT code, a kernel address that no
                               * symbol covers yet): not to be cached */
} Symbol;

/* Where a file's function names came from, for a report of symbol quality. */
typedef enum SymbolSource {
        SYMBOL_SOURCE_NONE,          /* no names: not ELF, unreadable, none in it, or no room in the cache */
        SYMBOL_SOURCE_SYMTAB,        /* the file's own .symtab */
        SYMBOL_SOURCE_DYNSYM,        /* its .dynsym: exported functions only */
        SYMBOL_SOURCE_MINIDEBUGINFO, /* its .gnu_debugdata with its .dynsym */
        SYMBOL_SOURCE_DEBUGLINK,     /* a separate debug file named by .gnu_debuglink */
        SYMBOL_SOURCE_BUILD_ID,      /* a separate debug file found by build-id */
        SYMBOL_SOURCE_DEBUGINFOD,    /* a debug file downloaded by build-id (symbolizer_set_debug_fetch()) */
        _SYMBOL_SOURCE_MAX,
} SymbolSource;

/* "none", "symtab", "dynsym", "minidebuginfo", "debuglink", "build-id", "debuginfod"; NULL when out of
 * range. */
const char *symbol_source_to_string(SymbolSource source);

/* One mapped file as the symbolizer knows it. The strings stay valid as those of Symbol. */
typedef struct FileInfo {
        const char *module;     /* as in Symbol */
        const char *path;       /* as the process maps it, escaped (ProcMap.name) */
        SymbolSource source;
        const char *debug_file; /* DEBUGLINK, BUILD_ID: the debug file, as the process would see it; DEBUGINFOD:
                                 * the downloaded file, in our file system; else NULL. Raw: it is opened
                                 * again, so whoever shows it escapes it (utf8.h) */
        const char *build_id;   /* lowercase hex, NULL when the file has none (or could not be read) */
        size_t n_symbols;       /* function symbols held */
        uint64_t load_usec;     /* spent reading its symbols and its attachment (the unwinder's call frame
                                 * information), once for all targets */
} FileInfo;

/* Data of its own that a layer above keeps per file: the unwinder keeps each file's call frame information.
 * Parsed from the file on its first use through an address space (address_space_code_attachment()), held by
 * the file's cache entry, counted in the budget like its symbols, freed with the entry. A file holds
 * attachments of one type only. */
typedef struct FileAttachmentType {
        const char *name; /* what it is, for the debug log: "call frame information" */
        /* Parse the file open at fd (not kept): 0 and *ret_data (NULL: nothing to keep) holding *ret_bytes;
         * -ENOMEM; another -errno for a file without (-EIO: it changed while it was read, counted as
         * damaged). The file is not tried again. */
        int (*load)(int fd, void **ret_data, size_t *ret_bytes);
        void (*free)(void *data);
        /* Optional, called in place of load: the same with the file's separate debug file open at debug_fd
         * (not kept), -1 when there is none: the one its symbols came from, else, for a file with .symtab,
         * one found by its build-id. */
        int (*load_with_debug)(int fd, int debug_fd, void **ret_data, size_t *ret_bytes);
} FileAttachmentType;

int symbolizer_new(Symbolizer **ret);
Symbolizer *symbolizer_free(Symbolizer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Symbolizer *, symbolizer_free);

/* How many distinct files (by device and inode) the cache holds, unusable ones included: for tests and
 * statistics. */
size_t symbolizer_cached_files(const Symbolizer *s);

/* At most bytes (0: no bound) of parsed symbol tables and attachments. Files that no address space maps any
 * more are dropped first; when every file is in use, a new file stays without symbols. */
void symbolizer_set_budget(Symbolizer *s, size_t bytes);
size_t symbolizer_budget(const Symbolizer *s);
size_t symbolizer_memory(const Symbolizer *s);
/* The kernel's symbols (kallsyms, loaded at the first kernel address), outside the budget. */
size_t symbolizer_kallsyms_memory(const Symbolizer *s);
/* Files left without symbols or attachment for the budget. */
uint64_t symbolizer_skipped_files(const Symbolizer *s);
/* Files found damaged: changed (truncated, rewritten in place) while they were read, the target's own files
 * and separate debug files alike. What was read of them is left out: their frames are named by offset. A
 * file counts each time it is read so. */
uint64_t symbolizer_damaged_files(const Symbolizer *s);

/* Where separate debug files are looked for (gdb's debug-file-directory), an absolute path in the target's
 * file system; NULL: /usr/lib/debug. Applies to files parsed from now on. */
int symbolizer_set_debug_directory(Symbolizer *s, const char *dir);
const char *symbolizer_debug_directory(const Symbolizer *s);

/* Asked about every file with a build-id that has neither .symtab nor a local debug file, when it is parsed:
 * 1 and *ret_path (freed by the caller) when a debug file of that build-id is at hand now, 0 when not (the
 * function may start fetching one, to hand over later through symbolizer_add_debug_file()), -ENOMEM.
 * binary_path is the file as the process maps it, for messages. Must not block. */
typedef int (*DebugFetch)(const char *build_id, const char *binary_path, char **ret_path, void *userdata);
void symbolizer_set_debug_fetch(Symbolizer *s, DebugFetch fetch, void *userdata);

/* The debug file at path (in our file system) for build_id, which arrived after the files of that build-id
 * were parsed: every such file without better names takes its symbols from now on (source DEBUGINFOD).
 * Addresses resolved before keep the names they got: whoever caches them should forget them. Returns how
 * many files took it (0: none, e.g. the debug file is of another build or has no symbols), or -ENOMEM. */
int symbolizer_add_debug_file(Symbolizer *s, const char *build_id, const char *path);

/* Kernel addresses through /proc/kallsyms (loaded on first use; read again, at most every 10 s, when an
 * address falls outside every symbol, as modules come and go). Module "kernel" for the core image, else the
 * module's name. When kallsyms hides the addresses (kptr_restrict), every address is function "[kernel]" of
 * module "kernel": no name rather than a wrong one. */
int symbolizer_resolve_kernel(Symbolizer *s, uint64_t addr, Symbol *ret);
/* Counts the reads of kallsyms: a kernel frame cached under an older count may have another name now (a module
 * loaded, kptr_restrict lowered). */
uint64_t symbolizer_kallsyms_generation(const Symbolizer *s);
/* Of those, the reads that found the addresses hidden (kptr_restrict). */
uint64_t symbolizer_kallsyms_restricted_reads(const Symbolizer *s);
/* Another kallsyms file and interval between re-reads (default /proc/kallsyms, 10 s), for tests. */
int symbolizer_set_kallsyms(Symbolizer *s, const char *path, uint64_t reread_usec);
