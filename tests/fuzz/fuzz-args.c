/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "fuzz-args.h"
#include "macros.h"

static const char basic_types[] = "ybnqiuxtdsog";

static bool put(char *sig, size_t size, const char *s)
{
        size_t n = strlen(sig), k = strlen(s);

        if (n + k >= size)
                return false;
        memcpy(sig + n, s, k + 1);
        return true;
}

bool fuzz_random_type(Rng *r, unsigned depth, bool fds, char *sig, size_t size)
{
        size_t start = strlen(sig);
        char basic[2] = { basic_types[rng_below(r, sizeof(basic_types) - 1)], '\0' };
        bool ok = true;

        if (fds && rng_chance(r, 3))
                basic[0] = 'h';
        switch (depth == 0 ? 0 : rng_below(r, 10)) {
        case 6:
                ok = put(sig, size, "a") && fuzz_random_type(r, depth - 1, fds, sig, size);
                break;
        case 7:
                basic[0] = basic_types[rng_below(r, sizeof(basic_types) - 1)];
                ok = put(sig, size, "a{") && put(sig, size, basic) &&
                     fuzz_random_type(r, depth - 1, fds, sig, size) && put(sig, size, "}");
                break;
        case 8: {
                unsigned n = 1 + (unsigned)rng_below(r, 4);

                ok = put(sig, size, "(");
                for (unsigned i = 0; ok && i < n; i++)
                        ok = fuzz_random_type(r, depth - 1, fds, sig, size);
                ok = ok && put(sig, size, ")");
                break;
        }
        case 9:
                ok = put(sig, size, "v");
                break;
        default:
                ok = put(sig, size, basic);
        }
        if (!ok)
                sig[start] = '\0';
        return ok;
}

size_t fuzz_type_length(const char *sig)
{
        size_t n, k;

        switch (sig[0]) {
        case 'a':
                if (sig[1] == '{') {
                        n = 2 + fuzz_type_length(sig + 2); /* the key is basic: one character */
                        k = fuzz_type_length(sig + n);
                        return k && sig[n + k] == '}' ? n + k + 1 : 0;
                }
                k = fuzz_type_length(sig + 1);
                return k ? k + 1 : 0;
        case '(':
                n = 1;
                while (sig[n] != ')') {
                        k = fuzz_type_length(sig + n);
                        if (k == 0)
                                return 0;
                        n += k;
                }
                return n + 1;
        case '\0':
        case ')':
        case '}':
                return 0;
        default:
                return 1;
        }
}

static int append_basic(Rng *r, sd_bus_message *m, char type, int *fds)
{
        static const double doubles[] = { 0.0, -0.0, 1.0, -1.0, DBL_MAX, -DBL_MAX, DBL_MIN, 4.9e-324, NAN, INFINITY,
                                          -INFINITY };
        _cleanup_free_ char *s = NULL;
        _cleanup_close_ int fd = -1;
        bool edge = rng_chance(r, 50);
        uint64_t u = rng_next(r);
        union {
                uint8_t y;
                int b;
                int16_t n;
                uint16_t q;
                int32_t i;
                uint32_t u;
                int64_t x;
                uint64_t t;
                double d;
        } v;
        const void *p = &v;

        /* Boundaries half of the time: 0, 1, all ones, the signed extremes. */
        if (edge)
                u = RNG_PICK(r, ((const uint64_t[]){ 0, 1, UINT64_MAX, INT64_MAX, (uint64_t)INT64_MIN,
                                                     UINT32_MAX, INT32_MAX, (uint64_t)INT32_MIN, UINT16_MAX,
                                                     INT16_MAX, (uint64_t)INT16_MIN, UINT8_MAX }));
        switch (type) {
        case 'y':
                v.y = (uint8_t)u;
                break;
        case 'b':
                v.b = (int)(u & 1);
                break;
        case 'n':
                v.n = (int16_t)u;
                break;
        case 'q':
                v.q = (uint16_t)u;
                break;
        case 'i':
                v.i = (int32_t)u;
                break;
        case 'u':
                v.u = (uint32_t)u;
                break;
        case 'x':
                v.x = (int64_t)u;
                break;
        case 't':
                v.t = u;
                break;
        case 'd':
                if (edge)
                        v.d = RNG_PICK(r, doubles);
                else
                        memcpy(&v.d, &u, sizeof(v.d));
                break;
        case 's':
                s = rng_utf8(r, rng_chance(r, 2) ? 65536 : 64);
                p = s;
                break;
        case 'o':
                s = rng_object_path(r);
                p = s;
                break;
        case 'g':
                s = calloc(1, 256);
                for (unsigned i = 0, n = (unsigned)rng_below(r, 4); s && i < n; i++)
                        (void)fuzz_random_type(r, 2, false, s, 256);
                p = s;
                break;
        case 'h':
                fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                p = &fd; /* sd-bus keeps a copy */
                (*fds)--;
                break;
        default:
                return -EINVAL;
        }
        if (!p)
                return -ENOMEM;
        return sd_bus_message_append_basic(m, type, p);
}

