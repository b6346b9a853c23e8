/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "debug-file.h"
#include "eh-frame.h"
#include "elf-symbols.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "log.h"
#include "open-util.h"
#include "perf-map.h"
#include "proc-info.h"
#include "proc-maps.h"
#include "symbolizer.h"
#include "time-util.h"
#include "vdso-symbols.h"

/* An address outside every known mapping makes us re-read /proc/PID/maps, but not more than once in this
 * interval per address space: a broken frame-pointer chain yields a stream of garbage addresses, and each
 * would otherwise cost a read of the maps file. 100 ms is short next to the time between a dlopen() and the
 * daemon's next drain of samples, so code mapped since the last read is found on the next miss after it. */
#define REREAD_INTERVAL_USEC (100 * USEC_PER_MSEC)

#define KALLSYMS_PATH "/proc/kallsyms"

/* kallsyms is read again for an address no symbol covers (a module loaded since), but not more often than
 * this: reading it takes tens of milliseconds, and an address in a gap between modules never resolves. */
#define KALLSYMS_REREAD_USEC (10 * USEC_PER_SEC)

/* How often a process's perf map file is looked at for changes, while its JIT code is being sampled. */
#define PERF_MAP_CHECK_USEC USEC_PER_SEC

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
        /* Loaded on the first unwind in the file, as most files never hold a sampled ip. */
        EhFrame *eh_frame;
        bool eh_frame_loaded; /* tried: a file without CFI is not read again */
        unsigned refs;        /* mappings of address spaces that point here: while > 0, it stays */
        size_t bytes;         /* of elf and eh_frame, counted in Symbolizer.used */
        uint64_t load_usec;   /* spent reading its symbols (debug file included) and its CFI */
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
        uint64_t skipped;        /* files left without symbols or CFI for the budget */
        uint64_t damaged;        /* files that changed while they were read (elf-util.h) */
        char *debug_dir;         /* NULL: DEBUG_DIRECTORY_DEFAULT */
        DebugFetch debug_fetch;  /* NULL: no remote debug files */
        void *debug_fetch_userdata;
};

/* Marks a mapping whose file could not be opened, in AddressSpace.files. Never written: it has no ELF, and
 * only a file with one gets CFI loaded. */
static FileEntry file_unopenable = { .eh_frame_loaded = true };

struct AddressSpace {
        Symbolizer *symbolizer;
        pid_t pid;
        uint64_t start_time;     /* of the process, to tell it from a later one with its PID; 0: unknown */
        ProcMaps *maps;
        FileEntry **files;       /* per mapping: NULL until an address in it is resolved */
        uint64_t last_read_usec;
        bool gone;               /* exited: the snapshot is all there will be */

        /* JIT code: the perf map file, as last read, and what it was then (size, mtime, inode). */
        PerfMap *perf_map;
        pid_t nspid;             /* the PID as the process sees it, in the file's name; 0: not known yet */
        uint64_t perf_map_checked_usec;
        struct stat perf_map_stat;

        /* The vDSO's functions, from the image at vdso_start (0: not read yet; a new one after an exec). */
        VdsoSymbols *vdso;
        uint64_t vdso_start;
};

static uint64_t file_key_hash(const void *key)
{
        return hash_bytes(key, sizeof(FileKey), 0);
}

static bool file_key_equal(const void *a, const void *b)
{
        const FileKey *x = a, *y = b;

        return x->dev == y->dev && x->ino == y->ino;
}

static const HashOps file_key_hash_ops = { .hash = file_key_hash, .equal = file_key_equal };

static void file_entry_free(FileEntry *e)
{
        elf_symbols_free(e->elf);
        free(e->debug_file);
        eh_frame_free(e->eh_frame);
        free(e);
}

int symbolizer_new(Symbolizer **ret)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;

        if (!ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->files = hashmap_new(&file_key_hash_ops);
        if (!s->files)
                return -ENOMEM;
        s->kallsyms_reread_usec = KALLSYMS_REREAD_USEC;
        *ret = TAKE_PTR(s);
        return 0;
}

Symbolizer *symbolizer_free(Symbolizer *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_entries; i++)
                file_entry_free(s->entries[i]);
        free(s->entries);
        hashmap_free(s->files);
        kallsyms_free(s->kallsyms);
        free(s->kallsyms_path);
        free(s->debug_dir);
        free(s);
        return NULL;
}

size_t symbolizer_cached_files(const Symbolizer *s)
{
        return s ? hashmap_size(s->files) : 0;
}

void symbolizer_set_budget(Symbolizer *s, size_t bytes)
{
        s->budget = bytes;
}

size_t symbolizer_budget(const Symbolizer *s)
{
        return s->budget;
}

size_t symbolizer_memory(const Symbolizer *s)
{
        return s->used;
}

uint64_t symbolizer_skipped_files(const Symbolizer *s)
{
        return s->skipped;
}

