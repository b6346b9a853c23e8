/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "proc-maps.h"
#include "utf8.h"

#define DELETED_SUFFIX " (deleted)"
/* The kernel writes the file, but the process names its files: 65530 mappings (vm.max_map_count) of paths of
 * 4 KiB would make 268 MB, read again on every miss. A real process's maps are a few MiB at most. */
#define MAPS_MAX ((size_t)64 << 20)

/* The public struct and, behind it, one blob holding every path, so that a snapshot is two allocations. */
typedef struct ProcMapsBlob {
        ProcMaps pub;
        char strings[];
} ProcMapsBlob;

static int parse_hex(const char **p, char terminator, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        if (!((**p >= '0' && **p <= '9') || (**p >= 'a' && **p <= 'f') || (**p >= 'A' && **p <= 'F')))
                return -EINVAL;
        errno = 0;
        v = strtoull(*p, &end, 16);
        if (errno != 0 || *end != terminator)
                return -EINVAL;
        *ret = v;
        *p = end + 1;
        return 0;
}

/* One line of the text, not NUL-terminated (len bytes): "start-end perms offset major:minor inode [path]".
 * strtoull cannot run past the line: every number is checked to start with a digit, so no leading newline is
 * skipped, and the newline after the line stops it. The path comes back as an offset into the line and a
 * length, its " (deleted)" suffix already cut off. */
static int parse_line(const char *line, size_t len, ProcMap *ret, size_t *ret_path_offset,
                      size_t *ret_path_len)
{
        ProcMap m = {};
        const char *p = line, *path;
        uint64_t major, minor;
        unsigned long long inode;
        char *end;
        size_t n;

        if (parse_hex(&p, '-', &m.start) < 0 || parse_hex(&p, ' ', &m.end) < 0 || m.end < m.start)
                return -EINVAL;
        if ((size_t)(p - line) + 5 > len || p[4] != ' ')
                return -EINVAL;
        m.readable = p[0] == 'r';
        m.writable = p[1] == 'w';
        m.executable = p[2] == 'x';
        p += 5;
        if (parse_hex(&p, ' ', &m.offset) < 0 || parse_hex(&p, ':', &major) < 0 ||
            parse_hex(&p, ' ', &minor) < 0)
                return -EINVAL;
        if (major > UINT32_MAX || minor > UINT32_MAX || (size_t)(p - line) > len)
                return -EINVAL;
        m.dev_major = (uint32_t)major;
        m.dev_minor = (uint32_t)minor;
        if (*p < '0' || *p > '9')
                return -EINVAL;
        errno = 0;
        inode = strtoull(p, &end, 10);
        if (errno != 0 || (size_t)(end - line) > len || (*end != ' ' && (size_t)(end - line) != len))
                return -EINVAL;
        m.inode = inode;

        /* The kernel pads to a column with spaces; everything after them, spaces included, is the path. */
        path = end;
        while ((size_t)(path - line) < len && *path == ' ')
                path++;
        n = len - (size_t)(path - line);
        if (n >= strlen(DELETED_SUFFIX) &&
            memcmp(path + n - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX)) == 0) {
                m.deleted = true;
                n -= strlen(DELETED_SUFFIX);
        }

        *ret = m;
        *ret_path_offset = (size_t)(path - line);
        *ret_path_len = n;
        return 0;
}

