/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "fuzz-children.h"
#include "fuzz-random.h"
#include "fuzz-tally.h"

/* The state of one fuzz run, shared by the driver and the argument generators. */

/* vprofd's default target limit is 1024: room for all of them. */
#define FUZZ_MAX_ATTACHED 1024

typedef struct Fuzz {
        sd_bus *bus;
        Rng rng;
        bool fds; /* the connection passes file descriptors */
        pid_t daemon_pid;
        Children children;

        /* Attached by this run and not detached yet, for later calls to pick and for the cleanup. */
        uint32_t attached[FUZZ_MAX_ATTACHED];
        size_t n_attached;

        Tally tally;
        unsigned calls, no_reply, unsent, bad_replies;
} Fuzz;

/* Appends one argument of the right type for its role, at a boundary or random (*fds: see fuzz-args.h):
 *   P  a PID (u)                  L  a row limit (u)          F  attach flags (t)
 *   S  a sampling sort key (s)    V  a values sort key (s)
 *   I  an interface name (s)      N  a property name (s)      X  a property value (v) */
int fuzz_append_role(Fuzz *f, sd_bus_message *m, char role, int *fds);
/* The D-Bus type of a role's argument. */
char fuzz_role_type(char role);