uint64_t symbolizer_damaged_files(const Symbolizer *s)
{
        return s->damaged;
}

uint64_t symbolizer_kallsyms_restricted_reads(const Symbolizer *s)
{
        return s->kallsyms_restricted;
}

/* r from reading a file of a target for symbols or CFI: -EIO means that the file changed while it was read
 * (truncated, rewritten in place), and what was read of it is dropped. Counted, for the daemon to tell. */
static void symbolizer_note_read(Symbolizer *s, int r, const char *what, const char *path)
{
        if (r != -EIO)
                return;
        s->damaged++;
        log_debug("%s %s changed while it was read: left out, its frames are named by offset.", what,
                  path ?: "?");
}

int symbolizer_set_debug_directory(Symbolizer *s, const char *dir)
{
        char *copy = NULL;

        if (!s || (dir && dir[0] != '/'))
                return -EINVAL;
        if (dir) {
                copy = strdup(dir);
                if (!copy)
                        return -ENOMEM;
        }
        free(s->debug_dir);
        s->debug_dir = copy;
        return 0;
}

const char *symbolizer_debug_directory(const Symbolizer *s)
{
        return s->debug_dir ?: DEBUG_DIRECTORY_DEFAULT;
}

void symbolizer_set_debug_fetch(Symbolizer *s, DebugFetch fetch, void *userdata)
{
        s->debug_fetch = fetch;
        s->debug_fetch_userdata = userdata;
}

const char *symbol_source_to_string(SymbolSource source)
{
        static const char *const table[_SYMBOL_SOURCE_MAX] = {
                [SYMBOL_SOURCE_NONE] = "none",
                [SYMBOL_SOURCE_SYMTAB] = "symtab",
                [SYMBOL_SOURCE_DYNSYM] = "dynsym",
                [SYMBOL_SOURCE_MINIDEBUGINFO] = "minidebuginfo",
                [SYMBOL_SOURCE_DEBUGLINK] = "debuglink",
                [SYMBOL_SOURCE_BUILD_ID] = "build-id",
                [SYMBOL_SOURCE_DEBUGINFOD] = "debuginfod",
        };

        return source >= 0 && source < _SYMBOL_SOURCE_MAX ? table[source] : NULL;
}

static void file_ref(FileEntry *e)
{
        if (e && e != &file_unopenable)
                e->refs++;
}

static void file_unref(FileEntry *e)
{
        if (e && e != &file_unopenable && e->refs > 0)
                e->refs--;
}

/* Drops the files no address space uses any more. */
static void symbolizer_evict_unused(Symbolizer *s)
{
        size_t kept = 0;

        for (size_t i = 0; i < s->n_entries; i++) {
                FileEntry *e = s->entries[i];

                if (e->refs > 0) {
                        s->entries[kept++] = e;
                        continue;
                }
                if (hashmap_get(s->files, &e->key) == e)
                        hashmap_remove(s->files, &e->key);
                s->used -= e->bytes;
                file_entry_free(e);
        }
        s->n_entries = kept;
}

/* Whether bytes more fit in the budget, after dropping unused files if needed. */
static bool symbolizer_make_room(Symbolizer *s, size_t bytes)
{
        if (s->budget == 0 || s->used + bytes <= s->budget)
                return true;
        symbolizer_evict_unused(s);
        if (s->used + bytes <= s->budget)
                return true;
        /* The daemon says it once, when the count moves (library code logs at debug only). */
        s->skipped++;
        log_debug("Symbol cache full (%zu KiB in use by attached processes): a file stays without symbols.",
                  s->used >> 10);
        return false;
}

int symbolizer_set_kallsyms(Symbolizer *s, const char *path, uint64_t reread_usec)
{
        char *copy;

        if (!s || !path)
                return -EINVAL;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        free(s->kallsyms_path);
        s->kallsyms_path = copy;
        s->kallsyms_reread_usec = reread_usec;
        return 0;
}

uint64_t symbolizer_kallsyms_generation(const Symbolizer *s)
{
        return s ? s->kallsyms_generation : 0;
}

static int symbolizer_load_kallsyms(Symbolizer *s)
{
        const char *path = s->kallsyms_path ?: KALLSYMS_PATH;
        Kallsyms *k = NULL;
        int r;

        s->kallsyms_loaded = true;
        s->kallsyms_read_usec = now_usec(CLOCK_MONOTONIC);
        s->kallsyms_generation++;
        r = kallsyms_load(path, &k);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_debug_errno(r, "Cannot read %s, kernel frames stay unnamed: %m", path);
                return 0;
        }
        kallsyms_free(s->kallsyms);
        s->kallsyms = k;
        /* Counted for the daemon to say once: every read would say it again. */
        if (kallsyms_restricted(k)) {
                s->kallsyms_restricted++;
                log_debug("%s hides kernel addresses (kptr_restrict): kernel frames are named [kernel].",
                          path);
        }
        return 0;
}

