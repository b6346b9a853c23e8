/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "hashmap.h"
#include "target-spec.h"

/* The bus's side of the groups (manager-groups.h): Attach of a unit or a cgroup, and ListGroups; bus.c calls
 * these. A unit's cgroup comes from systemd's bus API (systemd-unit.h), so such an Attach is answered once
 * systemd has: the calls waiting for it are kept in Manager.pending_attaches. */

typedef struct Manager Manager;

/* Attach of spec, a unit or a cgroup (target-spec.h), with flags checked: authorized (authz_attach_group()),
 * then attached. Returns as a method handler: negative with error set, or 1 with the call answered or to be
 * answered (polkit asked, systemd asked). */
int bus_attach_group(Manager *m, sd_bus_message *msg, const TargetSpec *spec, const char *spec_text,
                     uint64_t flags, sd_bus_error *error);

int method_list_groups(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* The Attach calls still waiting for systemd, in m->pending_attaches, dropped unanswered (the daemon is going). */
void bus_groups_done(Manager *m);
