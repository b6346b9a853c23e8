/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The delta's sections, for its writer (profile-delta.c) and its replay (profile-delta-replay.c); nothing else
 * includes this. docs/STATE_FORMAT.md describes the records. */

#include "section-file.h"

#define TAG_HEADER SECTION_TAG('D', 'H', 'D', 'R')
#define TAG_FUNCTIONS SECTION_TAG('D', 'F', 'U', 'N')
#define TAG_MANGLED SECTION_TAG('D', 'M', 'N', 'G')
/* The ids of DFUN's functions that are inlined frames, ascending: written only when there are some. */
#define TAG_INLINED SECTION_TAG('D', 'I', 'N', 'L')
/* The ids of DFUN's functions that are lines of a function (profile_intern_line()), ascending, each with its
 * line: written only when there are some. */
#define TAG_LINES SECTION_TAG('D', 'L', 'I', 'N')
#define TAG_STACKS SECTION_TAG('D', 'S', 'T', 'K')
#define TAG_THREADS SECTION_TAG('D', 'T', 'H', 'R')
#define TAG_ENTRIES SECTION_TAG('D', 'E', 'N', 'T')
#define TAG_OTHER SECTION_TAG('D', 'O', 'T', 'H')

#define VALUES_SIZE (4 * sizeof(uint64_t))
#define STRING_MIN_SIZE (sizeof(uint32_t) + 1)
/* As profile-serialize.c: no sample is deeper, no thread name longer. */
#define STACK_FRAMES_MAX 4096
#define THREAD_NAME_MAX 255

/* The order of the thread ids in DTHR (ascending), for qsort() when writing and bsearch() when replaying. */
static inline int delta_compare_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}