int symbolizer_resolve_kernel(Symbolizer *s, uint64_t addr, Symbol *ret)
{
        const char *name = NULL, *module = NULL;
        uint64_t offset = 0;
        int r;

        if (!s || !ret)
                return -EINVAL;

        if (!s->kallsyms_loaded) {
                r = symbolizer_load_kallsyms(s);
                if (r < 0)
                        return r;
        }

        name = kallsyms_lookup(s->kallsyms, addr, &module, &offset);
        if (!name && now_usec(CLOCK_MONOTONIC) - s->kallsyms_read_usec >= s->kallsyms_reread_usec) {
                /* A module loaded since the last read, or kptr_restrict lowered. */
                r = symbolizer_load_kallsyms(s);
                if (r < 0)
                        return r;
                name = kallsyms_lookup(s->kallsyms, addr, &module, &offset);
        }
        if (name)
                *ret = (Symbol) { .module = module, .function = name, .offset = offset, .code = true };
        else if (kallsyms_restricted(s->kallsyms))
                /* Addresses without names: one row for the kernel, never a guess. Cacheable until the next read
                 * (symbolizer_kallsyms_generation()): with kptr_restrict, every kernel frame comes here. */
                *ret = (Symbol) { .module = "kernel", .function = "[kernel]", .offset = 0, .code = true };
        else
                *ret = (Symbol) { .module = "kernel", .function = NULL, .offset = addr, .code = true,
                                  .transient = true };
        return 0;
}

/* Whether the file at fd is the one that the mapping shows; a path may name another file by now. */
static bool same_inode(int fd, const ProcMap *m)
{
        struct stat st;

        return fstat(fd, &st) >= 0 && (m->inode == 0 || (uint64_t)st.st_ino == m->inode);
}

/* Open the file of a mapping: through map_files, which reaches a deleted file and one in another mount
 * namespace but needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE) and a live process; else by the path as the
 * process sees it under its root; else by the path as we see it. The paths are checked against the mapping's
 * inode number, as they may name a different file (a package upgrade, another namespace). Only a regular
 * file is opened for reading (open-util.h): the path is the target's to turn into a FIFO or a device
 * meanwhile. */
static int open_mapping(const AddressSpace *as, const ProcMap *m)
{
        char path[PATH_MAX + 64];
        int fd, k;

        if (!as->gone) {
                snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)as->pid,
                         m->start, m->end);
                fd = open_regular(path, 0);
                if (fd >= 0)
                        return fd;
        }

        /* A deleted file's path names nothing, or a new file that replaced it. */
        if (!m->path || m->path[0] != '/' || m->deleted)
                return -ENOENT;

        if (!as->gone) {
                k = snprintf(path, sizeof(path), "/proc/%d/root%s", (int)as->pid, m->path);
                if (k > 0 && (size_t)k < sizeof(path)) {
                        fd = open_regular(path, 0);
                        if (fd >= 0) {
                                if (same_inode(fd, m))
                                        return fd;
                                safe_close(fd);
                        }
                }
        }

        fd = open_regular(m->path, 0);
        if (fd < 0)
                return fd;
        if (!same_inode(fd, m)) {
                safe_close(fd);
                return -ESTALE;
        }
        return fd;
}

typedef struct DebugSearch {
        Symbolizer *symbolizer;
        FileEntry *entry;
        const char *root;
} DebugSearch;

static int take_debug_file(int fd, DebugFileKind kind, const char *path, void *userdata)
{
        DebugSearch *d = userdata;
        char *copy;
        int r;

        r = elf_symbols_use_debug_fd(d->entry->elf, fd);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                symbolizer_note_read(d->symbolizer, r, "Debug file", path);
                log_debug_errno(r, "Debug file %s%s not used: %m", d->root ?: "", path);
                return 0;
        }
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        d->entry->debug_file = copy;
        d->entry->source = kind == DEBUG_FILE_BUILD_ID ? SYMBOL_SOURCE_BUILD_ID : SYMBOL_SOURCE_DEBUGLINK;
        return 1;
}

/* The symbols of the downloaded debug file at path in place of entry's: 1 when taken, 0 when not (a debug
 * file of another build, none there any more), -ENOMEM. */
static int file_entry_use_downloaded(Symbolizer *s, FileEntry *entry, const char *path)
{
        _cleanup_close_ int fd = -1;
        char *copy;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                log_debug_errno(negative_errno(), "Cannot open the downloaded debug file %s: %m", path);
                return 0;
        }
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        r = elf_symbols_use_debug_fd(entry->elf, fd);
        if (r < 0) {
                free(copy);
                if (r == -ENOMEM)
                        return r;
                symbolizer_note_read(s, r, "Downloaded debug file", path);
                log_debug_errno(r, "Downloaded debug file %s not used: %m", path);
                return 0;
        }
        free(entry->debug_file);
        entry->debug_file = copy;
        entry->source = SYMBOL_SOURCE_DEBUGINFOD;
        return 1;
}

