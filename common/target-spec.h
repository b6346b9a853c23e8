/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* How the D-Bus API and vprofctl name what to profile and query: one string, of three forms that cannot be
 * mistaken for one another.
 *   "1234"            a process, by PID;
 *   "NAME.service"    a systemd unit with a cgroup (service, scope, slice, socket, mount, swap): its processes;
 *   "/a/b"            a cgroup v2 path, from the root of the cgroup2 hierarchy, as /proc/PID/cgroup's "0::" line
 *                     has it: every process in it and in its descendants.
 * The unit and cgroup forms are checked here for what a name may hold (no control characters, no "." or ".."
 * components, bounded lengths), not for whether they exist. */

/* systemd's UNIT_NAME_MAX is 256 with the NUL; a cgroup path is bounded by PATH_MAX. */
#define TARGET_SPEC_UNIT_MAX 256
#define TARGET_SPEC_CGROUP_MAX 4096

typedef enum TargetSpecKind {
        TARGET_SPEC_PID,
        TARGET_SPEC_UNIT,
        TARGET_SPEC_CGROUP,
        _TARGET_SPEC_KIND_MAX,
} TargetSpecKind;

typedef struct TargetSpec {
        TargetSpecKind kind;
        uint32_t pid;     /* TARGET_SPEC_PID */
        const char *name; /* the unit name or the cgroup path: points into the parsed string */
} TargetSpec;

/* -EINVAL for a string of none of the forms (an empty one included). s must outlive ret->name. */
int target_spec_parse(const char *s, TargetSpec *ret);

/* Whether s ends in the suffix of a unit that has a cgroup: what makes a vprofctl argument a unit. */
bool target_spec_is_unit_name(const char *s);

const char *target_spec_kind_to_string(TargetSpecKind k);
