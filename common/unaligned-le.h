/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Little-endian integers at any alignment, as the saved-state formats store them (section-file, section-journal). */

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void put_le32(uint8_t *p, uint32_t v)
{
        v = htole32(v);
        memcpy(p, &v, sizeof(v));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
        v = htole64(v);
        memcpy(p, &v, sizeof(v));
}

static inline uint32_t get_le32(const uint8_t *p)
{
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return le32toh(v);
}

static inline uint64_t get_le64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return le64toh(v);
}
