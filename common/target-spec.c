/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "parse-util.h"
#include "target-spec.h"

static const char *const unit_suffixes[] = { ".service", ".scope", ".slice", ".socket", ".mount", ".swap" };

/* systemd's unit name characters (unit-name.c's VALID_CHARS with '@' for instances); escaped names use '\'. */
static bool unit_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(":-_.\\@", c);
}

bool target_spec_is_unit_name(const char *s)
{
        size_t n;

        assert(s);

        n = strlen(s);
        if (n == 0 || n >= TARGET_SPEC_UNIT_MAX || s[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!unit_char(s[i]))
                        return false;
        for (size_t i = 0; i < ELEMENTSOF(unit_suffixes); i++) {
                size_t k = strlen(unit_suffixes[i]);
                /* A suffix alone (".service") is no name. */
                if (n > k && strcmp(s + n - k, unit_suffixes[i]) == 0)
                        return true;
        }
        return false;
}

/* "/", or components of printable characters other than "." and "..", no empty ones, no trailing slash. */
static bool cgroup_path_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n >= TARGET_SPEC_CGROUP_MAX || s[0] != '/')
                return false;
        if (n == 1)
                return true;
        for (const char *c = s + 1;;) {
                size_t len = strcspn(c, "/");

                if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                for (size_t i = 0; i < len; i++)
                        if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
                                return false;
                if (c[len] == '\0')
                        return true;
                c += len + 1;
        }
}

int target_spec_parse(const char *s, TargetSpec *ret)
{
        uint32_t pid;

        assert(s);
        assert(ret);

        if (parse_pid(s, &pid) >= 0) {
                *ret = (TargetSpec){ .kind = TARGET_SPEC_PID, .pid = pid };
                return 0;
        }
        if (s[0] == '/') {
                if (!cgroup_path_valid(s))
                        return -EINVAL;
                *ret = (TargetSpec){ .kind = TARGET_SPEC_CGROUP, .name = s };
                return 0;
        }
        if (target_spec_is_unit_name(s)) {
                *ret = (TargetSpec){ .kind = TARGET_SPEC_UNIT, .name = s };
                return 0;
        }
        return -EINVAL;
}

const char *target_spec_kind_to_string(TargetSpecKind k)
{
        static const char *const names[_TARGET_SPEC_KIND_MAX] = {
                [TARGET_SPEC_PID] = "process",
                [TARGET_SPEC_UNIT] = "unit",
                [TARGET_SPEC_CGROUP] = "cgroup",
        };
        return k >= 0 && k < _TARGET_SPEC_KIND_MAX ? names[k] : NULL;
}