/* Asks the fetch function for the debug file of entry's build-id: taken when it is at hand. */
static int file_entry_fetch_debug_file(Symbolizer *s, const ProcMap *m, FileEntry *entry)
{
        _cleanup_free_ char *path = NULL;
        int r;

        r = s->debug_fetch(elf_symbols_build_id(entry->elf), m && m->path ? m->path : "?", &path,
                           s->debug_fetch_userdata);
        if (r <= 0)
                return r;
        return file_entry_use_downloaded(s, entry, path);
}

int symbolizer_add_debug_file(Symbolizer *s, const char *build_id, const char *path)
{
        int n = 0, r;

        if (!s || !build_id || !path)
                return -EINVAL;
        /* The replaced entries too: address spaces may still resolve through them. */
        for (size_t i = 0; i < s->n_entries; i++) {
                FileEntry *e = s->entries[i];
                const char *id = elf_symbols_build_id(e->elf);
                size_t before, after;

                if (!id || strcmp(id, build_id) != 0 ||
                    !IN_SET(e->source, SYMBOL_SOURCE_NONE, SYMBOL_SOURCE_DYNSYM, SYMBOL_SOURCE_MINIDEBUGINFO))
                        continue;
                before = elf_symbols_memory(e->elf) + (e->debug_file ? strlen(e->debug_file) + 1 : 0);
                r = file_entry_use_downloaded(s, e, path);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                /* Counted, not refused: the file is in use already, and its names are why it was fetched. */
                e->bytes -= before;
                s->used -= before;
                after = elf_symbols_memory(e->elf) + strlen(e->debug_file) + 1;
                e->bytes += after;
                s->used += after;
                log_debug("Symbols of build-id %s: %zu from %s.", build_id, elf_symbols_count(e->elf), path);
                n++;
        }
        return n;
}

/* The symbols of a file without .symtab, where gdb looks for them: a separate debug file (by build-id, then
 * by .gnu_debuglink), else its MiniDebugInfo; else its .dynsym stays. The debug file is looked up in the
 * target's root, next to the binary's path as the target sees it; a process gone has no root left to look
 * in, and ours is the best guess. */
static int file_entry_load_debug_symbols(Symbolizer *s, const AddressSpace *as, const ProcMap *m, int fd,
                                         FileEntry *entry)
{
        char root[64];
        DebugSearch d = { .symbolizer = s, .entry = entry };
        DebugFileQuery q;
        uint32_t crc = 0;
        int r;

        if (!as->gone) {
                snprintf(root, sizeof(root), "/proc/%d/root", (int)as->pid);
                d.root = root;
        }
        q = (DebugFileQuery) {
                .root = d.root,
                .debug_dir = symbolizer_debug_directory(s),
                .binary_path = m->path && m->path[0] == '/' ? m->path : NULL,
                .binary_dev = (dev_t)entry->key.dev,
                .binary_ino = (ino_t)entry->key.ino,
                .build_id = elf_symbols_build_id(entry->elf),
                .debuglink = elf_symbols_debuglink(entry->elf, &crc),
        };
        q.debuglink_crc = crc;
        r = debug_file_find(&q, take_debug_file, &d);
        if (r != 0)
                return r;

        /* Nothing here: a debug file fetched before (or now being fetched, to come later). */
        if (s->debug_fetch && q.build_id) {
                r = file_entry_fetch_debug_file(s, m, entry);
                if (r != 0)
                        return r;
        }

        if (elf_symbols_has_minidebuginfo(entry->elf)) {
                r = elf_symbols_use_minidebuginfo(entry->elf, fd);
                if (r == -ENOMEM)
                        return r;
                symbolizer_note_read(s, r, "File", m->path);
                if (r < 0)
                        log_debug_errno(r, "Cannot read the MiniDebugInfo of %s: %m", m->path);
                else
                        entry->source = SYMBOL_SOURCE_MINIDEBUGINFO;
        }
        return 0;
}

static SymbolSource source_of(const ElfSymbols *e)
{
        switch (elf_symbols_source(e)) {
        case ELF_SYMBOLS_SYMTAB:
                return SYMBOL_SOURCE_SYMTAB;
        case ELF_SYMBOLS_DYNSYM:
                return SYMBOL_SOURCE_DYNSYM;
        case ELF_SYMBOLS_MINIDEBUGINFO:
                return SYMBOL_SOURCE_MINIDEBUGINFO;
        default:
                return SYMBOL_SOURCE_NONE;
        }
}

