/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* vprofctl's --cgroup PATH as the daemon names a cgroup (target-spec.h): a path from the cgroup2 root. PATH may be
 * that already ("/system.slice/x.service"), relative to the root ("system.slice/x.service"), or a directory
 * under the cgroup2 mount point ("/sys/fs/cgroup/system.slice/x.service"), whose mount point is taken off; a
 * trailing slash is dropped. -EINVAL for what is no cgroup path then. The caller frees *ret. */
int target_arg_cgroup(const char *path, char **ret);
