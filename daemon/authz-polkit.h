/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "hashmap.h"

/* Asking polkit, without blocking the daemon, whether the caller of a method may do what the local rules
 * refused. The method handler asks; the first time, the question goes to polkit and the handler returns 1
 * leaving the call unanswered; when polkit answers, the call is queued again on the bus, the handler runs
 * anew from the start and this time gets the verdict. Pending questions live in a registry keyed by call. */

#define VPROF_POLKIT_ACTION_PROFILE "org.vprof.Profiler1.profile"
/* Attaching a systemd unit or a cgroup: every process in it, now and later, whoever runs it. */
#define VPROF_POLKIT_ACTION_ATTACH_SERVICE "org.vprof.Profiler1.attach-service"

/* 1: authorized; 0: the question is out, the handler must return 1; negative: refused, with error set to
 * AccessDenied and the reason (polkit said no, or is not running on the bus) after refusal, why the local rules
 * refused. details: NULL-terminated key, value pairs shown in the authentication dialog. */
int polkit_verify_async(Hashmap **registry, sd_bus_message *call, const char *action, const char *const *details,
                        const char *refusal, sd_bus_error *error);

Hashmap *polkit_registry_free(Hashmap *registry);
