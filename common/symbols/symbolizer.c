/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "debug-file.h"
#include "elf-symbols.h"
#include "hashmap.h"
#include "kallsyms.h"
#include "log.h"
#include "open-util.h"
#include "symbolizer-internal.h"
#include "symbolizer.h"
#include "time-util.h"

/* The file cache (by device and inode, for every address space) and kernel symbols; address-space.c holds
 * the processes' mappings of the cached files. */

#define KALLSYMS_PATH "/proc/kallsyms"

/* kallsyms is read again for an address no symbol covers (a module loaded since), but not more often than
 * this: reading it takes tens of milliseconds, and an address in a gap between modules never resolves. */
#define KALLSYMS_REREAD_USEC (10 * USEC_PER_SEC)

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
        if (e->attachment)
                e->attachment_type->free(e->attachment);
        free(e);
}

int symbolizer_new(Symbolizer **ret)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;

        assert(ret);

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
        assert(s);

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

size_t symbolizer_kallsyms_memory(const Symbolizer *s)
{
        return kallsyms_memory(s->kallsyms);
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

/* r from reading a file of a target for symbols or an attachment: -EIO means that the file changed while it
 * was read (truncated, rewritten in place), and what was read of it is dropped. Counted, for the daemon to
 * tell. */
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

        assert(s);

        if (dir && dir[0] != '/')
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
        assert(s);

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

        assert(s);
        assert(path);

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

        assert(s);
        assert(ret);

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
static int file_entry_fetch_debug_file(Symbolizer *s, const char *path, FileEntry *entry)
{
        _cleanup_free_ char *debug_path = NULL;
        int r;

        r = s->debug_fetch(elf_symbols_build_id(entry->elf), path ?: "?", &debug_path,
                           s->debug_fetch_userdata);
        if (r <= 0)
                return r;
        return file_entry_use_downloaded(s, entry, debug_path);
}

int symbolizer_add_debug_file(Symbolizer *s, const char *build_id, const char *path)
{
        int n = 0, r;

        assert(s);
        assert(build_id);
        assert(path);

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
static int file_entry_load_debug_symbols(Symbolizer *s, const char *path, const char *root, int fd,
                                         FileEntry *entry)
{
        DebugSearch d = { .symbolizer = s, .entry = entry, .root = root };
        DebugFileQuery q;
        uint32_t crc = 0;
        int r;

        q = (DebugFileQuery) {
                .root = root,
                .debug_dir = symbolizer_debug_directory(s),
                .binary_path = path && path[0] == '/' ? path : NULL,
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
                r = file_entry_fetch_debug_file(s, path, entry);
                if (r != 0)
                        return r;
        }

        if (elf_symbols_has_minidebuginfo(entry->elf)) {
                r = elf_symbols_use_minidebuginfo(entry->elf, fd);
                if (r == -ENOMEM)
                        return r;
                symbolizer_note_read(s, r, "File", path);
                if (r < 0)
                        log_debug_errno(r, "Cannot read the MiniDebugInfo of %s: %m", path ?: "?");
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

int symbolizer_get_file(Symbolizer *s, int fd, const char *path, const char *root, FileEntry **ret)
{
        _cleanup_free_ FileEntry *entry = NULL;
        FileEntry *old, **entries;
        struct stat st;
        uint64_t start;
        int r;

        assert(s);
        assert(fd >= 0);
        assert(ret);

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
        symbolizer_note_read(s, r, "File", path);
        if (r < 0)
                log_debug_errno(r, "Cannot read symbols of file %" PRIu64 ":%" PRIu64 ": %m", entry->key.dev,
                                entry->key.ino);
        if (entry->elf) {
                entry->source = source_of(entry->elf);
                if (entry->source != SYMBOL_SOURCE_SYMTAB) {
                        r = file_entry_load_debug_symbols(s, path, root, fd, entry);
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
        log_debug("Symbols of %s: %zu from %s in %.1f ms, %zu KiB.", path ?: "?",
                  elf_symbols_count(entry->elf), symbol_source_to_string(entry->source),
                  (double)entry->load_usec / USEC_PER_MSEC, entry->bytes >> 10);

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

static int take_debug_fd(int fd, DebugFileKind kind _unused_, const char *path _unused_, void *userdata)
{
        int *ret = userdata;

        *ret = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        return *ret < 0 ? negative_errno() : 1;
}

int symbolizer_open_debug_file(Symbolizer *s, const FileEntry *entry, const char *root)
{
        DebugFileQuery q;
        int fd = -1, r;

        if (entry->debug_file) {
                fd = entry->source == SYMBOL_SOURCE_DEBUGINFOD ? open_regular(entry->debug_file, 0)
                                                               : debug_file_open(root, entry->debug_file);
                if (fd < 0)
                        log_debug_errno(fd, "Cannot open debug file %s again: %m", entry->debug_file);
                return fd == -ENOMEM ? fd : MAX(fd, -1);
        }
        if (entry->source != SYMBOL_SOURCE_SYMTAB || !elf_symbols_build_id(entry->elf))
                return -1;
        q = (DebugFileQuery) {
                .root = root,
                .debug_dir = symbolizer_debug_directory(s),
                .binary_dev = (dev_t)entry->key.dev,
                .binary_ino = (ino_t)entry->key.ino,
                .build_id = elf_symbols_build_id(entry->elf),
        };
        r = debug_file_find(&q, take_debug_fd, &fd);
        if (r == -ENOMEM)
                return r;
        return r > 0 ? fd : -1;
}

int symbolizer_load_attachment(Symbolizer *s, FileEntry *entry, const FileAttachmentType *type, int fd,
                               const char *path, const char *root)
{
        _cleanup_close_ int debug_fd = -1;
        uint64_t start;
        size_t bytes = 0;
        void *data = NULL;
        int r;

        assert(s);
        assert(entry);
        assert(type);

        if (entry->attachment_loaded)
                return 0;
        start = now_usec(CLOCK_MONOTONIC);
        if (fd >= 0 && type->load_with_debug) {
                debug_fd = symbolizer_open_debug_file(s, entry, root);
                if (debug_fd == -ENOMEM)
                        return debug_fd;
                r = type->load_with_debug(fd, debug_fd, &data, &bytes);
        } else
                r = fd < 0 ? -ENOENT : type->load(fd, &data, &bytes);
        entry->load_usec += now_usec(CLOCK_MONOTONIC) - start;
        if (r == -ENOMEM)
                return r;
        symbolizer_note_read(s, r, "File", path);
        if (r < 0)
                log_debug_errno(r, "No %s for %s: %m", type->name, path ?: "?");
        entry->attachment_loaded = true;
        if (r < 0 || !data)
                return 0;
        if (!symbolizer_make_room(s, bytes)) {
                type->free(data);
                return 0;
        }
        entry->attachment_type = type;
        entry->attachment = data;
        entry->bytes += bytes;
        s->used += bytes;
        return 0;
}
