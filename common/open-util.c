/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "macros.h"
#include "open-util.h"

int fd_reopen_regular(int path_fd)
{
        char path[64];
        struct stat st;
        int fd;

        if (path_fd < 0)
                return -EBADF;
        if (fstat(path_fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", path_fd);
        /* O_NONBLOCK and O_NOCTTY as well, should the file have become something else in between: not a
         * regular file any more, it is refused below all the same. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                safe_close(fd);
                return -EBADFD;
        }
        return fd;
}

int open_regular(const char *path, int extra_flags)
{
        _cleanup_close_ int path_fd = -1;

        assert(path);

        path_fd = open(path, O_PATH | O_CLOEXEC | extra_flags);
        if (path_fd < 0)
                return negative_errno();
        return fd_reopen_regular(path_fd);
}
