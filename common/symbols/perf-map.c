/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array-util.h"
#include "open-util.h"
#include "perf-map.h"
#include "utf8.h"

/* A JIT's perf map grows with every function it compiles: tens of MiB after days. Bigger is refused. */
#define PERF_MAP_MAX (UINT64_C(256) << 20)

typedef struct PerfMapEntry {
        uint64_t start;
        uint64_t size;
        char *name;
        size_t line; /* the later of two entries at one start wins */
} PerfMapEntry;

struct PerfMap {
        PerfMapEntry *entries;
        size_t n;
};

static int entry_compare(const void *a, const void *b)
{
        const PerfMapEntry *x = a, *y = b;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->line < y->line ? -1 : x->line > y->line;
}

/* "7f0000001000 40 jit_hot_loop": 0 and the fields, or -EINVAL. Cuts line at the name's end. */
static int parse_line(char *line, uint64_t *ret_start, uint64_t *ret_size, char **ret_name)
{
        unsigned long long start, size;
        char *end, *name;

        errno = 0;
        start = strtoull(line, &end, 16);
        if (errno != 0 || end == line || *end != ' ')
                return -EINVAL;
        line = end + 1;
        size = strtoull(line, &end, 16);
        if (errno != 0 || end == line || *end != ' ' || size == 0 || start + size < start)
                return -EINVAL;
        name = end + 1;
        name[strcspn(name, "\n")] = '\0';
        if (name[0] == '\0')
                return -EINVAL;
        *ret_start = start;
        *ret_size = size;
        *ret_name = name;
        return 0;
}

int perf_map_parse(FILE *f, PerfMap **ret)
{
        _cleanup_(perf_map_freep) PerfMap *m = NULL;
        _cleanup_free_ char *line = NULL;
        size_t line_size = 0, allocated = 0, kept = 0, n_line = 0;

        assert(f);
        assert(ret);

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;

        for (;;) {
                uint64_t start, size;
                char *name;
                ssize_t len;

                errno = 0;
                len = getline(&line, &line_size, f);
                if (len < 0) {
                        if (ferror(f))
                                return errno > 0 ? -errno : -EIO;
                        break;
                }
                n_line++;
                /* A line without its newline is one the JIT is still writing. */
                if (line[len - 1] != '\n' || parse_line(line, &start, &size, &name) < 0)
                        continue;
                if (m->n == allocated) {
                        size_t a = MAX(allocated * 2, (size_t)64);
                        PerfMapEntry *e = reallocarray(m->entries, a, sizeof(*e));

                        if (!e)
                                return -ENOMEM;
                        m->entries = e;
                        allocated = a;
                }
                m->entries[m->n] = (PerfMapEntry) { .start = start, .size = size, .line = n_line };
                /* The process writes its perf map: the name, any bytes, escaped here, once (utf8.h). */
                m->entries[m->n].name = utf8_escape_dup(name);
                if (!m->entries[m->n].name)
                        return -ENOMEM;
                m->n++;
        }

        /* By start, and of entries at one start the last written, which describes the code there now. (A map
         * without entries has no array: qsort() must not see its NULL.) */
        if (m->n > 0)
                qsort(m->entries, m->n, sizeof(PerfMapEntry), entry_compare);
        for (size_t i = 0; i < m->n; i++) {
                if (i + 1 < m->n && m->entries[i + 1].start == m->entries[i].start) {
                        free(m->entries[i].name);
                        continue;
                }
                m->entries[kept++] = m->entries[i];
        }
        m->n = kept;
        *ret = TAKE_PTR(m);
        return 0;
}

/* The whole regular file open at fd, at most max bytes (-EFBIG past them, also when it grows while read). */
static int read_bounded(int fd, size_t max, char **ret, size_t *ret_size)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated;
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        allocated = MAX((size_t)st.st_size + 1, (size_t)4096);
        buf = malloc(allocated);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                if (size == allocated) {
                        size_t a = MIN(allocated * 2, max + 1);
                        char *b;

                        if (a <= allocated)
                                return -EFBIG;
                        b = realloc(buf, a);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        allocated = a;
                }
                n = read(fd, buf + size, allocated - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                size += (size_t)n;
        }
        if (size > max)
                return -EFBIG;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

int perf_map_load(const char *path, PerfMap **ret)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        /* After buf: closed before buf is freed. */
        _cleanup_fclose_ FILE *f = NULL;
        size_t size;
        int r;

        assert(path);
        assert(ret);

        /* The file is the target's to write: a FIFO or a device planted there is not opened (open-util.h),
         * nor a symbolic link followed to make us read another file as root. */
        fd = open_regular(path, O_NOFOLLOW);
        if (fd < 0)
                return fd;
        r = read_bounded(fd, PERF_MAP_MAX, &buf, &size);
        if (r < 0)
                return r;
        f = fmemopen(buf, size, "r");
        if (!f)
                return negative_errno();
        return perf_map_parse(f, ret);
}

const char *perf_map_lookup(const PerfMap *m, uint64_t addr, uint64_t *ret_offset)
{
        size_t lo;

        if (!m)
                return NULL;
        lo = ARRAY_UPPER_BOUND(m->entries, m->n, start, addr);
        /* Entries may overlap (code replaced by a larger function): the nearest start below addr that still
         * covers it. A few steps back at most in practice. */
        for (size_t i = lo; i > 0; i--) {
                const PerfMapEntry *e = &m->entries[i - 1];

                if (addr - e->start < e->size) {
                        if (ret_offset)
                                *ret_offset = addr - e->start;
                        return e->name;
                }
                if (lo - i >= 16)
                        break;
        }
        return NULL;
}

size_t perf_map_count(const PerfMap *m)
{
        return m ? m->n : 0;
}

PerfMap *perf_map_free(PerfMap *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n; i++)
                free(m->entries[i].name);
        free(m->entries);
        free(m);
        return NULL;
}
