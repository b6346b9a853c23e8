/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "log.h"
#include "macros.h"

static char *strip(char *s)
{
        char *end;

        s += strspn(s, " \t");
        end = s + strlen(s);
        while (end > s && strchr(" \t\r\n", end[-1]))
                end--;
        *end = '\0';
        return s;
}

int config_file_parse(const char *path, const char *section, bool must_exist, config_assign_fn fn, void *userdata)
{
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        unsigned line = 0;
        char where[512];
        int r;

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT && !must_exist)
                        return 0;
                return log_error_errno(-errno, "Failed to open the configuration file %s: %m", path);
        }
        for (;;) {
                char *s, *eq;

                errno = 0;
                if (getline(&buf, &size, f) < 0) {
                        if (errno != 0)
                                return log_error_errno(-errno, "Failed to read %s: %m", path);
                        return 0;
                }
                line++;
                snprintf(where, sizeof(where), "%s:%u", path, line);
                s = strip(buf);
                if (IN_SET(s[0], '\0', '#', ';'))
                        continue;
                if (s[0] == '[') {
                        size_t n = strlen(section);

                        if (strncmp(s + 1, section, n) != 0 || strcmp(s + 1 + n, "]") != 0)
                                return log_error_errno(-EINVAL, "%s: unknown section '%s': expected [%s].", where,
                                                       s, section);
                        continue;
                }
                eq = strchr(s, '=');
                if (!eq)
                        return log_error_errno(-EINVAL, "%s: expected Key=Value, got '%s'.", where, s);
                *eq = '\0';
                r = fn(strip(s), strip(eq + 1), where, userdata);
                if (r < 0)
                        return r;
        }
}
