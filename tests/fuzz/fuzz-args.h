/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-bus.h>

#include "fuzz-random.h"

/* Random D-Bus types and values of any type: basic types at their boundaries, arrays (empty, short, long),
 * dictionaries, structs, variants, and file descriptors when the connection can pass them. Messages stay
 * within what dbus-daemon takes (it disconnects a sender that breaks a limit, so the run would end): 32 MiB,
 * arrays of 64 MiB (sd-bus does not check that one when it builds a message), and FUZZ_BUS_MAX_FDS file
 * descriptors. The generators that append take *fds, the file descriptors the message may still get: new
 * types use 'h' only while it is positive, arrays of them are cut to fit, and each one appended decrements
 * it, below 0 when the fixed part of a type has more; fuzz_fds_over() tells that the message must be built
 * again without any. */

/* File descriptors a message is given to start with. */
#define FUZZ_MAX_FDS 8
/* dbus-daemon's max_message_unix_fds on the system bus. */
#define FUZZ_BUS_MAX_FDS 16

static inline bool fuzz_fds_over(int fds_left)
{
        return FUZZ_MAX_FDS - fds_left > FUZZ_BUS_MAX_FDS;
}

/* Containers nested at most this deep, well below the D-Bus limits (32 arrays, 32 structs, 255 characters). */
#define FUZZ_MAX_DEPTH 4

/* Appends one random complete type to sig (NUL-terminated, of capacity size). Returns false when it does not
 * fit; sig is then unchanged. */
bool fuzz_random_type(Rng *r, unsigned depth, bool fds, char *sig, size_t size);
/* The length of the complete type at the start of sig; 0 if there is none. */
size_t fuzz_type_length(const char *sig);
/* Appends a random value of the complete type at the start of type. */
int fuzz_append_value(Rng *r, sd_bus_message *m, const char *type, unsigned depth, int *fds);
/* Appends random arguments of random types (0..4 of them). */
int fuzz_append_random_args(Rng *r, sd_bus_message *m, int *fds);
