/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <systemd/sd-bus.h>

#include "macros.h"

/* A systemd unit's cgroup, asked of systemd's bus API (org.freedesktop.systemd1 on the system bus) without
 * blocking the daemon: GetUnit(name) gives the unit's object, whose ControlGroup property (of the interface of its
 * type: Service, Scope, Slice, Socket, Mount, Swap) is the cgroup path, relative to the cgroup2 root as systemd
 * sees it. */

typedef enum UnitLookupResult {
        UNIT_LOOKUP_OK,
        UNIT_LOOKUP_NO_SYSTEMD,   /* nobody owns org.freedesktop.systemd1 on the bus */
        UNIT_LOOKUP_NO_SUCH_UNIT, /* systemd has no such unit loaded (NoSuchUnit) */
        UNIT_LOOKUP_NO_CGROUP,    /* the unit has no cgroup: inactive, or dead */
        UNIT_LOOKUP_FAILED,       /* any other error, or a reply of the wrong shape */
} UnitLookupResult;

typedef struct UnitLookup UnitLookup;

/* Called once with the outcome: cgroup (UNIT_LOOKUP_OK) is the unit's ControlGroup, checked by
 * cgroup_path_check(); message is systemd's error message (or ours) otherwise. Both valid during the call only.
 * The lookup may be freed in it. */
typedef void (*unit_lookup_fn)(UnitLookup *l, UnitLookupResult result, const char *cgroup, const char *message,
                               void *userdata);

/* Start the lookup of unit (target_spec_is_unit_name()) on bus; fn is called from the bus's event loop. -EINVAL for a
 * bad name, or as sd_bus_call_method_async(). */
int unit_lookup_start(sd_bus *bus, const char *unit, unit_lookup_fn fn, void *userdata, UnitLookup **ret);
/* After a first outcome UNIT_LOOKUP_OK, keep following the unit, with fn and userdata from now on: systemd is asked
 * to send its signals (Subscribe), and each PropertiesChanged of the unit's object asks for its ControlGroup again,
 * fn called with each outcome. A unit stopped has none (UNIT_LOOKUP_NO_CGROUP); started again, its cgroup is a new
 * one at the same path. fn may free the lookup. */
int unit_lookup_follow(UnitLookup *l, unit_lookup_fn fn, void *userdata);
/* The unit's name. */
const char *unit_lookup_unit(const UnitLookup *l);
/* Frees it; a lookup still under way is cancelled (fn is not called), and so is the following. */
UnitLookup *unit_lookup_free(UnitLookup *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(UnitLookup *, unit_lookup_free);
