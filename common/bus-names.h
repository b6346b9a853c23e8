/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The versioned D-Bus contract; daemon/org.vprof.Profiler1.xml documents every member. */

#define VPROF_BUS_NAME "org.vprof.Profiler1"
#define VPROF_BUS_PATH "/org/vprof/Profiler1"
#define VPROF_BUS_INTERFACE "org.vprof.Profiler1"

#define VPROF_ERROR_NO_SUCH_PROCESS "org.vprof.Profiler1.Error.NoSuchProcess"
#define VPROF_ERROR_ALREADY_ATTACHED "org.vprof.Profiler1.Error.AlreadyAttached"
#define VPROF_ERROR_NOT_ATTACHED "org.vprof.Profiler1.Error.NotAttached"
#define VPROF_ERROR_INVALID_ARGUMENT "org.vprof.Profiler1.Error.InvalidArgument"
#define VPROF_ERROR_ACCESS_DENIED "org.vprof.Profiler1.Error.AccessDenied"
#define VPROF_ERROR_LIMIT_EXCEEDED "org.vprof.Profiler1.Error.LimitExceeded"