/* The contents of the container type of length len at the start of type: "a(us)" -> "(us)", "(us)" -> "us",
 * "{sv}" -> "sv". */
static int container_contents(const char *type, size_t len, char *out, size_t size)
{
        size_t n = type[0] == 'a' ? len - 1 : len - 2;

        if (len < 2 || n >= size)
                return -EINVAL;
        memcpy(out, type + 1, n);
        out[n] = '\0';
        return 0;
}

static int count_fds(const char *type)
{
        int n = 0;

        for (; *type; type++)
                n += *type == 'h';
        return n;
}

static int append_array(Rng *r, sd_bus_message *m, const char *contents, unsigned depth, int *fds)
{
        size_t n = rng_below(r, 4);
        int k;

        /* Long arrays only of basic elements, so that a message stays small enough to build quickly. */
        if (rng_chance(r, 5))
                n = strchr("a({v", contents[0]) ? 8 : 1000;
        /* Each element takes as many file descriptors as its type has 'h' (variants in it take them only while
         * some are left). */
        k = count_fds(contents);
        if (k > 0)
                n = MIN(n, *fds > 0 ? (size_t)(*fds / k) : 0);
        k = sd_bus_message_open_container(m, 'a', contents);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                if (contents[0] == '{') {
                        char entry[256];

                        k = container_contents(contents, strlen(contents), entry, sizeof(entry));
                        if (k < 0)
                                return k;
                        k = sd_bus_message_open_container(m, 'e', entry);
                        if (k < 0)
                                return k;
                        k = fuzz_append_value(r, m, entry, depth, fds);
                        if (k < 0)
                                return k;
                        k = fuzz_append_value(r, m, entry + 1, depth, fds);
                        if (k < 0)
                                return k;
                        k = sd_bus_message_close_container(m);
                } else
                        k = fuzz_append_value(r, m, contents, depth, fds);
                if (k < 0)
                        return k;
        }
        return sd_bus_message_close_container(m);
}

int fuzz_append_value(Rng *r, sd_bus_message *m, const char *type, unsigned depth, int *fds)
{
        size_t len = fuzz_type_length(type);
        char contents[256] = "";
        int k;

        if (len == 0)
                return -EINVAL;
        depth = depth > 0 ? depth - 1 : 0;
        switch (type[0]) {
        case 'a':
        case '(':
                k = container_contents(type, len, contents, sizeof(contents));
                if (k < 0)
                        return k;
                if (type[0] == 'a')
                        return append_array(r, m, contents, depth, fds);
                k = sd_bus_message_open_container(m, 'r', contents);
                for (const char *t = contents; k >= 0 && *t; t += fuzz_type_length(t))
                        k = fuzz_append_value(r, m, t, depth, fds);
                return k < 0 ? k : sd_bus_message_close_container(m);
        case 'v':
                (void)fuzz_random_type(r, depth, *fds > 0, contents, sizeof(contents));
                k = sd_bus_message_open_container(m, 'v', contents);
                if (k < 0)
                        return k;
                k = fuzz_append_value(r, m, contents, depth, fds);
                return k < 0 ? k : sd_bus_message_close_container(m);
        default:
                return append_basic(r, m, type[0], fds);
        }
}

int fuzz_append_random_args(Rng *r, sd_bus_message *m, int *fds)
{
        unsigned n = (unsigned)rng_below(r, 5);
        size_t total = 0;
        int k;

        for (unsigned i = 0; i < n; i++) {
                char type[128] = "";

                /* The message's signature has room for 255 characters, a few of them taken by other arguments. */
                if (!fuzz_random_type(r, FUZZ_MAX_DEPTH, *fds > 0, type, sizeof(type)) ||
                    total + strlen(type) > 240)
                        continue;
                total += strlen(type);
                k = fuzz_append_value(r, m, type, FUZZ_MAX_DEPTH, fds);
                if (k < 0)
                        return k;
        }
        return 0;
}