/* The cache entry of the file of mapping m open at fd, parsing the file when it is new. */
static int symbolizer_get_file(Symbolizer *s, const AddressSpace *as, const ProcMap *m, int fd,
                               FileEntry **ret)
{
        _cleanup_free_ FileEntry *entry = NULL;
        FileEntry *old, **entries;
        struct stat st;
        uint64_t start;
        int r;

        if (fstat(fd, &st) < 0)
                return negative_errno();

        old = hashmap_get(s->files, &(FileKey) { .dev = st.st_dev, .ino = st.st_ino });
        if (old && old->size == (int64_t)st.st_size && old->mtime.tv_sec == st.st_mtim.tv_sec &&
            old->mtime.tv_nsec == st.st_mtim.tv_nsec) {
                *ret = old;
                return 0;
        }

        entry = calloc(1, sizeof(*entry));
        if (!entry)
                return -ENOMEM;
        entry->key = (FileKey) { .dev = st.st_dev, .ino = st.st_ino };
        entry->size = st.st_size;
        entry->mtime = st.st_mtim;

        start = now_usec(CLOCK_MONOTONIC);
        r = elf_symbols_load_fd(fd, &entry->elf);
        if (r == -ENOMEM)
                return r;
        symbolizer_note_read(s, r, "File", m ? m->path : NULL);
        if (r < 0)
                log_debug_errno(r, "Cannot read symbols of file %" PRIu64 ":%" PRIu64 ": %m", entry->key.dev,
                                entry->key.ino);
        if (entry->elf) {
                entry->source = source_of(entry->elf);
                if (entry->source != SYMBOL_SOURCE_SYMTAB) {
                        r = file_entry_load_debug_symbols(s, as, m, fd, entry);
                        if (r < 0) {
                                elf_symbols_free(entry->elf);
                                free(entry->debug_file);
                                return r;
                        }
                }
        }
        if (entry->elf && !symbolizer_make_room(s, elf_symbols_memory(entry->elf))) {
                entry->elf = elf_symbols_free(entry->elf);
                free(entry->debug_file);
                entry->debug_file = NULL;
                entry->source = SYMBOL_SOURCE_NONE;
        }
        entry->bytes = elf_symbols_memory(entry->elf) + (entry->debug_file ? strlen(entry->debug_file) + 1 : 0);
        /* The cost a first query after attaching pays, once per file for every target. */
        entry->load_usec = now_usec(CLOCK_MONOTONIC) - start;
        log_debug("Symbols of %s: %zu from %s in %.1f ms, %zu KiB.", m ? m->path : "?", elf_symbols_count(entry->elf),
                  symbol_source_to_string(entry->source), (double)entry->load_usec / USEC_PER_MSEC,
                  entry->bytes >> 10);

        entries = realloc(s->entries, (s->n_entries + 1) * sizeof(FileEntry *));
        if (!entries) {
                elf_symbols_free(entry->elf);
                free(entry->debug_file);
                return -ENOMEM;
        }
        s->entries = entries;

        /* An older entry of this key was for a file since replaced; address spaces may still point at it, so
         * it stays in entries, out of the map. */
        if (old)
                hashmap_remove(s->files, &old->key);
        r = hashmap_put(s->files, &entry->key, entry);
        if (r < 0) {
                /* Had old been taken out, it stays in entries; the next lookup of the key starts afresh. */
                elf_symbols_free(entry->elf);
                free(entry->debug_file);
                return r;
        }
        s->entries[s->n_entries++] = entry;
        s->used += entry->bytes;
        *ret = TAKE_PTR(entry);
        return 0;
}

static int read_start_time(pid_t pid, uint64_t *ret)
{
        _cleanup_close_ int fd = -1;
        char path[64], buf[2048];
        unsigned flags;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return errno == ESRCH ? -ESRCH : negative_errno();
        buf[n] = '\0';
        return proc_stat_parse(buf, &flags, ret);
}

int address_space_new(Symbolizer *s, pid_t pid, AddressSpace **ret)
{
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        int r;

        if (!s || pid <= 0 || !ret)
                return -EINVAL;

        as = calloc(1, sizeof(*as));
        if (!as)
                return -ENOMEM;
        as->symbolizer = s;
        as->pid = pid;

        /* The start time first: the maps read after it, while the process still has that start time, are its
         * maps. A start time we cannot read only costs the check at later re-reads. */
        r = read_start_time(pid, &as->start_time);
        if (r == -ESRCH || r == -ENOMEM)
                return r;
        if (r < 0)
                as->start_time = 0;

        r = proc_maps_read(pid, &as->maps);
        if (r < 0)
                return r;
        as->files = calloc(MAX(as->maps->n, (size_t)1), sizeof(FileEntry *));
        if (!as->files)
                return -ENOMEM;
        as->last_read_usec = now_usec(CLOCK_MONOTONIC);

        *ret = TAKE_PTR(as);
        return 0;
}

AddressSpace *address_space_free(AddressSpace *as)
{
        if (!as)
                return NULL;
        for (size_t i = 0; as->files && i < as->maps->n; i++)
                file_unref(as->files[i]);
        proc_maps_free(as->maps);
        free(as->files);
        perf_map_free(as->perf_map);
        vdso_symbols_free(as->vdso);
        free(as);
        return NULL;
}

