/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "eh-frame.h"
#include "macros.h"

/* Turns addresses into (module, function). A Symbolizer is shared by every target: it caches parsed ELF files
 * by (device, inode), so each binary is parsed once, and kernel symbols. An AddressSpace is one process's view:
 * a snapshot of its /proc/PID/maps that outlives the process (a target that exited stays resolvable) and is
 * re-read when an address falls outside every known mapping (dlopen, exec). */
typedef struct Symbolizer Symbolizer;
typedef struct AddressSpace AddressSpace;

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
        const char *path;       /* as the process maps it */
        SymbolSource source;
        const char *debug_file; /* DEBUGLINK, BUILD_ID: the debug file, as the process would see it; DEBUGINFOD:
                                 * the downloaded file, in our file system; else NULL */
        const char *build_id;   /* lowercase hex, NULL when the file has none (or could not be read) */
        size_t n_symbols;       /* function symbols held */
        uint64_t load_usec;     /* spent reading its symbols and call frame information, once for all targets */
} FileInfo;

int symbolizer_new(Symbolizer **ret);
Symbolizer *symbolizer_free(Symbolizer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Symbolizer *, symbolizer_free);

/* How many distinct files (by device and inode) the cache holds, unusable ones included: for tests and
 * statistics. */
size_t symbolizer_cached_files(const Symbolizer *s);

/* At most bytes (0: no bound) of parsed symbol tables and call frame information. Files that no address space
 * maps any more are dropped first; when every file is in use, a new file stays without symbols. */
void symbolizer_set_budget(Symbolizer *s, size_t bytes);
size_t symbolizer_budget(const Symbolizer *s);
size_t symbolizer_memory(const Symbolizer *s);
/* Files left without symbols or call frame information for the budget. */
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

/* Reads /proc/PID/maps now; -ESRCH when the process is gone. The address space uses s: free it before s. */
int address_space_new(Symbolizer *s, pid_t pid, AddressSpace **ret);
AddressSpace *address_space_free(AddressSpace *as);
DEFINE_TRIVIAL_CLEANUP_FUNC(AddressSpace *, address_space_free);

/* Resolve a user address of the process. Code of a file mapping is named from the file's symbols; the vDSO from
 * the process's own image of it (read through /proc/PID/mem); anonymous executable memory (JIT code) from the
 * process's perf map file, /tmp/perf-NSPID.map under its root (perf-map.h), re-read when it changes, at
 * most every second. return_address: the frame is a caller's return address, so the
 * call instruction is at addr - 1 (this keeps calls at a function's end from landing in the next function).
 * Always fills *ret (an address in no mapping gives module "[unknown]", function NULL); returns 0, or
 * -ENOMEM. */
/* The strings in *ret stay valid until the next call on this address space or on the symbolizer. */
int address_space_resolve(AddressSpace *as, uint64_t addr, bool return_address, Symbol *ret);

/* The return address of the innermost user frame, from the call frame information (.eh_frame) of the code at
 * ip: the frame-pointer walk skips the caller of a function without a frame (a leaf, a libc system call
 * wrapper, a prologue). sp, bp: the user registers when the stack was captured; window: n_words words copied
 * from the user stack at sp. 0 and *ret_return_address on success; -ENOENT no CFI for ip (not in a file
 * mapping, the vDSO, a file without .eh_frame) or the outermost frame; -ERANGE, -EOPNOTSUPP, -EBADMSG as
 * eh_frame_unwind_step(). */
int address_space_unwind_leaf(AddressSpace *as, uint64_t ip, uint64_t sp, uint64_t bp, const uint64_t *window,
                              size_t n_words, uint64_t *ret_return_address);

/* One step of the same from any frame: regs->ip is the frame's instruction (return_address: a caller's return
 * address, looked up at the call), window holds n_words words from regs->sp up. Fills the caller's ip (its
 * return address), sp and bp. Errors as address_space_unwind_leaf(). */
int address_space_unwind_step(AddressSpace *as, const UnwindRegs *regs, bool return_address,
                              const uint64_t *window, size_t n_words, UnwindRegs *ret_caller);

/* What is known of the file mapped at addr (parsing it if it is new): -ENOENT when addr is in no file
 * mapping. */
int address_space_file_info(AddressSpace *as, uint64_t addr, FileInfo *ret);
/* The same for the first file mapping of the process whose module (basename) is module. */
int address_space_module_info(AddressSpace *as, const char *module, FileInfo *ret);
