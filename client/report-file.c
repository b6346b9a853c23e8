/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "file-util.h"
#include "macros.h"
#include "report-file.h"

int report_write_file(const char *path, const void *data, size_t size)
{
        _cleanup_close_ int dir_fd = -1;
        _cleanup_free_ char *dir = NULL;
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

        if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return -EISDIR;
        if (slash) {
                dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
                if (!dir)
                        return -ENOMEM;
                dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir_fd < 0)
                        return negative_errno();
        }
        return write_file_atomic(slash ? dir_fd : AT_FDCWD, name, data, size, 0644);
}
