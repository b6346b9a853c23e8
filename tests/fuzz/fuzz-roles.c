/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-names.h"
#include "fuzz-args.h"
#include "fuzz.h"
#include "macros.h"

#define PID_MAX_LIMIT UINT32_C(4194304) /* the kernel's ceiling for pid_max: vprofd's upper bound */

static const char *const properties[] = {
        "Version",          "Event",           "EventReason",      "Frequency",     "CPUs",
        "Targets",          "SamplesSeen",     "SamplesKept",      "SamplesDiscarded",
        "SamplesLost",      "StackErrors",     "StacksTruncated",  "SamplesUnclaimed",
        "OffCpuDefault",    "OffCpuBlocked",   "OffCpuPreempted",  "OffCpuLost",    "OffCpuUnclaimed",
        "MaxTargets",       "MaxFunctionsPerTarget", "MaxStacksPerTarget", "SymbolCacheSize",
        "SymbolCacheUsed",  "SymbolFilesSkipped", "SamplesInOtherFunctions", "SamplesInOtherStacks",
        "TargetsAtLimit",   "MaxTargetsPerUser", "ExitedTargetRetentionUSec", "MembersRefused",
};

char fuzz_role_type(char role)
{
        switch (role) {
        case 'L':
                return 'u';
        case 'F':
        case 'W':
                return 't';
        case 'X':
                return 'v';
        default:
                return 's';
        }
}

static uint32_t pick_pid(Fuzz *f)
{
        static const uint32_t edges[] = { 0, 1, 2 /* kthreadd */, PID_MAX_LIMIT, PID_MAX_LIMIT + 1, INT32_MAX,
                                          UINT32_MAX };
        const Children *c = &f->children;
        Rng *r = &f->rng;
        uint64_t k = rng_below(r, 20);

        /* Mostly processes that exist, and the attached ones most, so that calls get past the checks. */
        if (k < 6 && f->n_attached > 0)
                return f->attached[rng_below(r, f->n_attached)];
        if (k < 9)
                return (uint32_t)c->worker;
        if (k < 11 && c->n_recent > 0)
                return (uint32_t)c->recent[rng_below(r, MIN(c->n_recent, (unsigned)CHILDREN_RECENT))].pid;
        if (k < 12)
                return (uint32_t)c->worker_thread; /* a thread, not a process */
        if (k < 13)
                return (uint32_t)getpid();
        if (k < 14)
                return (uint32_t)f->daemon_pid;
        if (k < 17)
                return RNG_PICK(r, edges);
        if (k < 18)
                return (uint32_t)rng_next(r);
        return 1 + (uint32_t)rng_below(r, PID_MAX_LIMIT);
}

static char *pick_long(Rng *r, const char *prefix);

/* A target as the daemon names it: mostly a PID (pick_pid()), else a unit, a cgroup path or anything. */
static char *pick_target(Fuzz *f)
{
        static const char *const odd[] = { "", "vprof-fuzz.service", "-.slice", "init.scope", "multi-user.target",
                                           ".service", "/", "/vprof-fuzz", "/a/../b", "//", "/a/", "0", "-1",
                                           "01", " 1", "1 ", "4194305", "a\nb.service", "/\x7f" };
        Rng *r = &f->rng;
        uint64_t k = rng_below(r, 20);
        char *s;

        if (k < 15)
                return asprintf(&s, "%u", pick_pid(f)) < 0 ? NULL : s;
        if (k < 18)
                return strdup(RNG_PICK(r, odd));
        if (k < 19)
                return pick_long(r, rng_chance(r, 50) ? "/" : "x.service");
        return rng_utf8(r, 64);
}

static uint64_t pick_window(Rng *r)
{
        static const uint64_t edges[] = { 0, 1, 999999, 1000000, 10000000, 60000000, 600000000, 601000000,
                                          UINT64_MAX / 2, UINT64_MAX };
        uint64_t k = rng_below(r, 3);

        return k == 0 ? RNG_PICK(r, edges) : k == 1 ? rng_below(r, 20) * 1000000 : rng_next(r);
}

/* A string of n copies of c: a sort key or a name far beyond any real one. */
static char *repeated(char c, size_t n)
{
        char *s = malloc(n + 1);

        if (!s)
                return NULL;
        memset(s, c, n);
        s[n] = '\0';
        return s;
}

static char *pick_long(Rng *r, const char *prefix)
{
        static const size_t lengths[] = { 255, 256, 4096, 65536, 1 << 20 };
        size_t n = RNG_PICK(r, lengths);
        char *s = repeated('x', n);

        if (s && prefix)
                memcpy(s, prefix, MIN(strlen(prefix), n));
        return s;
}

