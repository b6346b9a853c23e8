/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-names.h"
#include "fuzz-args.h"
#include "fuzz-call.h"
#include "macros.h"

static const Method profiler_methods[] = {
        { VPROF_BUS_INTERFACE, "Attach", "PF", "" },
        { VPROF_BUS_INTERFACE, "Detach", "P", "" },
        { VPROF_BUS_INTERFACE, "Reset", "P", "" },
        { VPROF_BUS_INTERFACE, "ListTargets", "", "a(ua{sv})" },
        { VPROF_BUS_INTERFACE, "ListGroups", "", "a(sa{sv})" },
        { VPROF_BUS_INTERFACE, "GetFunctions", "PSLW", "t(tt)a(ssttdd)au" },
        { VPROF_BUS_INTERFACE, "GetModules", "PW", "t(tt)a(sttdd)" },
        { VPROF_BUS_INTERFACE, "GetThreads", "PW", "t(tt)a(usttdd)" },
        { VPROF_BUS_INTERFACE, "GetProcesses", "PW", "t(tt)a(usttdd)" },
        { VPROF_BUS_INTERFACE, "GetStacks", "PLW", "tt(tt)a(ss)a(auut)au" },
        { VPROF_BUS_INTERFACE, "GetWindowTables", "PWWL",
          "ut" "t(tt)a(ssttdd)aua(sttdd)a(usttdd)a(ss)a(auut)au" },
        { VPROF_BUS_INTERFACE, "GetProfile", "PLW", "tt(tt)uba(ussa(sssttt)a(ssst)a(us)a(auuutt))aauaa(us)aa(uu)" },
        { VPROF_BUS_INTERFACE, "GetSymbolNames", "P", "a(sss)" },
        { VPROF_BUS_INTERFACE, "GetModuleSymbols", "P", "a(sa{sv})" },
        { VPROF_BUS_INTERFACE, "GetFunctionValues", "PVLW", "dd(tt)a(ssdddddddddd)au" },
        { VPROF_BUS_INTERFACE, "GetModuleValues", "PW", "dd(tt)a(sdddddddddd)" },
        { VPROF_BUS_INTERFACE, "GetThreadValues", "PW", "dd(tt)a(usdddddddddd)" },
        { VPROF_BUS_INTERFACE, "GetProcessValues", "PW", "dd(tt)a(usdddddddddd)" },
};
#define DETACH (&profiler_methods[1])

/* The standard interfaces, which sd-bus serves from vprofd's vtable. */
static const Method standard_methods[] = {
        { PROPERTIES_INTERFACE, "Get", "IN", "v" },
        { PROPERTIES_INTERFACE, "GetAll", "I", "a{sv}" },
        { PROPERTIES_INTERFACE, "Set", "INX", NULL }, /* every property is read-only */
        { "org.freedesktop.DBus.Introspectable", "Introspect", "", "s" },
        { "org.freedesktop.DBus.Peer", "Ping", "", "" },
        { "org.freedesktop.DBus.Peer", "GetMachineId", "", "s" },
};

/* Names near the real ones, none of them a method of the interface. */
static const char *const unknown_members[] = { "attach", "Attach2", "AttachWithFlag", "GetFunction", "Version",
                                               "Get", "Introspect", "Detach_", "ListTarget", "GetValues",
                                               "ListGroup" };

static int append_random_arg(Fuzz *f, sd_bus_message *m, int *fds)
{
        char type[128] = "";

        if (!fuzz_random_type(&f->rng, FUZZ_MAX_DEPTH, *fds > 0, type, sizeof(type)))
                return 0;
        return fuzz_append_value(&f->rng, m, type, FUZZ_MAX_DEPTH, fds);
}

static int append_args(Fuzz *f, sd_bus_message *m, const char *roles, Shape shape, int *fds)
{
        size_t n = strlen(roles), keep = n, replaced = n;
        int r;

        if (shape == SHAPE_RANDOM)
                return fuzz_append_random_args(&f->rng, m, fds);
        if (shape == SHAPE_MISSING && n > 0)
                keep = rng_below(&f->rng, n);
        if (shape == SHAPE_REPLACED && n > 0)
                replaced = rng_below(&f->rng, n);
        for (size_t i = 0; i < keep; i++) {
                r = i == replaced ? append_random_arg(f, m, fds) : fuzz_append_role(f, m, roles[i], fds);
                if (r < 0)
                        return r;
        }
        if (shape == SHAPE_EXTRA || (n == 0 && shape != SHAPE_RIGHT))
                return append_random_arg(f, m, fds);
        return 0;
}

