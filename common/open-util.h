/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Opening files that a target names (its mapped files, debug files, perf map) as root. Their paths are the
 * target's to change between two looks: a symbolic link or a bind mount can make one a device, a FIFO or a
 * terminal, and opening those for reading is already an act (a FIFO blocks the daemon, a terminal becomes
 * its controlling terminal, a watchdog device starts counting). So such a path is opened with O_PATH, which
 * opens nothing, and only a regular file behind it is opened for reading. */

/* Open for reading (O_RDONLY | O_CLOEXEC) the file that path_fd, an O_PATH descriptor, stands for, through
 * /proc/self/fd so that no path is resolved again; path_fd stays open. -EBADFD when it is not a regular
 * file. */
int fd_reopen_regular(int path_fd);

/* open(path, O_PATH | extra_flags) then fd_reopen_regular(): extra_flags may be O_NOFOLLOW. */
int open_regular(const char *path, int extra_flags);
