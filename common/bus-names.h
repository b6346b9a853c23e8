/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* The versioned D-Bus contract; daemon/org.vprof.Profiler1.xml documents every member. */

#define VPROF_BUS_NAME "org.vprof.Profiler1"
#define VPROF_BUS_PATH "/org/vprof/Profiler1"
#define VPROF_BUS_INTERFACE "org.vprof.Profiler1"
/* The same object and interface, read on behalf of another user: a call on VPROF_BUS_USER_PATH "/UID" is judged
 * as UID's (daemon/authz.h), for a reader such as vprof-exporter answering its own clients. */
#define VPROF_BUS_USER_PATH VPROF_BUS_PATH "/user"

/* The errors of the domain. A bad argument and a refused caller get the standard
 * org.freedesktop.DBus.Error.InvalidArgs and .AccessDenied (SD_BUS_ERROR_INVALID_ARGS, SD_BUS_ERROR_ACCESS_DENIED). */
#define VPROF_ERROR_NO_SUCH_PROCESS "org.vprof.Profiler1.Error.NoSuchProcess"
#define VPROF_ERROR_ALREADY_ATTACHED "org.vprof.Profiler1.Error.AlreadyAttached"
#define VPROF_ERROR_NOT_ATTACHED "org.vprof.Profiler1.Error.NotAttached"
#define VPROF_ERROR_LIMIT_EXCEEDED "org.vprof.Profiler1.Error.LimitExceeded"
/* Attaching a unit: systemd is not on the system bus; it has no such unit loaded, or the unit has no cgroup. */
#define VPROF_ERROR_NO_SYSTEMD "org.vprof.Profiler1.Error.NoSystemd"
#define VPROF_ERROR_NO_SUCH_UNIT "org.vprof.Profiler1.Error.NoSuchUnit"
/* Attaching a cgroup: no cgroup of that path (or no cgroup2 hierarchy at all). */
#define VPROF_ERROR_NO_SUCH_CGROUP "org.vprof.Profiler1.Error.NoSuchCgroup"

/* Not the daemon's: the clients' own name for a reply they cannot decode (vprofctl's bus library, the pprof
 * library), so that a bad reply is worded in one place, like a D-Bus error (log_bus_error()). */
#define VPROF_CLIENT_ERROR_BAD_REPLY "org.vprof.vprofctl.Error.BadReply"

/* Attach's flags, which ListTargets gives back as each target's "flags". */
#define VPROF_ATTACH_OFF_CPU UINT64_C(0x1) /* also track the target's time off the CPU */
/* Also every process the target forks after the attach, each a target of its own in the target's group. */
#define VPROF_ATTACH_CHILDREN UINT64_C(0x2)
#define VPROF_ATTACH_FLAGS_ALL (VPROF_ATTACH_OFF_CPU | VPROF_ATTACH_CHILDREN)
