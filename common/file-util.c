/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "file-util.h"
#include "macros.h"

int write_all(int fd, const void *data, size_t size)
{
        const char *p = data;

        assert(data || size == 0);

        while (size > 0) {
                ssize_t n = write(fd, p, size);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                size -= (size_t)n;
        }
        return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
        _cleanup_free_ char *copy = NULL;
        struct stat st;

        assert(path);

        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        if (!copy[0])
                return -EINVAL;
        for (char *p = copy + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = '/';
        }
        if (mkdir(path, mode) >= 0)
                return 0;
        if (errno != EEXIST)
                return negative_errno();
        if (stat(path, &st) < 0)
                return negative_errno();
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int write_file_atomic(int dir_fd, const char *name, const void *data, size_t size, mode_t mode)
{
        _cleanup_close_ int fd = -1, own_dir_fd = -1;
        char tmp[256];
        int r;

        assert(name);
        assert(data || size == 0);

        if (strchr(name, '/') || (size_t)snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= sizeof(tmp))
                return -EINVAL;
        if (dir_fd == AT_FDCWD) {
                own_dir_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (own_dir_fd < 0)
                        return negative_errno();
                dir_fd = own_dir_fd;
        }
        /* A fixed name: one writer per directory. A leftover of a crash is simply truncated. */
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return negative_errno();
        r = write_all(fd, data, size);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = negative_errno();
        if (r < 0) {
                (void)unlinkat(dir_fd, tmp, 0);
                return r;
        }
        /* The rename itself is durable only once the directory is. */
        if (fsync(dir_fd) < 0)
                return negative_errno();
        return 0;
}

int read_fd_full(int fd, size_t max, void **ret, size_t *ret_size)
{
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t size, done = 0;

        assert(ret);
        assert(ret_size);

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        size = (size_t)st.st_size;
        buf = malloc(MAX(size, (size_t)1));
        if (!buf)
                return -ENOMEM;
        while (done < size) {
                ssize_t n = read(fd, buf + done, size - done);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break; /* shrank meanwhile: the parser sees it short */
                done += (size_t)n;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = done;
        return 0;
}

int read_file_full(int dir_fd, const char *name, size_t max, void **ret, size_t *ret_size)
{
        _cleanup_close_ int fd = -1;

        assert(name);

        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return read_fd_full(fd, max, ret, ret_size);
}