static bool same_mapping(const ProcMap *a, const ProcMap *b)
{
        return a->start == b->start && a->end == b->end && a->offset == b->offset && a->inode == b->inode &&
               a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->deleted == b->deleted;
}

/* Re-read the maps of a process that is still there: 1 when the snapshot was replaced, 0 when it stays. */
static int address_space_reread(AddressSpace *as)
{
        _cleanup_(proc_maps_freep) ProcMaps *maps = NULL;
        _cleanup_free_ FileEntry **files = NULL;
        uint64_t now = now_usec(CLOCK_MONOTONIC), start_time;
        int r;

        if (as->gone || now - as->last_read_usec < REREAD_INTERVAL_USEC)
                return 0;
        as->last_read_usec = now;

        r = proc_maps_read(as->pid, &maps);
        if (r == -ENOMEM)
                return r;
        if (r == -ESRCH)
                as->gone = true;
        if (r < 0)
                return 0;

        /* A process on its way out has no memory map left: keep the snapshot from its life. And a PID
         * may now belong to another process: its maps say nothing about ours. */
        if (maps->n == 0)
                as->gone = true;
        else if (as->start_time != 0) {
                r = read_start_time(as->pid, &start_time);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || start_time != as->start_time)
                        as->gone = true;
        }
        if (as->gone) {
                log_debug("Process %d is gone, keeping its last memory map", (int)as->pid);
                return 0;
        }

        files = calloc(maps->n, sizeof(FileEntry *));
        if (!files)
                return -ENOMEM;
        /* Mappings that did not change keep their file, so a dlopen() does not reopen every library. Both
         * lists are sorted by start. */
        for (size_t i = 0, j = 0; i < maps->n && j < as->maps->n;) {
                if (as->maps->maps[j].start < maps->maps[i].start)
                        j++;
                else if (as->maps->maps[j].start > maps->maps[i].start)
                        i++;
                else {
                        if (same_mapping(&as->maps->maps[j], &maps->maps[i])) {
                                files[i] = as->files[j];
                                file_ref(files[i]);
                        }
                        i++;
                        j++;
                }
        }

        for (size_t i = 0; i < as->maps->n; i++)
                file_unref(as->files[i]);
        proc_maps_free(as->maps);
        free(as->files);
        as->maps = TAKE_PTR(maps);
        as->files = TAKE_PTR(files);
        return 1;
}

static const char *mapping_module(const ProcMap *m)
{
        const char *slash;

        if (!m->path)
                return "[anon]";
        /* "[vdso]", "[heap]", "[anon:name]", and other names without a directory, as they are. */
        if (m->path[0] != '/')
                return m->path;
        slash = strrchr(m->path, '/');
        return slash[1] ? slash + 1 : m->path;
}

/* The mapping holding addr (NULL when none does), re-reading the maps on a miss. */
static int address_space_find(AddressSpace *as, uint64_t addr, const ProcMap **ret)
{
        const ProcMap *m;
        int r;

        m = proc_maps_find(as->maps, addr);
        if (!m) {
                r = address_space_reread(as);
                if (r < 0)
                        return r;
                if (r > 0)
                        m = proc_maps_find(as->maps, addr);
        }
        *ret = m;
        return 0;
}

/* Whether the file open at fd is the one entry was made from. */
static bool file_entry_is(const FileEntry *entry, int fd)
{
        struct stat st;

        return fstat(fd, &st) >= 0 && (uint64_t)st.st_dev == entry->key.dev &&
               (uint64_t)st.st_ino == entry->key.ino && (int64_t)st.st_size == entry->size &&
               st.st_mtim.tv_sec == entry->mtime.tv_sec && st.st_mtim.tv_nsec == entry->mtime.tv_nsec;
}

/* The cache entry of a file mapping, opening the file the first time. cfi: load its .eh_frame too, on first
 * use; with the file open already when the entry is new, else opened again. */
static int address_space_file(AddressSpace *as, const ProcMap *m, bool cfi, FileEntry **ret)
{
        _cleanup_close_ int fd = -1;
        size_t idx = (size_t)(m - as->maps->maps);
        FileEntry *entry = as->files[idx];
        uint64_t start;
        int r;

        if (!entry) {
                fd = open_mapping(as, m);
                if (fd < 0) {
                        log_debug_errno(fd, "Cannot open %s of process %d: %m", m->path, (int)as->pid);
                        entry = &file_unopenable;
                } else {
                        r = symbolizer_get_file(as->symbolizer, as, m, fd, &entry);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                entry = &file_unopenable;
                }
                as->files[idx] = entry;
                file_ref(entry);
        }

        if (cfi && entry->elf && !entry->eh_frame_loaded) {
                if (fd < 0) {
                        fd = open_mapping(as, m);
                        /* The path may name a newer file by now: its CFI would not be this code's. */
                        if (fd >= 0 && !file_entry_is(entry, fd))
                                fd = safe_close(fd);
                }
                start = now_usec(CLOCK_MONOTONIC);
                r = fd < 0 ? -ENOENT : eh_frame_load_fd(fd, &entry->eh_frame);
                entry->load_usec += now_usec(CLOCK_MONOTONIC) - start;
                if (r == -ENOMEM)
                        return r;
                symbolizer_note_read(as->symbolizer, r, "File", m->path);
                if (r < 0)
                        log_debug_errno(r, "No call frame information for %s of process %d: %m", m->path,
                                        (int)as->pid);
                entry->eh_frame_loaded = true;
                if (entry->eh_frame && !symbolizer_make_room(as->symbolizer, eh_frame_memory(entry->eh_frame)))
                        entry->eh_frame = eh_frame_free(entry->eh_frame);
                entry->bytes += eh_frame_memory(entry->eh_frame);
                as->symbolizer->used += eh_frame_memory(entry->eh_frame);
        }

        *ret = entry;
        return 0;
}

