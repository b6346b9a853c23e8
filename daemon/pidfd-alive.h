/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <poll.h>

/* Whether the process pinned by pidfd still runs: 0, or -ESRCH once it exited (its pidfd turned readable), or
 * -EBADF without one. Asked by poll(), not by a signal 0, which needs CAP_KILL for another user's process and the
 * packaged unit does not grant it (every attach of a non-root process failed with EPERM under the shipped unit). */
static inline int pidfd_alive(int pidfd)
{
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int n;

        if (pidfd < 0)
                return -EBADF;
        n = poll(&p, 1, 0);
        if (n < 0)
                return -errno;
        return n > 0 ? -ESRCH : 0;
}