static int map_compare(const void *a, const void *b)
{
        const ProcMap *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

typedef struct PathRef {
        size_t offset; /* into the text */
        size_t len;    /* 0: anonymous */
        bool same_as_previous;
        bool escape;   /* not its own escape: the blob holds both */
} PathRef;

int proc_maps_parse(const char *text, ProcMaps **ret)
{
        _cleanup_free_ ProcMap *maps = NULL;
        _cleanup_free_ PathRef *paths = NULL;
        size_t n = 0, allocated = 0, strings_size = 0, used = 0;
        ProcMapsBlob *blob;
        bool sorted = true;

        assert(text);
        assert(ret);

        /* First pass: parse, and count the bytes the paths need. */
        for (const char *p = text; *p;) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) : strlen(p), path_offset, path_len;
                ProcMap m;
                int r;

                if (len == 0) {
                        p++;
                        continue;
                }
                r = parse_line(p, len, &m, &path_offset, &path_len);
                if (r < 0)
                        return r;

                if (n == allocated) {
                        size_t a = MAX(allocated * 2, (size_t)64);
                        ProcMap *nm;
                        PathRef *np;

                        nm = realloc(maps, a * sizeof(*maps));
                        if (!nm)
                                return -ENOMEM;
                        maps = nm;
                        np = realloc(paths, a * sizeof(*paths));
                        if (!np)
                                return -ENOMEM;
                        paths = np;
                        allocated = a;
                }
                if (n > 0 && m.start < maps[n - 1].start)
                        sorted = false;
                maps[n] = m;
                paths[n] = (PathRef) { .offset = (size_t)(p - text) + path_offset, .len = path_len };
                /* Consecutive mappings of one file (text, data, relro...) share one copy of its path. */
                paths[n].same_as_previous = path_len > 0 && n > 0 && paths[n - 1].len == path_len &&
                                            memcmp(text + paths[n - 1].offset, text + paths[n].offset,
                                                   path_len) == 0;
                /* Any bytes but NUL and newline name a file: the name shown is escaped once, here. */
                if (path_len > 0 && !paths[n].same_as_previous) {
                        strings_size += path_len + 1;
                        paths[n].escape = !utf8_is_printable(text + paths[n].offset, path_len);
                        if (paths[n].escape)
                                strings_size += UTF8_ESCAPED_MAX(path_len) + 1;
                }
                n++;
                p += len + (eol ? 1 : 0);
        }

        blob = malloc(sizeof(ProcMapsBlob) + strings_size);
        if (!blob)
                return -ENOMEM;

        /* Second pass: copy the paths into the blob. */
        for (size_t i = 0; i < n; i++) {
                if (paths[i].len == 0)
                        maps[i].path = maps[i].name = NULL;
                else if (paths[i].same_as_previous) {
                        maps[i].path = maps[i - 1].path;
                        maps[i].name = maps[i - 1].name;
                } else {
                        maps[i].path = maps[i].name = blob->strings + used;
                        memcpy(maps[i].path, text + paths[i].offset, paths[i].len);
                        maps[i].path[paths[i].len] = '\0';
                        used += paths[i].len + 1;
                        if (paths[i].escape) {
                                maps[i].name = blob->strings + used;
                                utf8_escape_buf(maps[i].path, paths[i].len, maps[i].name,
                                                UTF8_ESCAPED_MAX(paths[i].len) + 1);
                                used += strlen(maps[i].name) + 1;
                        }
                }
        }

        /* The kernel lists mappings in order; a hand-written text might not. */
        if (!sorted)
                qsort(maps, n, sizeof(*maps), map_compare);

        /* A snapshot lives as long as its target: give back what the doubling left unused. */
        if (n > 0 && n < allocated) {
                ProcMap *nm = realloc(maps, n * sizeof(*maps));
                if (nm)
                        maps = nm;
        }

        blob->pub.n = n;
        blob->pub.maps = TAKE_PTR(maps);
        *ret = &blob->pub;
        return 0;
}

/* The whole file, at most MAPS_MAX bytes (-EFBIG past them). */
static int read_all(int fd, char **ret)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        for (;;) {
                ssize_t k;

                if (allocated - size < 4096) {
                        size_t a = MAX(allocated * 2, (size_t)16384);
                        char *b;

                        if (size > MAPS_MAX)
                                return -EFBIG;
                        b = realloc(buf, a);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        allocated = a;
                }
                k = read(fd, buf + size, allocated - size - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                size += (size_t)k;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

int proc_maps_read(pid_t pid, ProcMaps **ret)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *text = NULL;
        char path[64];
        int r;

        assert(ret);

        if (pid <= 0)
                return -EINVAL;

        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        r = read_all(fd, &text);
        if (r < 0)
                return r;
        return proc_maps_parse(text, ret);
}

const ProcMap *proc_maps_find(const ProcMaps *m, uint64_t addr)
{
        size_t lo;

        if (!m)
                return NULL;
        /* The last mapping with start <= addr, if it reaches addr. */
        lo = ARRAY_UPPER_BOUND(m->maps, m->n, start, addr);
        if (lo == 0)
                return NULL;
        return addr < m->maps[lo - 1].end ? &m->maps[lo - 1] : NULL;
}

int proc_maps_copy(const ProcMaps *m, ProcMaps **ret)
{
        _cleanup_free_ ProcMap *maps = NULL;
        size_t strings_size = 0, used = 0;
        ProcMapsBlob *blob;

        assert(m);
        assert(ret);

        /* The same layout as a parse's: the paths in the blob, a run of one file's mappings sharing one. */
        for (size_t i = 0; i < m->n; i++)
                if (m->maps[i].path && (i == 0 || m->maps[i].path != m->maps[i - 1].path)) {
                        strings_size += strlen(m->maps[i].path) + 1;
                        if (m->maps[i].name != m->maps[i].path)
                                strings_size += strlen(m->maps[i].name) + 1;
                }
        maps = malloc(MAX(m->n, (size_t)1) * sizeof(*maps));
        if (!maps)
                return -ENOMEM;
        blob = malloc(sizeof(ProcMapsBlob) + strings_size);
        if (!blob)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
                maps[i] = m->maps[i];
                if (!m->maps[i].path)
                        continue;
                if (i > 0 && m->maps[i].path == m->maps[i - 1].path) {
                        maps[i].path = maps[i - 1].path;
                        maps[i].name = maps[i - 1].name;
                } else {
                        size_t len = strlen(m->maps[i].path) + 1;

                        maps[i].path = maps[i].name = memcpy(blob->strings + used, m->maps[i].path, len);
                        used += len;
                        if (m->maps[i].name != m->maps[i].path) {
                                len = strlen(m->maps[i].name) + 1;
                                maps[i].name = memcpy(blob->strings + used, m->maps[i].name, len);
                                used += len;
                        }
                }
        }
        blob->pub.n = m->n;
        blob->pub.maps = TAKE_PTR(maps);
        *ret = &blob->pub;
        return 0;
}

