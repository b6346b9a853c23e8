/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the tables know of a function besides its counts: its names, where its code is, whether it is an inlined
 * frame, its lines. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile-internal.h"
#include "utf8.h"

static int grow_u32(uint32_t **array, size_t *allocated, size_t needed)
{
        uint32_t *a;
        size_t n;

        if (needed <= *allocated)
                return 0;
        n = MAX(*allocated * 2, (size_t)64);
        a = realloc(*array, n * sizeof(uint32_t));
        if (!a)
                return -ENOMEM;
        *array = a;
        *allocated = n;
        return 0;
}

int profile_function_name(const Profile *p, uint32_t id, const char **ret_module, const char **ret_function)
{
        assert(p);
        assert(ret_module);
        assert(ret_function);

        if (id >= p->n_functions)
                return -ENOENT;
        *ret_module = p->modules[p->functions[id]->key.module_id]->name;
        *ret_function = p->functions[id]->name;
        return 0;
}

int profile_set_mangled(Profile *p, uint32_t id, const char *mangled)
{
        char *copy;
        int r;

        assert(p);
        assert(mangled);

        if (id >= p->n_functions)
                return -EINVAL;
        /* Two symbols may demangle alike (a constructor's complete and base object versions): the first
         * one's name stands for the row. */
        if (p->functions[id]->mangled || id == p->other_id || id == p->unknown_id)
                return 0;
        r = grow_u32(&p->mangled_log, &p->allocated_mangled_log, p->n_mangled_log + 1);
        if (r < 0)
                return r;
        copy = utf8_escape_dup(mangled);
        if (!copy)
                return -ENOMEM;
        p->functions[id]->mangled = copy;
        p->entry_bytes += strlen(copy) + 1;
        p->mangled_log[p->n_mangled_log++] = id;
        return 0;
}

const char *profile_function_mangled(const Profile *p, uint32_t id)
{
        return id < p->n_functions ? p->functions[id]->mangled : NULL;
}

int profile_set_function_address(Profile *p, uint32_t id, uint64_t address)
{
        assert(p);

        if (id >= p->n_functions)
                return -EINVAL;
        /* As the mangled name: the first address stands for the row (two symbols may share a name). */
        if (p->functions[id]->address || id == p->other_id || id == p->unknown_id)
                return 0;
        p->functions[id]->address = address;
        return 0;
}

uint64_t profile_function_address(const Profile *p, uint32_t id)
{
        return id < p->n_functions ? p->functions[id]->address : 0;
}

bool profile_function_inlined(const Profile *p, uint32_t id)
{
        return id < p->n_functions && p->functions[id]->key.inlined;
}

uint32_t profile_function_line(const Profile *p, uint32_t id)
{
        return id < p->n_functions ? p->functions[id]->key.line : 0;
}

uint32_t profile_function_whole(const Profile *p, uint32_t id)
{
        return id < p->n_functions ? p->functions[id]->counted->id : id;
}

int profile_intern_line(Profile *p, const char *module, const char *function, uint32_t line, uint32_t *ret_id)
{
        _cleanup_free_ char *escaped_module = NULL, *escaped_function = NULL;
        Function *existing;
        uint32_t whole;
        int r;

        assert(p);
        assert(module);
        assert(function);
        assert(ret_id);

        r = utf8_escape_or_keep(module, &escaped_module, &module);
        if (r < 0)
                return r;
        r = utf8_escape_or_keep(function, &escaped_function, &function);
        if (r < 0)
                return r;
        /* A line seen before, the drain's common case, in one lookup; the whole function only for a new one. */
        if (line != 0) {
                existing = profile_find_function(p, module, function, false, line);
                if (existing) {
                        *ret_id = existing->id;
                        return 0;
                }
        }
        r = profile_intern_function(p, module, function, &whole);
        if (r < 0 || line == 0 || whole == p->other_id)
                goto done;
        /* Past the limit a new line is its function: the line is lost, no count is. */
        if (!profile_functions_full(p))
                return profile_function_append(p, module, function, false, line, ret_id);
done:
        *ret_id = whole;
        return r;
}