static char *pick_sort(Fuzz *f, bool values)
{
        static const char *const sampling[] = { "inclusive", "exclusive" };
        static const char *const elapsed[] = { "elapsed-inclusive", "elapsed-exclusive", "application-inclusive",
                                               "application-exclusive" };
        static const char *const odd[] = { "", "Inclusive", "inclusive ", " exclusive", "elapsed", "application-",
                                           "%s%n%x%p", "inclusive\n", "exclusive\x7f",
                                           ("\xc3\xbcnic\xc3\xb6" "de"), "\xf0\x9f\x94\xa5",
                                           "inclusive\texclusive" };
        Rng *r = &f->rng;
        uint64_t k = rng_below(r, 10);
        const char *s;

        if (k < 4)
                s = values ? RNG_PICK(r, elapsed) : RNG_PICK(r, sampling);
        else if (k < 5)
                s = values ? RNG_PICK(r, sampling) : RNG_PICK(r, elapsed); /* the other method's keys */
        else if (k < 7)
                s = RNG_PICK(r, odd);
        else if (k < 8)
                return pick_long(r, values ? "elapsed-inclusive" : "inclusive");
        else
                return rng_utf8(r, 64);
        return strdup(s);
}

static uint32_t pick_limit(Rng *r)
{
        static const uint32_t edges[] = { 0, 1, 2, INT32_MAX, (uint32_t)INT32_MAX + 1, UINT32_MAX };
        uint64_t k = rng_below(r, 3);

        return k == 0 ? RNG_PICK(r, edges) : k == 1 ? (uint32_t)rng_below(r, 100) : (uint32_t)rng_next(r);
}

static uint64_t pick_flags(Rng *r)
{
        static const uint64_t edges[] = { 0, 1, 2, 3, UINT64_C(1) << 63, UINT64_MAX, UINT32_MAX };
        uint64_t k = rng_below(r, 3);

        return k == 0 ? RNG_PICK(r, edges) : k == 1 ? rng_below(r, 4) : rng_next(r);
}

static char *pick_interface(Rng *r)
{
        static const char *const names[] = { VPROF_BUS_INTERFACE, VPROF_BUS_INTERFACE, VPROF_BUS_INTERFACE, "",
                                             "org.freedesktop.DBus.Properties", "org.vprof.Profiler2", "org.vprof",
                                             "org.freedesktop.DBus.Peer" };

        return rng_chance(r, 80) ? strdup(RNG_PICK(r, names)) : rng_utf8(r, 64);
}

static char *pick_property(Rng *r)
{
        static const char *const odd[] = { "", "version", "Version ", "Targets\n", "Frequency.Hz", "OffCpu" };
        uint64_t k = rng_below(r, 10);

        if (k < 6)
                return strdup(RNG_PICK(r, properties));
        if (k < 7)
                return strdup(RNG_PICK(r, odd));
        if (k < 8)
                return pick_long(r, "Version");
        if (k < 9)
                return rng_member(r);
        return rng_utf8(r, 64);
}

/* Set on a read-only property: mostly a value of a property's type, sometimes anything. */
static int append_property_value(Rng *r, sd_bus_message *m, int *fds)
{
        _cleanup_free_ char *s = NULL;

        switch (rng_below(r, 5)) {
        case 0:
                s = rng_utf8(r, 64);
                return s ? sd_bus_message_append(m, "v", "s", s) : -ENOMEM;
        case 1:
                return sd_bus_message_append(m, "v", "u", (uint32_t)rng_next(r));
        case 2:
                return sd_bus_message_append(m, "v", "t", rng_next(r));
        case 3:
                return sd_bus_message_append(m, "v", "b", (int)(rng_next(r) & 1));
        default:
                return fuzz_append_value(r, m, "v", FUZZ_MAX_DEPTH, fds);
        }
}

int fuzz_append_role(Fuzz *f, sd_bus_message *m, char role, int *fds)
{
        _cleanup_free_ char *s = NULL;
        Rng *r = &f->rng;

        switch (role) {
        case 'P':
                s = pick_target(f);
                break;
        case 'W':
                return sd_bus_message_append(m, "t", pick_window(r));
        case 'L':
                return sd_bus_message_append(m, "u", pick_limit(r));
        case 'F':
                return sd_bus_message_append(m, "t", pick_flags(r));
        case 'S':
        case 'V':
                s = pick_sort(f, role == 'V');
                break;
        case 'I':
                s = pick_interface(r);
                break;
        case 'N':
                s = pick_property(r);
                break;
        case 'X':
                return append_property_value(r, m, fds);
        default:
                return -EINVAL;
        }
        if (!s)
                return -ENOMEM;
        return sd_bus_message_append(m, "s", s);
}
