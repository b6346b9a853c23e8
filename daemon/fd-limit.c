/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/resource.h>

#include "fd-limit.h"
#include "log.h"
#include "macros.h"

/* The descriptors open now; a guess when /proc cannot say. */
static uint64_t count_open_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        uint64_t n = 0;
        struct dirent *e;

        if (!d)
                return 64;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n > 0 ? n - 1 : 0; /* not the directory's own */
}

void fd_limit_setup(uint32_t max_targets, uint64_t *ret_limit, int *ret_pidfd_bound)
{
        uint64_t needed = count_open_fds() + max_targets + FD_LIMIT_RESERVE, room;
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
                log_warning_errno(negative_errno(), "Failed to read the open file limit: %m");
                *ret_limit = 0;
                *ret_pidfd_bound = 0;
                return;
        }
        /* The usual soft limit of 1024 keeps select() working for programs that use it, which vprofd does
         * not: take what the hard limit allows, as much as MaxTargets= needs. */
        if (rl.rlim_cur < needed && rl.rlim_max > rl.rlim_cur) {
                struct rlimit raised = { .rlim_cur = MIN((rlim_t)needed, rl.rlim_max), .rlim_max = rl.rlim_max };

                if (setrlimit(RLIMIT_NOFILE, &raised) < 0)
                        log_debug_errno(negative_errno(), "Failed to raise the open file limit to %" PRIu64 ": %m",
                                        (uint64_t)raised.rlim_cur);
                else {
                        log_debug("Raised the open file limit from %" PRIu64 " to %" PRIu64 ".",
                                  (uint64_t)rl.rlim_cur, (uint64_t)raised.rlim_cur);
                        rl = raised;
                }
        }
        room = (uint64_t)rl.rlim_cur + max_targets > needed ? (uint64_t)rl.rlim_cur + max_targets - needed : 0;
        if (rl.rlim_cur < needed)
                log_warning("The open file limit (RLIMIT_NOFILE, LimitNOFILE=) is %" PRIu64 ": room for about %" PRIu64
                            " targets, not MaxTargets=%" PRIu32 "; it takes at least %" PRIu64 ".",
                            (uint64_t)rl.rlim_cur, room, max_targets, needed);
        *ret_limit = rl.rlim_cur;
        *ret_pidfd_bound = (int)MIN((uint64_t)rl.rlim_cur - MIN((uint64_t)rl.rlim_cur, (uint64_t)FD_LIMIT_RESERVE),
                                    (uint64_t)INT_MAX);
}
