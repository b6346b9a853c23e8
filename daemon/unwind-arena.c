/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-arena.h"

typedef struct Range {
        uint32_t first, n;
        uint64_t due; /* quarantined ranges: free from then on */
} Range;

struct UnwindArena {
        uint32_t size;
        uint64_t quarantine_usec;
        Range *free;        /* sorted by first, never adjacent (merged) */
        size_t n_free, cap_free;
        Range *quarantine;  /* in release order, so sorted by due */
        size_t n_quarantine, cap_quarantine;
        uint32_t used, quarantined;
        uint64_t *ids;      /* per id: 0 free, UINT64_MAX in use, else free from then on */
        uint32_t n_ids;
};

#define ID_IN_USE UINT64_MAX

int unwind_arena_new(uint32_t size, uint32_t n_ids, uint64_t quarantine_usec, UnwindArena **ret)
{
        UnwindArena *a;

        if (size == 0 || n_ids < 2)
                return -EINVAL;
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->size = size;
        a->quarantine_usec = quarantine_usec;
        a->n_ids = n_ids;
        a->ids = calloc(n_ids, sizeof(*a->ids));
        a->free = malloc(sizeof(*a->free));
        if (!a->ids || !a->free) {
                unwind_arena_free(a);
                return -ENOMEM;
        }
        a->ids[0] = ID_IN_USE; /* 0 is "no table" */
        a->free[0] = (Range){ .first = 0, .n = size };
        a->n_free = a->cap_free = 1;
        *ret = a;
        return 0;
}

UnwindArena *unwind_arena_free(UnwindArena *a)
{
        if (!a)
                return NULL;
        free(a->free);
        free(a->quarantine);
        free(a->ids);
        free(a);
        return NULL;
}

static int grow(Range **v, size_t *cap, size_t need)
{
        Range *p;
        size_t c;

        if (need <= *cap)
                return 0;
        c = MAX(need, *cap * 2);
        p = realloc(*v, c * sizeof(**v));
        if (!p)
                return -ENOMEM;
        *v = p;
        *cap = c;
        return 0;
}

/* Put [first, first + n) back among the free ranges, merged with its neighbours. */
static int insert_free(UnwindArena *a, uint32_t first, uint32_t n)
{
        size_t i = 0;
        bool left, right;

        while (i < a->n_free && a->free[i].first < first)
                i++;
        left = i > 0 && a->free[i - 1].first + a->free[i - 1].n == first;
        right = i < a->n_free && first + n == a->free[i].first;
        if (left && right) {
                a->free[i - 1].n += n + a->free[i].n;
                memmove(a->free + i, a->free + i + 1, (a->n_free - i - 1) * sizeof(*a->free));
                a->n_free--;
        } else if (left)
                a->free[i - 1].n += n;
        else if (right) {
                a->free[i].first = first;
                a->free[i].n += n;
        } else {
                if (grow(&a->free, &a->cap_free, a->n_free + 1) < 0)
                        return -ENOMEM;
                memmove(a->free + i + 1, a->free + i, (a->n_free - i) * sizeof(*a->free));
                a->free[i] = (Range){ .first = first, .n = n };
                a->n_free++;
        }
        return 0;
}

/* The quarantined ranges whose time has come become free. The caller's clock never goes back, so they are
 * in the order of their time. */
static int release_due(UnwindArena *a, uint64_t now_usec)
{
        size_t k = 0;
        int r = 0;

        while (k < a->n_quarantine && a->quarantine[k].due <= now_usec) {
                r = insert_free(a, a->quarantine[k].first, a->quarantine[k].n);
                if (r < 0)
                        break;
                a->quarantined -= a->quarantine[k].n;
                k++;
        }
        if (k > 0) {
                memmove(a->quarantine, a->quarantine + k, (a->n_quarantine - k) * sizeof(*a->quarantine));
                a->n_quarantine -= k;
        }
        return r;
}

int unwind_arena_alloc(UnwindArena *a, uint32_t n, uint64_t now_usec, uint32_t *ret_first)
{
        int r;

        if (n == 0)
                return -EINVAL;
        r = release_due(a, now_usec);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_free; i++) {
                if (a->free[i].n < n)
                        continue;
                *ret_first = a->free[i].first;
                a->free[i].first += n;
                a->free[i].n -= n;
                if (a->free[i].n == 0) {
                        memmove(a->free + i, a->free + i + 1, (a->n_free - i - 1) * sizeof(*a->free));
                        a->n_free--;
                }
                a->used += n;
                return 0;
        }
        return -ENOSPC;
}

int unwind_arena_release(UnwindArena *a, uint32_t first, uint32_t n, uint64_t now_usec)
{
        if (n == 0 || n > a->used || first > a->size || n > a->size - first)
                return -EINVAL;
        if (grow(&a->quarantine, &a->cap_quarantine, a->n_quarantine + 1) < 0)
                return -ENOMEM;
        a->quarantine[a->n_quarantine++] = (Range){ .first = first, .n = n, .due = now_usec + a->quarantine_usec };
        a->used -= n;
        a->quarantined += n;
        return 0;
}

int unwind_arena_alloc_id(UnwindArena *a, uint64_t now_usec, uint32_t *ret_id)
{
        for (uint32_t id = 1; id < a->n_ids; id++)
                if (a->ids[id] != ID_IN_USE && a->ids[id] <= now_usec) {
                        a->ids[id] = ID_IN_USE;
                        *ret_id = id;
                        return 0;
                }
        return -ENOSPC;
}

void unwind_arena_release_id(UnwindArena *a, uint32_t id, uint64_t now_usec)
{
        if (id > 0 && id < a->n_ids && a->ids[id] == ID_IN_USE)
                a->ids[id] = now_usec + a->quarantine_usec;
}

size_t unwind_arena_memory(const UnwindArena *a)
{
        return sizeof(*a) + (a->cap_free + a->cap_quarantine) * sizeof(Range) + a->n_ids * sizeof(*a->ids);
}

uint32_t unwind_arena_size(const UnwindArena *a)
{
        return a->size;
}

uint32_t unwind_arena_used(const UnwindArena *a)
{
        return a->used;
}

uint32_t unwind_arena_quarantined(const UnwindArena *a)
{
        return a->quarantined;
}

uint32_t unwind_arena_largest_free(UnwindArena *a, uint64_t now_usec)
{
        uint32_t largest = 0;

        (void)release_due(a, now_usec);
        for (size_t i = 0; i < a->n_free; i++)
                largest = MAX(largest, a->free[i].n);
        return largest;
}

uint64_t unwind_arena_next_release(const UnwindArena *a)
{
        return a->n_quarantine > 0 ? a->quarantine[0].due : 0;
}
