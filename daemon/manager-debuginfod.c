/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "manager-debuginfod.h"

/* A debug file downloaded: the files of its build-id take its names, and the targets forget the names their
 * addresses got before. */
static void on_debug_file(const char *build_id, const char *path, void *userdata)
{
        Manager *m = userdata;
        Target *t;
        int r;

        if (!path)
                return;
        r = symbolizer_add_debug_file(m->symbolizer, build_id, path);
        if (r < 0) {
                log_warning_errno(r, "Failed to use the debug file %s: %m", path);
                return;
        }
        if (r == 0)
                return;
        HASHMAP_FOREACH(t, m->targets)
                frame_cache_clear(t->user_frames);
        /* What the files without DWARF said of their addresses: nothing, which the debug file may now change. */
        inline_cache_clear(m->drain.inline_cache);
}

int manager_enable_debuginfod(Manager *m, const char *urls, uint32_t timeout_sec)
{
        _cleanup_free_ char *cache = NULL;
        int fd, r;

        r = debuginfod_cache_directory(&cache);
        if (r < 0)
                return log_error_errno(r, "Out of memory.");
        r = debuginfod_new(m->event, urls, cache, timeout_sec, on_debug_file, m, &m->debuginfod);
        if (r == -ENOPKG)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Failed to set up debuginfod downloads: %m");
        symbolizer_set_debug_fetch(m->symbolizer, debuginfod_fetch, m->debuginfod);

        /* The shipped unit keeps the daemon off the network (vprofd.conf(5) says what to change): say so now,
         * rather than with every download failing. */
        fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                log_warning_errno(negative_errno(), "DebuginfodURLs= is set, but the daemon may not open IP "
                                  "sockets (RestrictAddressFamilies=?): %m");
        else
                close(fd);
        log_info("Missing debug files are downloaded from %s (at most %" PRIu32 " s each), cached in %s.", urls,
                 timeout_sec, cache);
        return 0;
}
