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

/* In array[0..n), sorted by the member field, the number of elements whose field is at or below x: the index after
 * the last one that starts at or below an address, 0 for none. The one binary search of the lookups by address
 * (symbols, mappings, FDEs); each then checks that the element found reaches that far. */
#define ARRAY_UPPER_BOUND(array, n, field, x)                                                                  \
        ({                                                                                                     \
                typeof(x) _x_ = (x);                                                                           \
                size_t _lo_ = 0, _hi_ = (n);                                                                   \
                                                                                                               \
                while (_lo_ < _hi_) {                                                                          \
                        size_t _mid_ = _lo_ + (_hi_ - _lo_) / 2;                                               \
                                                                                                               \
                        if ((array)[_mid_].field <= _x_)                                                       \
                                _lo_ = _mid_ + 1;                                                              \
                        else                                                                                   \
                                _hi_ = _mid_;                                                                  \
                }                                                                                              \
                _lo_;                                                                                          \
        })
