/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "systemd-unit.h"
#include "target-group.h"

int target_group_new(const char *spec, TargetGroupKind kind, TargetGroup **ret)
{
        _cleanup_(target_group_freep) TargetGroup *g = NULL;

        assert(spec);
        assert(kind >= 0 && kind < _TARGET_GROUP_KIND_MAX);
        assert(ret);

        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->spec = strdup(spec);
        if (!g->spec)
                return -ENOMEM;
        g->kind = kind;
        *ret = TAKE_PTR(g);
        return 0;
}

TargetGroup *target_group_free(TargetGroup *g)
{
        if (!g)
                return NULL;
        unit_lookup_free(g->unit);
        free(g->spec);
        free(g->cgroup_path);
        free(g);
        return NULL;
}

const char *target_group_kind_to_string(TargetGroupKind k)
{
        static const char *const names[_TARGET_GROUP_KIND_MAX] = {
                [TARGET_GROUP_UNIT] = "unit",
                [TARGET_GROUP_CGROUP] = "cgroup",
                [TARGET_GROUP_CHILDREN] = "children",
        };
        return k >= 0 && k < _TARGET_GROUP_KIND_MAX ? names[k] : NULL;
}