/* The perf map file of the process, read again when it changed since; checked at most every
 * PERF_MAP_CHECK_USEC. A process that is gone keeps the last one read. */
static int address_space_update_perf_map(AddressSpace *as)
{
        _cleanup_(perf_map_freep) PerfMap *map = NULL;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char path[128];
        struct stat st;
        int r;

        if (as->gone || (as->perf_map_checked_usec != 0 && now - as->perf_map_checked_usec < PERF_MAP_CHECK_USEC))
                return 0;
        as->perf_map_checked_usec = now;

        /* The JIT names the file after its PID in its own namespace, in its own /tmp. */
        if (as->nspid == 0) {
                r = proc_read_nstgid(as->pid, &as->nspid);
                if (r < 0) {
                        as->nspid = 0;
                        return 0;
                }
        }
        snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)as->pid, (int)as->nspid);
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        if (as->perf_map && st.st_ino == as->perf_map_stat.st_ino && st.st_dev == as->perf_map_stat.st_dev &&
            st.st_size == as->perf_map_stat.st_size && st.st_mtim.tv_sec == as->perf_map_stat.st_mtim.tv_sec &&
            st.st_mtim.tv_nsec == as->perf_map_stat.st_mtim.tv_nsec)
                return 0;

        r = perf_map_load(path, &map);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_debug_errno(r, "Cannot read %s: %m", path);
                return 0;
        }
        log_debug("Read %zu JIT symbols of process %d from %s", perf_map_count(map), (int)as->pid, path);
        perf_map_free(as->perf_map);
        as->perf_map = TAKE_PTR(map);
        as->perf_map_stat = st;
        return 0;
}

static int address_space_resolve_anonymous(AddressSpace *as, const ProcMap *m, uint64_t a, uint64_t adjust,
                                           const char *module, Symbol *ret)
{
        const char *name = NULL;
        uint64_t offset = 0;
        int r;

        if (m->executable) {
                r = address_space_update_perf_map(as);
                if (r < 0)
                        return r;
                name = perf_map_lookup(as->perf_map, a, &offset);
        }
        /* JIT code moves and is replaced, and its perf map grows: never cached. */
        *ret = (Symbol) { .module = module, .function = name, .offset = (name ? offset : a) + adjust,
                          .code = m->executable, .transient = m->executable };
        return 0;
}

static int address_space_resolve_vdso(AddressSpace *as, const ProcMap *m, uint64_t a, uint64_t adjust,
                                      const char *module, Symbol *ret)
{
        const char *name;
        uint64_t offset = 0;
        int r;

        /* The process's own vDSO (a 32-bit process or a container on another kernel has another one), read
         * once per mapping: an exec maps a new one. */
        if (as->vdso_start != m->start && !as->gone) {
                as->vdso = vdso_symbols_free(as->vdso);
                as->vdso_start = m->start;
                r = vdso_symbols_read(as->pid, m->start, m->end, &as->vdso);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug_errno(r, "Cannot read the vDSO of process %d: %m", (int)as->pid);
        }
        name = as->vdso_start == m->start ? vdso_symbols_lookup(as->vdso, a - m->start, &offset) : NULL;
        *ret = (Symbol) { .module = module, .function = name, .offset = (name ? offset : a - m->start) + adjust,
                          .code = m->executable };
        return 0;
}

