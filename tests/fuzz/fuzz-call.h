/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <systemd/sd-bus.h>

#include "fuzz.h"

/* The calls the driver makes: which method, on which path and interface, and the message with its arguments,
 * of the method's signature or a wrong one. */

#define PROPERTIES_INTERFACE "org.freedesktop.DBus.Properties"

typedef struct Method {
        const char *interface;
        const char *member;
        const char *roles; /* one letter per argument, see fuzz_append_role() */
        const char *reply; /* the signature of a method return; NULL: only errors are right */
} Method;

typedef enum Shape {
        SHAPE_RIGHT,    /* the method's signature, with boundary and random values */
        SHAPE_RANDOM,   /* 0..4 arguments of random types */
        SHAPE_EXTRA,    /* the right arguments and one more */
        SHAPE_MISSING,  /* the right arguments without the last ones */
        SHAPE_REPLACED, /* one of the right arguments of a random type instead */
} Shape;

/* What makes a reply right: its signature, or that it is an error, or anything. */
typedef enum Expect {
        EXPECT_ANY,
        EXPECT_RETURN_SIGNATURE,
        EXPECT_ERROR,
} Expect;

typedef struct Call {
        const char *path, *interface, *member;
        char *owned_path, *owned_member; /* random ones, if path or member is one */
        const Method *method; /* NULL for an unknown member */
        Shape shape;
        Expect expect;
} Call;

/* Frees what the call owns (random names); the Call itself may be on the stack. */
void fuzz_call_done(Call *c);
/* Picks a call and builds its message. On failure *ret_call still names the call, for the message. */
int fuzz_new_call(Fuzz *f, Call *ret_call, sd_bus_message **ret_message);
/* Whether the message's signature is the one the roles make (see fuzz_append_role()). */
bool fuzz_signature_is(sd_bus_message *m, const char *roles);
