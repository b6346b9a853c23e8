/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "macros.h"

/* From libstdc++ (the Itanium C++ ABI): callable from C, linked with -lstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Legacy Rust escapes in identifiers, after rustc's legacy mangling. */
static const struct {
        const char *escape;
        char c;
} rust_escapes[] = {
        { "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' }, { "$GT$", '>' },
        { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

static bool is_lower_hex(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Appends one identifier, unescaped, to out (room for at least len bytes more: unescaping only shrinks);
 * false when an escape is unknown, so the name is not legacy Rust after all. */
static bool rust_unescape(const char *id, size_t len, char *out, size_t *pos)
{
        size_t i = 0;

        /* An identifier that starts with an escape gets an underscore before it. */
        if (len > 1 && id[0] == '_' && id[1] == '$')
                i = 1;
        while (i < len) {
                bool done = false;

                if (id[i] == '.' && i + 1 < len && id[i + 1] == '.') {
                        out[(*pos)++] = ':';
                        out[(*pos)++] = ':';
                        i += 2;
                        continue;
                }
                if (id[i] != '$') {
                        out[(*pos)++] = id[i++];
                        continue;
                }
                for (size_t e = 0; e < ELEMENTSOF(rust_escapes); e++) {
                        size_t el = strlen(rust_escapes[e].escape);

                        if (i + el <= len && memcmp(id + i, rust_escapes[e].escape, el) == 0) {
                                out[(*pos)++] = rust_escapes[e].c;
                                i += el;
                                done = true;
                                break;
                        }
                }
                if (done)
                        continue;
                /* $uXX$: a character by its code, two hex digits in the printable ASCII range. */
                if (i + 5 <= len && id[i + 1] == 'u' && is_lower_hex(id[i + 2]) && is_lower_hex(id[i + 3]) &&
                    id[i + 4] == '$') {
                        char hex[3] = { id[i + 2], id[i + 3], '\0' };
                        unsigned long c = strtoul(hex, NULL, 16);

                        if (c < 0x20 || c > 0x7e)
                                return false;
                        out[(*pos)++] = (char)c;
                        i += 5;
                        continue;
                }
                return false;
        }
        return true;
}

/* 1 for a legacy Rust name, demangled into *ret; 0 when name is not one. */
static int demangle_rust_legacy(const char *name, char **ret)
{
        size_t n = strlen(name), pos = 0, count = 0;
        _cleanup_free_ char *out = NULL;
        const char *p, *end;

        /* "_ZN" paths "17h" 16 hex digits "E": the hash is the last path element. */
        if (n < 3 + 20 + 1 || strncmp(name, "_ZN", 3) != 0 || name[n - 1] != 'E' ||
            strncmp(name + n - 20, "17h", 3) != 0)
                return 0;
        for (size_t i = n - 17; i < n - 1; i++)
                if (!is_lower_hex(name[i]))
                        return 0;

        out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        p = name + 3;
        end = name + n - 20; /* the hash element */
        while (p < end) {
                char *e;
                unsigned long len;

                if (*p < '1' || *p > '9')
                        return 0;
                len = strtoul(p, &e, 10);
                if (len == 0 || len > (size_t)(end - e))
                        return 0;
                if (count++ > 0) {
                        out[pos++] = ':';
                        out[pos++] = ':';
                }
                if (!rust_unescape(e, len, out, &pos))
                        return 0;
                p = e + len;
        }
        if (count == 0)
                return 0;
        out[pos] = '\0';
        *ret = TAKE_PTR(out);
        return 1;
}

int demangle_symbol(const char *name, char **ret)
{
        char *d;
        int status = 0, r;

        if (!name || !ret)
                return -EINVAL;
        if (strncmp(name, "_Z", 2) != 0)
                return 0; /* C, Rust v0 ("_R"), and anything else stay */

        r = demangle_rust_legacy(name, ret);
        if (r != 0)
                return r;

        d = __cxa_demangle(name, NULL, NULL, &status);
        if (status == -1)
                return -ENOMEM;
        if (!d || status != 0)
                return 0; /* not a valid mangled name: a C symbol that happens to start with _Z */
        *ret = d;
        return 1;
}
