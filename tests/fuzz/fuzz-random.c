/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "fuzz-random.h"
#include "macros.h"

uint64_t rng_next(Rng *r)
{
        uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

uint64_t rng_below(Rng *r, uint64_t n)
{
        return rng_next(r) % n;
}

bool rng_chance(Rng *r, unsigned percent)
{
        return rng_below(r, 100) < percent;
}

/* sd-bus takes only Unicode scalar values that are not noncharacters (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF). */
static uint32_t random_code_point(Rng *r)
{
        for (;;) {
                uint32_t c;

                switch (rng_below(r, 10)) {
                case 0:
                        c = 1 + (uint32_t)rng_below(r, 0x1f); /* control characters */
                        break;
                case 1:
                        c = 0x80 + (uint32_t)rng_below(r, 0x800 - 0x80);
                        break;
                case 2:
                        c = 0x800 + (uint32_t)rng_below(r, 0x10000 - 0x800);
                        break;
                case 3:
                        c = 0x10000 + (uint32_t)rng_below(r, 0x110000 - 0x10000);
                        break;
                default:
                        c = 0x20 + (uint32_t)rng_below(r, 0x7f - 0x20);
                }
                if ((c >= 0xd800 && c <= 0xdfff) || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
                        continue;
                return c;
        }
}

static size_t utf8_encode(uint32_t c, char *out)
{
        if (c < 0x80) {
                out[0] = (char)c;
                return 1;
        }
        if (c < 0x800) {
                out[0] = (char)(0xc0 | (c >> 6));
                out[1] = (char)(0x80 | (c & 0x3f));
                return 2;
        }
        if (c < 0x10000) {
                out[0] = (char)(0xe0 | (c >> 12));
                out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
                out[2] = (char)(0x80 | (c & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | (c >> 18));
        out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[3] = (char)(0x80 | (c & 0x3f));
        return 4;
}

char *rng_utf8(Rng *r, size_t max_bytes)
{
        size_t target = max_bytes ? rng_below(r, max_bytes + 1) : 0, n = 0;
        char *s = malloc(max_bytes + 1);

        if (!s)
                return NULL;
        while (n < target) {
                char buf[4];
                size_t k = utf8_encode(random_code_point(r), buf);

                if (n + k > target)
                        break;
                for (size_t i = 0; i < k; i++)
                        s[n++] = buf[i];
        }
        s[n] = '\0';
        return s;
}

static const char name_first[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
static const char name_rest[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";

char *rng_member(Rng *r)
{
        /* Mostly short, sometimes at the 255-character limit. */
        size_t n = rng_chance(r, 5) ? 255 : 1 + rng_below(r, 24);
        char *s = malloc(n + 1);

        if (!s)
                return NULL;
        s[0] = name_first[rng_below(r, sizeof(name_first) - 1)];
        for (size_t i = 1; i < n; i++)
                s[i] = name_rest[rng_below(r, sizeof(name_rest) - 1)];
        s[n] = '\0';
        return s;
}

char *rng_object_path(Rng *r)
{
        size_t elements = rng_below(r, 5), n = 0;
        char *s = malloc(elements * 17 + 2);

        if (!s)
                return NULL;
        if (elements == 0)
                s[n++] = '/';
        for (size_t e = 0; e < elements; e++) {
                size_t len = 1 + rng_below(r, 16);

                s[n++] = '/';
                for (size_t i = 0; i < len; i++)
                        s[n++] = name_rest[rng_below(r, sizeof(name_rest) - 1)];
        }
        s[n] = '\0';
        return s;
}
