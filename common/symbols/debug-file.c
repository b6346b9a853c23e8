/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "debug-file.h"
#include "log.h"
#include "macros.h"
#include "open-util.h"
#include "xz-util.h"

/* path (absolute) inside the directory root_fd. RESOLVE_IN_ROOT keeps absolute symbolic links (Fedora's
 * .build-id links, a container's /usr/lib/debug) inside the target's root; before Linux 5.6 they resolve in
 * ours. O_PATH, then only a regular file opened for reading (open-util.h): a FIFO, a terminal or a device
 * planted where a debug file is looked for (a symbolic link next to the binary will do) is never opened. */
static int open_in_root(int root_fd, const char *path)
{
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        const char *rel = path + strspn(path, "/");
        _cleanup_close_ int path_fd = -1;
        long fd;

        if (root_fd < 0)
                return open_regular(path, 0);
        fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
        if (fd < 0 && errno == ENOSYS)
                fd = openat(root_fd, rel, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        path_fd = (int)fd;
        return fd_reopen_regular(path_fd);
}

static int try_candidate(const DebugFileQuery *q, int root_fd, const char *path, DebugFileKind kind,
                         DebugFileAccept accept, void *userdata)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        uint32_t crc;
        int r;

        fd = open_in_root(root_fd, path);
        if (fd < 0)
                return 0;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        if (st.st_dev == q->binary_dev && st.st_ino == q->binary_ino)
                return 0;
        if (kind == DEBUG_FILE_DEBUGLINK) {
                r = file_crc32(fd, &crc);
                if (r < 0) {
                        log_debug_errno(r, "Cannot read debug file %s: %m", path);
                        return 0;
                }
                /* Another build's debug file of the same name: its addresses are not this binary's. */
                if (crc != q->debuglink_crc) {
                        log_debug("Debug file %s has CRC %08" PRIx32 ", the link wants %08" PRIx32 ", ignored",
                                  path, crc, q->debuglink_crc);
                        return 0;
                }
        }
        return accept(fd, kind, path, userdata);
}

/* debug_dir is a list, separated by ':' as gdb's debug-file-directory: the next one into buf; false at the end. */
static bool next_debug_dir(const char **cursor, char *buf, size_t size)
{
        size_t n = strcspn(*cursor, ":");

        if (**cursor == '\0')
                return false;
        snprintf(buf, size, "%.*s", (int)MIN(n, size - 1), *cursor);
        *cursor += n;
        if (**cursor == ':')
                (*cursor)++;
        return true;
}

int debug_file_find(const DebugFileQuery *q, DebugFileAccept accept, void *userdata)
{
        _cleanup_close_ int root_fd = -1;
        char path[PATH_MAX], dir[PATH_MAX];
        const char *cursor;
        int k, r;

        assert(q);
        assert(accept);

        if (!q->debug_dir || q->debug_dir[0] != '/')
                return -EINVAL;
        if (q->root) {
                root_fd = open(q->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0) {
                        log_debug_errno(negative_errno(), "Cannot open %s: %m", q->root);
                        return 0;
                }
        }

        /* The build-id names exactly this build: the first choice, in each debug directory in turn. */
        cursor = q->debug_dir;
        while (q->build_id && strlen(q->build_id) > 2 && next_debug_dir(&cursor, dir, sizeof(dir))) {
                k = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, q->build_id, q->build_id + 2);
                if (k > 0 && (size_t)k < sizeof(path)) {
                        r = try_candidate(q, root_fd, path, DEBUG_FILE_BUILD_ID, accept, userdata);
                        if (r != 0)
                                return r;
                }
        }

        if (q->debuglink && q->binary_path && q->binary_path[0] == '/') {
                /* The binary's directory, "" for one in /. */
                int dir_len = (int)(strrchr(q->binary_path, '/') - q->binary_path);

                /* DIR/NAME, DIR/.debug/NAME, then DEBUGDIR/DIR/NAME for each debug directory. */
                for (unsigned i = 0; i < 2; i++) {
                        k = snprintf(path, sizeof(path), "%.*s%s/%s", dir_len, q->binary_path,
                                     i == 1 ? "/.debug" : "", q->debuglink);
                        if (k <= 0 || (size_t)k >= sizeof(path))
                                continue;
                        r = try_candidate(q, root_fd, path, DEBUG_FILE_DEBUGLINK, accept, userdata);
                        if (r != 0)
                                return r;
                }
                cursor = q->debug_dir;
                while (next_debug_dir(&cursor, dir, sizeof(dir))) {
                        k = snprintf(path, sizeof(path), "%s%.*s/%s", dir, dir_len, q->binary_path, q->debuglink);
                        if (k <= 0 || (size_t)k >= sizeof(path))
                                continue;
                        r = try_candidate(q, root_fd, path, DEBUG_FILE_DEBUGLINK, accept, userdata);
                        if (r != 0)
                                return r;
                }
        }
        return 0;
}

int debug_file_open(const char *root, const char *path)
{
        _cleanup_close_ int root_fd = -1;

        assert(path);

        if (path[0] != '/')
                return -EINVAL;
        if (root) {
                root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0)
                        return negative_errno();
        }
        return open_in_root(root_fd, path);
}
