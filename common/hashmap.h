/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* Open-addressing hash map of opaque keys and values. It owns neither: callers free what they stored. */

typedef struct HashOps {
        uint64_t (*hash)(const void *key);
        bool (*equal)(const void *a, const void *b);
} HashOps;

/* Keys are integers stored in the pointer: UINT64_TO_PTR(x). */
extern const HashOps uint64_hash_ops;
/* Keys are NUL-terminated strings. */
extern const HashOps string_hash_ops;

#define UINT64_TO_PTR(u) ((void *)(uintptr_t)(u))
#define PTR_TO_UINT64(p) ((uint64_t)(uintptr_t)(p))

uint64_t hash_u64(uint64_t x);
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);

typedef struct Hashmap Hashmap;

Hashmap *hashmap_new(const HashOps *ops);
Hashmap *hashmap_free(Hashmap *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(Hashmap *, hashmap_free);

/* -EEXIST when the key is present already, -ENOMEM. */
int hashmap_put(Hashmap *h, const void *key, void *value);
void *hashmap_get(const Hashmap *h, const void *key);
bool hashmap_contains(const Hashmap *h, const void *key);
/* Returns the removed value, NULL when absent. */
void *hashmap_remove(Hashmap *h, const void *key);
size_t hashmap_size(const Hashmap *h);
/* The bytes of its table (slots and their states) and itself; 0 for NULL. */
size_t hashmap_memory(const Hashmap *h);
void hashmap_clear(Hashmap *h);

/* Iteration: size_t i = 0; while (hashmap_iterate(h, &i, &key, &value)) ...; removing the entry just returned
 * is allowed, inserting is not. */
bool hashmap_iterate(const Hashmap *h, size_t *i, void **ret_key, void **ret_value);

#define HASHMAP_FOREACH(value, h)                                                                              \
        for (size_t _i_ = 0; hashmap_iterate((h), &_i_, NULL, (void **)&(value));)
