/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The cgroup v2 hierarchy: where it is mounted, what a cgroup path may be, a cgroup's id, and which cgroup a
 * process is in. A cgroup path is as the kernel shows it in /proc/PID/cgroup's "0::" line: relative to the
 * cgroup2 root (of the reader's cgroup namespace), beginning with '/'. */

/* The longest cgroup path taken, in bytes (PATH_MAX less room for the mount point). */
#define CGROUP_PATH_MAX 3072
/* The most components a path may have: levels below the root. */
#define CGROUP_LEVEL_MAX 63

/* The mount point of the cgroup2 file system in the text of a /proc/PID/mountinfo: the first cgroup2 mount of
 * the hierarchy's root ("/"), with the octal escapes of mountinfo undone. -ENOENT when there is none, -EINVAL on
 * a line it cannot read. Pure, for tests. The caller frees *ret. */
int cgroup2_mount_parse(const char *mountinfo, char **ret);
/* The same from /proc/self/mountinfo. */
int cgroup2_mount_find(char **ret);

/* Whether path is a cgroup path vprof takes: '/' alone (the root), or '/' and components of 1..255 bytes split by
 * single slashes, none "." or "..", no trailing slash, no control characters, at most CGROUP_PATH_MAX bytes and
 * CGROUP_LEVEL_MAX components. 0 or -EINVAL. */
int cgroup_path_check(const char *path);
/* Its components: the cgroup's level below the root of the path. path is checked. */
unsigned cgroup_path_level(const char *path);
/* Whether path is dir or a cgroup below it (both checked). */
bool cgroup_path_under(const char *path, const char *dir);

/* Opens the cgroup at path (checked) below the cgroup2 mount point mount, one component at a time with O_PATH |
 * O_DIRECTORY | O_NOFOLLOW: no symbolic link followed, nothing outside the mount reached. Returns the descriptor;
 * -ENOENT when there is no such cgroup, -ENOTDIR, -ELOOP, -EMEDIUMTYPE when the mount is no cgroup2 file
 * system. */
int cgroup_open(const char *mount, const char *path);
/* The id of the cgroup open at fd (the kernel's, which BPF programs see): its kernfs node id from
 * name_to_handle_at(), else its inode number. */
int cgroup_fd_id(int fd, uint64_t *ret);

/* The processes in the cgroup open at fd (cgroup_open()) and in its descendants, depth first, at most max of them
 * (the rest left out: returns how many it found in all, which may be more than max), from their cgroup.procs; a
 * descendant is entered without following links, at most CGROUP_LEVEL_MAX levels down. -errno when fd's own
 * list cannot be read; descendants that go meanwhile are skipped. */
int cgroup_read_procs(int fd, pid_t *pids, size_t max, size_t *ret_n);

/* The cgroup2 path in the text of a /proc/PID/cgroup (its "0::" line), checked. -ENOENT without one (no cgroup2
 * hierarchy), -EINVAL for a path cgroup_path_check() refuses. Pure, for tests. The caller frees *ret. */
int proc_cgroup_parse(const char *text, char **ret);
/* The same from /proc/PID/cgroup (pid 0: the calling process's); -ESRCH when the process is gone. */
int proc_cgroup_read(pid_t pid, char **ret);
