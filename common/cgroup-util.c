/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "macros.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* /proc/self/mountinfo of a host with thousands of mounts is a few MiB; /proc/PID/cgroup a few lines. */
#define MOUNTINFO_MAX (UINT64_C(16) << 20)
#define PROC_CGROUP_MAX (UINT64_C(64) << 10)

/* A /proc file whole (its size says nothing: 0), at most max bytes, NUL-terminated: -EFBIG past it. */
static int read_proc_text(const char *path, size_t max, char **ret)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        for (;;) {
                ssize_t n;

                if (allocated - size < 4096) {
                        size_t a = MAX(allocated * 2, (size_t)16384);
                        char *p;

                        if (a > max + 1)
                                a = max + 1;
                        if (a <= size + 1)
                                return -EFBIG;
                        p = realloc(buf, a);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        allocated = a;
                }
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += (size_t)n;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The next space-separated field of a line at *p, into a NUL-terminated copy at most size bytes long; moves
 * *p past it. false at the end of the line. */
static bool next_field(const char **p, char *out, size_t size)
{
        const char *s = *p, *e;

        while (*s == ' ')
                s++;
        if (*s == '\0' || *s == '\n')
                return false;
        e = s + strcspn(s, " \n");
        if ((size_t)(e - s) >= size)
                return false;
        memcpy(out, s, (size_t)(e - s));
        out[e - s] = '\0';
        *p = e;
        return true;
}

/* mountinfo's escapes: \NNN (octal) for space, tab, newline and backslash. In place. */
static int unescape_octal(char *s)
{
        char *w = s;

        for (const char *r = s; *r;) {
                if (*r != '\\') {
                        *w++ = *r++;
                        continue;
                }
                if (r[1] < '0' || r[1] > '3' || r[2] < '0' || r[2] > '7' || r[3] < '0' || r[3] > '7')
                        return -EINVAL;
                *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                r += 4;
        }
        *w = '\0';
        return 0;
}

int cgroup2_mount_parse(const char *mountinfo, char **ret)
{
        char root[PATH_MAX], where[PATH_MAX], word[PATH_MAX];

        assert(mountinfo);
        assert(ret);

        for (const char *line = mountinfo; *line;) {
                const char *p = line, *eol = strchr(line, '\n');
                bool separator = false;

                line = eol ? eol + 1 : line + strlen(line);
                /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS */
                for (int i = 0; i < 3; i++)
                        if (!next_field(&p, word, sizeof(word)))
                                goto next;
                if (!next_field(&p, root, sizeof(root)) || !next_field(&p, where, sizeof(where)))
                        goto next;
                while (next_field(&p, word, sizeof(word)))
                        if (strcmp(word, "-") == 0) {
                                separator = true;
                                break;
                        }
                if (!separator || !next_field(&p, word, sizeof(word)) || strcmp(word, "cgroup2") != 0)
                        goto next;
                /* A bind mount of a cgroup below the root would put every path elsewhere. */
                if (strcmp(root, "/") != 0)
                        goto next;
                if (unescape_octal(where) < 0 || where[0] != '/')
                        return -EINVAL;
                *ret = strdup(where);
                return *ret ? 0 : -ENOMEM;
        next:
                continue;
        }
        return -ENOENT;
}

int cgroup2_mount_find(char **ret)
{
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_proc_text("/proc/self/mountinfo", MOUNTINFO_MAX, &text);
        if (r < 0)
                return r;
        return cgroup2_mount_parse(text, ret);
}

int cgroup_path_check(const char *path)
{
        size_t len, levels = 0;

        if (!path || path[0] != '/')
                return -EINVAL;
        len = strnlen(path, CGROUP_PATH_MAX + 1);
        if (len > CGROUP_PATH_MAX)
                return -EINVAL;
        if (len == 1)
                return 0;
        for (const char *c = path + 1;;) {
                size_t n = strcspn(c, "/");

                if (n == 0 || n > 255 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return -EINVAL;
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
                                return -EINVAL;
                if (++levels > CGROUP_LEVEL_MAX)
                        return -EINVAL;
                if (c[n] == '\0')
                        return 0;
                c += n + 1;
        }
}

unsigned cgroup_path_level(const char *path)
{
        unsigned n = 0;

        if (strcmp(path, "/") == 0)
                return 0;
        for (const char *c = path; *c; c++)
                if (*c == '/')
                        n++;
        return n;
}

bool cgroup_path_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        if (strcmp(dir, "/") == 0)
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int cgroup_open(const char *mount, const char *path)
{
        _cleanup_close_ int fd = -1;
        char component[256];
        struct statfs sfs;

        if (!mount || mount[0] != '/' || cgroup_path_check(path) < 0)
                return -EINVAL;
        fd = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        if (sfs.f_type != CGROUP2_SUPER_MAGIC)
                return -EMEDIUMTYPE;
        for (const char *c = path + 1; *c;) {
                size_t n = strcspn(c, "/");
                int next;

                memcpy(component, c, n); /* checked: 1..255 bytes, not "." or ".." */
                component[n] = '\0';
                next = openat(fd, component, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return negative_errno();
                safe_close(fd);
                fd = next;
                c += n;
                if (*c == '/')
                        c++;
        }
        /* Still on the same file system: nothing is mounted inside a cgroup2 hierarchy, but make sure. */
        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        if (sfs.f_type != CGROUP2_SUPER_MAGIC)
                return -EMEDIUMTYPE;
        return TAKE_FD(fd);
}

int cgroup_fd_id(int fd, uint64_t *ret)
{
        union {
                struct file_handle handle;
                char space[sizeof(struct file_handle) + sizeof(uint64_t)];
        } h = { .handle.handle_bytes = sizeof(uint64_t) };
        int mount_id;
        struct stat st;

        /* kernfs hands out its node id, which is the cgroup id, as an 8-byte handle. */
        if (name_to_handle_at(fd, "", &h.handle, &mount_id, AT_EMPTY_PATH) == 0 &&
            h.handle.handle_bytes == sizeof(uint64_t)) {
                memcpy(ret, h.handle.f_handle, sizeof(uint64_t));
                return 0;
        }
        /* On 64-bit kernels the inode number is the id too. */
        if (fstat(fd, &st) < 0)
                return negative_errno();
        *ret = (uint64_t)st.st_ino;
        return 0;
}

/* The PIDs of one cgroup.procs into pids[*n...], counting all in *total. */
static int read_one_procs(int dir_fd, pid_t *pids, size_t max, size_t *n, size_t *total)
{
        _cleanup_fclose_ FILE *f = NULL;
        int fd;
        long pid;

        fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "re");
        if (!f) {
                safe_close(fd);
                return negative_errno();
        }
        while (fscanf(f, "%ld", &pid) == 1) {
                if (pid <= 0)
                        continue;
                if (*n < max)
                        pids[(*n)++] = (pid_t)pid;
                (*total)++;
        }
        return 0;
}

static int read_procs_below(int dir_fd, unsigned depth, pid_t *pids, size_t max, size_t *n, size_t *total)
{
        _cleanup_close_ int list_fd = -1;
        DIR *d;
        struct dirent *de;
        int r;

        r = read_one_procs(dir_fd, pids, max, n, total);
        if (r < 0)
                return r;
        if (depth >= CGROUP_LEVEL_MAX)
                return 0;
        list_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (list_fd < 0)
                return 0;
        d = fdopendir(list_fd);
        if (!d)
                return 0;
        list_fd = -1; /* the DIR's now */
        while ((de = readdir(d))) {
                int child;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                child = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child < 0)
                        continue;
                (void)read_procs_below(child, depth + 1, pids, max, n, total);
                safe_close(child);
        }
        closedir(d);
        return 0;
}

int cgroup_read_procs(int fd, pid_t *pids, size_t max, size_t *ret_n)
{
        size_t n = 0, total = 0;
        int r;

        r = read_procs_below(fd, 0, pids, max, &n, &total);
        if (r < 0)
                return r;
        *ret_n = total;
        return 0;
}

int proc_cgroup_parse(const char *text, char **ret)
{
        assert(text);
        assert(ret);

        for (const char *line = text; *line;) {
                const char *eol = strchrnul(line, '\n');

                /* "0::PATH": the cgroup2 hierarchy's line; the v1 hierarchies' have an ID and controllers. */
                if (eol - line >= 3 && strncmp(line, "0::", 3) == 0) {
                        _cleanup_free_ char *path = strndup(line + 3, (size_t)(eol - line - 3));

                        if (!path)
                                return -ENOMEM;
                        if (cgroup_path_check(path) < 0)
                                return -EINVAL;
                        *ret = TAKE_PTR(path);
                        return 0;
                }
                line = *eol ? eol + 1 : eol;
        }
        return -ENOENT;
}

int proc_cgroup_read(pid_t pid, char **ret)
{
        _cleanup_free_ char *text = NULL;
        char path[64];
        int r;

        if (pid == 0)
                snprintf(path, sizeof(path), "/proc/self/cgroup");
        else
                snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        r = read_proc_text(path, PROC_CGROUP_MAX, &text);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        return proc_cgroup_parse(text, ret);
}
