/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* Replies counted by kind: "ok" for a method return, else the error name without the usual prefixes. */

#define TALLY_MAX 64

typedef struct Tally {
        char *names[TALLY_MAX];
        unsigned counts[TALLY_MAX];
        unsigned n, other; /* other: kinds beyond TALLY_MAX */
} Tally;

/* NULL: a method return. */
void tally_add(Tally *t, const char *error_name);
/* "ok 812, InvalidArgs 2100, ...", most frequent first. */
void tally_print(Tally *t, FILE *f);
void tally_done(Tally *t);