int address_space_resolve(AddressSpace *as, uint64_t addr, bool return_address, Symbol *ret)
{
        /* A return address points after the call: the call itself, the instruction we are in, is before it.
         * The offset reported is still that of addr itself. */
        uint64_t adjust = return_address && addr > 0 ? 1 : 0, a = addr - adjust, file_offset, vaddr, offset;
        const ProcMap *m;
        FileEntry *entry;
        const char *module, *name;
        int r;

        if (!as || !ret)
                return -EINVAL;

        r = address_space_find(as, a, &m);
        if (r < 0)
                return r;
        if (!m) {
                *ret = (Symbol) { .module = "[unknown]", .function = NULL, .offset = addr };
                return 0;
        }

        module = mapping_module(m);
        if (!m->path || strncmp(m->path, "[anon", 5) == 0) {
                /* JIT code and the like: the absolute address is what a perf map file names. */
                return address_space_resolve_anonymous(as, m, a, adjust, module, ret);
        }
        if (strcmp(m->path, "[vdso]") == 0)
                return address_space_resolve_vdso(as, m, a, adjust, module, ret);
        if (m->path[0] != '/') {
                /* [vsyscall] and friends: relative to the mapping. */
                *ret = (Symbol) { .module = module, .function = NULL, .offset = addr - m->start,
                                  .code = m->executable };
                return 0;
        }

        file_offset = a - m->start + m->offset;
        r = address_space_file(as, m, false, &entry);
        if (r < 0)
                return r;

        /* Without symbols, the file offset is the module-relative position there is. */
        if (!entry->elf || elf_symbols_offset_to_vaddr(entry->elf, file_offset, &vaddr) < 0) {
                *ret = (Symbol) { .module = module, .function = NULL, .offset = file_offset + adjust,
                                  .code = m->executable };
                return 0;
        }

        name = elf_symbols_lookup(entry->elf, vaddr, &offset);
        *ret = (Symbol) { .module = module, .function = name, .offset = (name ? offset : vaddr) + adjust,
                          .code = m->executable };
        return 0;
}

int address_space_unwind_step(AddressSpace *as, const UnwindRegs *regs, bool return_address,
                              const uint64_t *window, size_t n_words, UnwindRegs *ret_caller)
{
        /* A caller's frame is at its call instruction, before the return address. */
        uint64_t ip = regs->ip - (return_address && regs->ip > 0 ? 1 : 0), vaddr;
        const ProcMap *m;
        FileEntry *entry;
        int r;

        if (!as || (!window && n_words > 0) || !ret_caller)
                return -EINVAL;

        r = address_space_find(as, ip, &m);
        if (r < 0)
                return r;
        /* JIT code and the vDSO have no file to read CFI from. */
        if (!m || !m->executable || !m->path || m->path[0] != '/')
                return -ENOENT;
        r = address_space_file(as, m, true, &entry);
        if (r < 0)
                return r;
        if (!entry->eh_frame)
                return -ENOENT;

        /* The bias of the segment holding ip, as symbols are looked up; entry->eh_frame implies entry->elf. */
        r = elf_symbols_offset_to_vaddr(entry->elf, ip - m->start + m->offset, &vaddr);
        if (r < 0)
                return r;
        return eh_frame_unwind_step(entry->eh_frame, ip - vaddr,
                                    &(UnwindRegs) { .ip = ip, .sp = regs->sp, .bp = regs->bp }, window, n_words,
                                    ret_caller);
}

int address_space_unwind_leaf(AddressSpace *as, uint64_t ip, uint64_t sp, uint64_t bp, const uint64_t *window,
                              size_t n_words, uint64_t *ret_return_address)
{
        UnwindRegs caller;
        int r;

        if (!ret_return_address)
                return -EINVAL;
        r = address_space_unwind_step(as, &(UnwindRegs) { .ip = ip, .sp = sp, .bp = bp }, false, window, n_words,
                                      &caller);
        if (r < 0)
                return r;
        *ret_return_address = caller.ip;
        return 0;
}

static void file_info_fill(const ProcMap *m, const FileEntry *entry, FileInfo *ret)
{
        *ret = (FileInfo) {
                .module = mapping_module(m),
                .path = m->path,
                .source = entry->source,
                .debug_file = entry->debug_file,
                .build_id = elf_symbols_build_id(entry->elf),
                .n_symbols = elf_symbols_count(entry->elf),
                .load_usec = entry->load_usec,
        };
}

int address_space_file_info(AddressSpace *as, uint64_t addr, FileInfo *ret)
{
        const ProcMap *m;
        FileEntry *entry;
        int r;

        if (!as || !ret)
                return -EINVAL;
        r = address_space_find(as, addr, &m);
        if (r < 0)
                return r;
        if (!m || !m->path || m->path[0] != '/')
                return -ENOENT;
        r = address_space_file(as, m, false, &entry);
        if (r < 0)
                return r;
        file_info_fill(m, entry, ret);
        return 0;
}

int address_space_module_info(AddressSpace *as, const char *module, FileInfo *ret)
{
        if (!as || !module || !ret)
                return -EINVAL;
        for (size_t i = 0; i < as->maps->n; i++) {
                const ProcMap *m = &as->maps->maps[i];
                FileEntry *entry;
                int r;

                if (!m->path || m->path[0] != '/' || strcmp(mapping_module(m), module) != 0)
                        continue;
                r = address_space_file(as, m, false, &entry);
                if (r < 0)
                        return r;
                file_info_fill(m, entry, ret);
                return 0;
        }
        return -ENOENT;
}