static void print_map(FILE *f, uint64_t start, uint64_t end, const ProcMap *m, uint64_t offset)
{
        fprintf(f, "%" PRIx64 "-%" PRIx64 " %c%c%cp %08" PRIx64 " %02" PRIx32 ":%02" PRIx32 " %" PRIu64 "%s%s%s\n",
                start, end, m->readable ? 'r' : '-', m->writable ? 'w' : '-', m->executable ? 'x' : '-', offset,
                m->dev_major, m->dev_minor, m->inode, m->path ? "                    " : "", m->path ?: "",
                m->deleted ? DELETED_SUFFIX : "");
}

/* Written as the kernel writes the file and parsed back: one parser, one layout of the result. */
int proc_maps_apply(const ProcMaps *m, const ProcMapChange *c, ProcMaps **ret)
{
        const ProcMap new_map = { .start = c->start, .end = c->end, .offset = c->offset, .inode = c->inode,
                                  .dev_major = c->dev_major, .dev_minor = c->dev_minor, .readable = true,
                                  .executable = true, .path = (char *)c->path };
        _cleanup_free_ char *text = NULL;
        bool added = !c->path;
        size_t size = 0;
        FILE *f;
        int r;

        assert(m);
        assert(c);
        assert(ret);

        if (c->start >= c->end || (c->path && strchr(c->path, '\n')))
                return -EINVAL;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i <= m->n; i++) {
                const ProcMap *p = i < m->n ? &m->maps[i] : NULL;

                if (p && p->path && strchr(p->path, '\n'))
                        continue; /* cannot be written back; a miss there reads the maps again */
                if (p && p->end <= c->start) {
                        print_map(f, p->start, p->end, p, p->offset);
                        continue;
                }
                if (p && p->start < c->start)
                        print_map(f, p->start, c->start, p, p->offset);
                if (!added) {
                        print_map(f, c->start, c->end, &new_map, c->offset);
                        added = true;
                }
                if (!p)
                        break;
                if (p->start >= c->end)
                        print_map(f, p->start, p->end, p, p->offset);
                else if (p->end > c->end)
                        print_map(f, c->end, p->end, p, p->offset + (c->end - p->start));
        }
        r = fflush(f) == 0 && !ferror(f) ? 0 : -ENOMEM;
        fclose(f);
        if (r < 0)
                return r;
        return proc_maps_parse(text, ret);
}

int proc_maps_merge(const ProcMaps *m, const ProcMaps *fresh, ProcMaps **ret)
{
        _cleanup_free_ char *text = NULL;
        size_t size = 0, j = 0;
        FILE *f;
        int r;

        assert(m);
        assert(fresh);
        assert(ret);

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        /* Both sorted by start: one pass, the fresh mapping kept only where m has none. */
        for (size_t i = 0; i < fresh->n; i++) {
                const ProcMap *p = &fresh->maps[i];

                while (j < m->n && m->maps[j].end <= p->start) {
                        if (!m->maps[j].path || !strchr(m->maps[j].path, '\n'))
                                print_map(f, m->maps[j].start, m->maps[j].end, &m->maps[j], m->maps[j].offset);
                        j++;
                }
                if ((j < m->n && m->maps[j].start < p->end) || (p->path && strchr(p->path, '\n')))
                        continue;
                print_map(f, p->start, p->end, p, p->offset);
        }
        for (; j < m->n; j++)
                if (!m->maps[j].path || !strchr(m->maps[j].path, '\n'))
                        print_map(f, m->maps[j].start, m->maps[j].end, &m->maps[j], m->maps[j].offset);
        r = fflush(f) == 0 && !ferror(f) ? 0 : -ENOMEM;
        fclose(f);
        if (r < 0)
                return r;
        return proc_maps_parse(text, ret);
}

ProcMaps *proc_maps_free(ProcMaps *m)
{
        if (!m)
                return NULL;
        free(m->maps);
        /* pub is the first member of the blob. */
        free((ProcMapsBlob *)m);
        return NULL;
}
