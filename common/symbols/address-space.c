/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "address-space-internal.h"
#include "elf-symbols.h"
#include "log.h"
#include "open-util.h"
#include "perf-map.h"
#include "proc-info.h"
#include "proc-maps.h"
#include "symbolizer-internal.h"
#include "time-util.h"
#include "vdso-symbols.h"

/* An address outside every known mapping makes us re-read /proc/PID/maps, but not more than once in this
 * interval per address space: a broken frame-pointer chain yields a stream of garbage addresses, and each
 * would otherwise cost a read of the maps file. 100 ms is short next to the time between a dlopen() and the
 * daemon's next drain of samples, so code mapped since the last read is found on the next miss after it. */
#define REREAD_INTERVAL_USEC (100 * USEC_PER_MSEC)

/* How often a process's perf map file is looked at for changes, while its JIT code is being sampled. */
#define PERF_MAP_CHECK_USEC USEC_PER_SEC

/* Marks a mapping whose file could not be opened, in AddressSpace.files. Never written: it has no ELF, and
 * only a file with one gets an attachment loaded. */
static FileEntry file_unopenable = { .attachment_loaded = true };


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

/* Whether the file at fd is the one that the mapping shows; a path may name another file by now. */
static bool same_inode(int fd, const ProcMap *m)
{
        struct stat st;

        return fstat(fd, &st) >= 0 && (m->inode == 0 || (uint64_t)st.st_ino == m->inode);
}

/* Open the file of a mapping: through map_files, which reaches a deleted file and one in another mount
 * namespace but needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE) and a live process; else by the path as the
 * process sees it under its root; else by the path as we see it. Each is checked against the mapping's inode
 * number, as it may be a different file (a package upgrade, another namespace, another mapping there by now). Only a regular
 * file is opened for reading (open-util.h): the path is the target's to turn into a FIFO or a device
 * meanwhile. */
int address_space_open_mapping(const AddressSpace *as, const ProcMap *m)
{
        char path[PATH_MAX + 64];
        int fd, k;

        if (!as->gone) {
                snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)as->pid,
                         m->start, m->end);
                fd = open_regular(path, 0);
                /* The file mapped there now, which a snapshot kept by changes in order (a library unloaded
                 * and another loaded at its address) may not have yet. */
                if (fd >= 0 && same_inode(fd, m))
                        return fd;
                safe_close(fd);
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

        assert(s);
        assert(ret);

        if (pid <= 0)
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
        as->generation = as->last_read_usec;

        *ret = TAKE_PTR(as);
        return 0;
}