/* The signature the roles make, to tell a mutated call that came out right by chance. */
bool fuzz_signature_is(sd_bus_message *m, const char *roles)
{
        const char *sig = sd_bus_message_get_signature(m, true);
        size_t n = strlen(roles);

        if (!sig || strlen(sig) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (sig[i] != fuzz_role_type(roles[i]))
                        return false;
        return true;
}

static Call pick_call(Fuzz *f)
{
        static const char *const wrong_paths[] = { "/", "/org/vprof", "/org/vprof/Profiler1/1",
                                                   "/org/vprof/Profiler2" };
        static const Shape shapes[] = { SHAPE_RIGHT, SHAPE_RIGHT, SHAPE_RIGHT, SHAPE_RIGHT, SHAPE_RIGHT,
                                        SHAPE_RIGHT, SHAPE_RANDOM, SHAPE_EXTRA, SHAPE_MISSING, SHAPE_REPLACED };
        Rng *r = &f->rng;
        Call c = { .path = VPROF_BUS_PATH, .shape = RNG_PICK(r, shapes) };
        uint64_t k = rng_below(r, 100);

        if (k < 6) {
                c.interface = VPROF_BUS_INTERFACE;
                c.member = rng_chance(r, 50) ? RNG_PICK(r, unknown_members) : (c.owned_member = rng_member(r));
                c.expect = EXPECT_ERROR;
                return c;
        }
        /* Detach is picked more, once something is attached, so that attach and detach alternate. */
        if (k < 14 && f->n_attached > 0)
                c.method = DETACH;
        else if (k < 85)
                c.method = &RNG_PICK(r, profiler_methods);
        else
                c.method = &RNG_PICK(r, standard_methods);
        c.interface = c.method->interface;
        c.member = c.method->member;
        c.expect = c.method->reply ? EXPECT_RETURN_SIGNATURE : EXPECT_ERROR;
        if (rng_chance(r, 4)) {
                c.path = rng_chance(r, 50) ? RNG_PICK(r, wrong_paths) : (c.owned_path = rng_object_path(r));
                c.expect = EXPECT_ANY;
        } else if (rng_chance(r, 3)) {
                c.interface = NULL; /* sd-bus looks the member up in every interface */
                c.expect = EXPECT_ANY;
        }
        return c;
}

void fuzz_call_done(Call *c)
{
        free(c->owned_member);
        free(c->owned_path);
        *c = (Call){};
}

static int new_message(Fuzz *f, const Call *c, bool fds, sd_bus_message **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int fds_left = fds ? FUZZ_MAX_FDS : 0, r;

        r = sd_bus_message_new_method_call(f->bus, &m, VPROF_BUS_NAME, c->path, c->interface, c->member);
        if (r < 0)
                return r;
        r = append_args(f, m, c->method ? c->method->roles : "", c->shape, &fds_left);
        if (r < 0)
                return r;
        if (fuzz_fds_over(fds_left))
                return -E2BIG;
        *ret = TAKE_PTR(m);
        return 0;
}

int fuzz_new_call(Fuzz *f, Call *ret_call, sd_bus_message **ret_message)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Call *c = ret_call;
        int r;

        *c = pick_call(f);
        if (!c->path || !c->member)
                return -ENOMEM;
        r = new_message(f, c, f->fds, &m);
        if (r == -E2BIG)
                /* More file descriptors than dbus-daemon takes: the same call without any. */
                r = new_message(f, c, false, &m);
        if (r < 0)
                return r;
        /* A mutation that came out as the right signature is a right call. */
        if (c->method && c->shape != SHAPE_RIGHT && fuzz_signature_is(m, c->method->roles))
                c->shape = SHAPE_RIGHT;
        *ret_message = TAKE_PTR(m);
        return 0;
}
