/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the tables know of a function besides its counts: its names, where its code is, whether it is an inlined
 * frame. */
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
