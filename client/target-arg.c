/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-util.h"
#include "macros.h"
#include "target-arg.h"
#include "target-spec.h"

int target_arg_cgroup(const char *path, char **ret)
{
        _cleanup_free_ char *mount = NULL, *p = NULL;
        const char *rest = path;
        TargetSpec spec;
        size_t n;

        if (!path || path[0] == '\0')
                return -EINVAL;
        /* Under the mount point: the part below it. Without a cgroup2 mount here, the path is taken as it is. */
        if (path[0] == '/' && cgroup2_mount_find(&mount) >= 0 && strcmp(mount, "/") != 0) {
                n = strlen(mount);
                if (strncmp(path, mount, n) == 0 && (path[n] == '\0' || path[n] == '/'))
                        rest = path[n] ? path + n : "/";
        }
        if (asprintf(&p, "%s%s", rest[0] == '/' ? "" : "/", rest) < 0)
                return -ENOMEM;
        n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
                p[--n] = '\0';
        if (target_spec_parse(p, &spec) < 0 || spec.kind != TARGET_SPEC_CGROUP)
                return -EINVAL;
        *ret = TAKE_PTR(p);
        return 0;
}
