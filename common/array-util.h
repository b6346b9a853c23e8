/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "macros.h"

/* Room for one more element of size in the array *array_ptr (a pointer to the array's pointer), which holds n of
 * *allocated: doubled when full, so that reading a reply of n elements costs O(n). -ENOMEM leaves it as it was. */
static inline int array_grow_one(void *array_ptr, size_t *allocated, size_t n, size_t size)
{
        size_t want;
        void *a;

        if (n < *allocated)
                return 0;
        want = MAX(*allocated * 2, (size_t)16);
        a = reallocarray(*(void **)array_ptr, want, size);
        if (!a)
                return -ENOMEM;
        *(void **)array_ptr = a;
        *allocated = want;
        return 0;
}
