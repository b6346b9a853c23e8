/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* A seeded generator (splitmix64), so that the choices of a run can be replayed from its seed (the PIDs it
 * finds differ from run to run), and the random strings and names the fuzz driver sends. Everything generated is valid for sd-bus to send: it refuses invalid UTF-8,
 * names and paths on the sender side, and those would test sd-bus, not the daemon. */

typedef struct Rng {
        uint64_t state;
} Rng;

uint64_t rng_next(Rng *r);
/* In 0..n-1 (modulo bias aside); n > 0. */
uint64_t rng_below(Rng *r, uint64_t n);
bool rng_chance(Rng *r, unsigned percent);
/* A random element of an array. */
#define RNG_PICK(r, array) ((array)[rng_below((r), ELEMENTSOF(array))])

/* A NUL-terminated string of valid UTF-8 without NUL, of at most max_bytes bytes: ASCII, control characters,
 * and two-, three- and four-byte sequences. NULL on ENOMEM. */
char *rng_utf8(Rng *r, size_t max_bytes);
/* A valid member name (1..255 characters). */
char *rng_member(Rng *r);
/* A valid object path. */
char *rng_object_path(Rng *r);