int address_space_clone(const AddressSpace *from, pid_t pid, uint64_t start_time, AddressSpace **ret)
{
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        int r;

        assert(from);
        assert(ret);

        if (pid <= 0)
                return -EINVAL;
        as = calloc(1, sizeof(*as));
        if (!as)
                return -ENOMEM;
        as->symbolizer = from->symbolizer;
        as->pid = pid;
        as->start_time = start_time;
        r = proc_maps_copy(from->maps, &as->maps);
        if (r < 0)
                return r;
        as->files = calloc(MAX(as->maps->n, (size_t)1), sizeof(FileEntry *));
        if (!as->files)
                return -ENOMEM;
        /* The files the parent opened already, shared; so is its vDSO, which a fork keeps at the same address
         * (an exec maps a new one: address_space_resolve_vdso() reads it again). A perf map is the child's own,
         * found on use. */
        for (size_t i = 0; i < as->maps->n; i++) {
                as->files[i] = from->files[i];
                file_ref(as->files[i]);
        }
        as->vdso = vdso_symbols_ref(from->vdso);
        as->vdso_start = from->vdso_start;
        as->last_read_usec = from->last_read_usec;
        as->generation = now_usec(CLOCK_MONOTONIC);
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
        for (size_t i = 0; i < MIN(as->n_known, (size_t)KNOWN_FILES_MAX); i++)
                free(as->known[i].path);
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

static const KnownFile *known_file(const AddressSpace *as, uint32_t dev_major, uint32_t dev_minor, uint64_t inode)
{
        for (size_t i = 0; i < MIN(as->n_known, (size_t)KNOWN_FILES_MAX); i++)
                if (as->known[i].inode == inode && as->known[i].dev_major == dev_major &&
                    as->known[i].dev_minor == dev_minor)
                        return &as->known[i];
        return NULL;
}

/* The files of m's executable mappings remembered, for when they are mapped again. Out of memory, one is not. */
static void remember_files(AddressSpace *as, const ProcMaps *m)
{
        for (size_t i = 0; i < m->n; i++) {
                const ProcMap *p = &m->maps[i];
                KnownFile *k;
                char *path;

                if (!p->executable || !p->path || p->path[0] != '/' || p->deleted || p->inode == 0 ||
                    known_file(as, p->dev_major, p->dev_minor, p->inode))
                        continue;
                path = strdup(p->path);
                if (!path)
                        return;
                k = &as->known[as->n_known++ % KNOWN_FILES_MAX];
                if (as->n_known > KNOWN_FILES_MAX)
                        free(k->path);
                *k = (KnownFile){ .inode = p->inode, .dev_major = p->dev_major, .dev_minor = p->dev_minor,
                                  .path = path };
        }
}

/* The snapshot replaced by maps, which it takes on success. */
static int address_space_replace(AddressSpace *as, ProcMaps *maps)
{
        _cleanup_free_ FileEntry **files = NULL;

        files = calloc(MAX(maps->n, (size_t)1), sizeof(FileEntry *));
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

        remember_files(as, as->maps);
        for (size_t i = 0; i < as->maps->n; i++)
                file_unref(as->files[i]);
        proc_maps_free(as->maps);
        free(as->files);
        as->maps = maps;
        as->files = TAKE_PTR(files);
        return 0;
}

/* Re-read the maps of a process that is still there: 1 when the snapshot was replaced, 0 when it stays. */
static int address_space_reread(AddressSpace *as)
{
        _cleanup_(proc_maps_freep) ProcMaps *maps = NULL;
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
        if (as->follows_changes) {
                ProcMaps *merged = NULL;

                r = proc_maps_merge(as->maps, maps, &merged);
                if (r < 0)
                        return r;
                proc_maps_free(maps);
                maps = merged;
        }
        r = address_space_replace(as, maps);
        if (r < 0)
                return r;
        TAKE_PTR(maps);
        as->generation = MAX(now, as->generation + 1);
        return 1;
}


int address_space_apply(AddressSpace *as, const AddressSpaceChange *c)
{
        ProcMapChange change = { .start = c->start, .end = c->end, .offset = c->offset, .inode = c->inode,
                                 .dev_major = c->dev_major, .dev_minor = c->dev_minor };
        _cleanup_(proc_maps_freep) ProcMaps *maps = NULL;
        const KnownFile *k = NULL;
        int r;

        assert(as);

        if (c->mapped) {
                /* The file of a mapping now, else of an earlier snapshot. */
                for (size_t i = 0; i < as->maps->n && !change.path; i++) {
                        const ProcMap *p = &as->maps->maps[i];

                        if (p->inode == c->inode && p->dev_major == c->dev_major && p->dev_minor == c->dev_minor &&
                            p->path && p->path[0] == '/' && !p->deleted)
                                change.path = p->path;
                }
                if (!change.path && (k = known_file(as, c->dev_major, c->dev_minor, c->inode)))
                        change.path = k->path;
                if (!change.path)
                        return -ENOENT;
        }
        r = proc_maps_apply(as->maps, &change, &maps);
        if (r < 0)
                return r;
        r = address_space_replace(as, maps);
        if (r < 0)
                return r;
        TAKE_PTR(maps);
        as->generation = MAX(now_usec(CLOCK_MONOTONIC), as->generation + 1);
        as->follows_changes = true;
        return 0;
}

const char *address_space_mapping_module(const ProcMap *m)
{
        const char *slash;

        if (!m->name)
                return "[anon]";
        /* "[vdso]", "[heap]", "[anon:name]", and other names without a directory, as they are; escaped
         * (ProcMap.name), as the tables take them. */
        if (m->name[0] != '/')
                return m->name;
        slash = strrchr(m->name, '/');
        return slash[1] ? slash + 1 : m->name;
}

/* The mapping holding addr (NULL when none does), re-reading the maps on a miss. */
int address_space_find(AddressSpace *as, uint64_t addr, const ProcMap **ret)
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
bool address_space_file_entry_is(const FileEntry *entry, int fd)
{
        struct stat st;

        return fstat(fd, &st) >= 0 && (uint64_t)st.st_dev == entry->key.dev &&
               (uint64_t)st.st_ino == entry->key.ino && (int64_t)st.st_size == entry->size &&
               st.st_mtim.tv_sec == entry->mtime.tv_sec && st.st_mtim.tv_nsec == entry->mtime.tv_nsec;
}

/* The root of the process, to look for its debug files under: NULL once it is gone (ours is the best guess
 * then). */
const char *address_space_root(const AddressSpace *as, char buf[static 64])
{
        if (as->gone)
                return NULL;
        snprintf(buf, 64, "/proc/%d/root", (int)as->pid);
        return buf;
}

/* The cache entry of a file mapping, opening the file the first time. type: load its attachment of that type
 * too, on first use; with the file open already when the entry is new, else opened again. */
int address_space_file(AddressSpace *as, const ProcMap *m, const FileAttachmentType *type, FileEntry **ret)
{
        _cleanup_close_ int fd = -1;
        size_t idx = (size_t)(m - as->maps->maps);
        FileEntry *entry = as->files[idx];
        char root[64];
        int r;

        if (!entry) {
                fd = address_space_open_mapping(as, m);
                if (fd < 0) {
                        log_debug_errno(fd, "Cannot open %s of process %d: %m", m->path, (int)as->pid);
                        entry = &file_unopenable;
                } else {
                        r = symbolizer_get_file(as->symbolizer, fd, m->path, address_space_root(as, root),
                                                &entry);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                entry = &file_unopenable;
                }
                as->files[idx] = entry;
                file_ref(entry);
        }

        if (type && entry->elf && !entry->attachment_loaded) {
                if (fd < 0) {
                        fd = address_space_open_mapping(as, m);
                        /* The path may name a newer file by now: its data would not be this code's. */
                        if (fd >= 0 && !address_space_file_entry_is(entry, fd))
                                fd = safe_close(fd);
                }
                r = symbolizer_load_attachment(as->symbolizer, entry, type, fd, m->path,
                                               address_space_root(as, root));
                if (r < 0)
                        return r;
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

        assert(as);
        assert(ret);

        r = address_space_find(as, a, &m);
        if (r < 0)
                return r;
        if (!m) {
                *ret = (Symbol) { .module = "[unknown]", .function = NULL, .offset = addr };
                return 0;
        }

        module = address_space_mapping_module(m);
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
        r = address_space_file(as, m, NULL, &entry);
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

const ProcMaps *address_space_maps(const AddressSpace *as, uint64_t *ret_generation)
{
        assert(as);

        if (ret_generation)
                *ret_generation = as->generation;
        return as->maps;
}

int address_space_refresh(AddressSpace *as)
{
        assert(as);

        return address_space_reread(as);
}

int address_space_reload(AddressSpace *as)
{
        assert(as);

        /* The state now, whole: what the caller was told of comes before it. */
        as->follows_changes = false;
        as->last_read_usec = 0;
        return address_space_reread(as);
}

int address_space_code_attachment(AddressSpace *as, uint64_t addr, const FileAttachmentType *type,
                                  const void **ret_data, uint64_t *ret_bias)
{
        const ProcMap *m;
        FileEntry *entry;
        uint64_t vaddr;
        int r;

        assert(as);
        assert(type);
        assert(ret_data);
        assert(ret_bias);

        r = address_space_find(as, addr, &m);
        if (r < 0)
                return r;
        /* JIT code and the vDSO have no file to read from. */
        if (!m || !m->executable || !m->path || m->path[0] != '/')
                return -ENOENT;
        r = address_space_file(as, m, type, &entry);
        if (r < 0)
                return r;
        if (!entry->attachment)
                return -ENOENT;
        assert(entry->attachment_type == type);

        /* The bias of the segment holding addr, as symbols are looked up; an attachment implies entry->elf. */
        r = elf_symbols_offset_to_vaddr(entry->elf, addr - m->start + m->offset, &vaddr);
        if (r < 0)
                return r;
        *ret_data = entry->attachment;
        *ret_bias = addr - vaddr;
        return 0;
}
