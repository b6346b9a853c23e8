/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* A pprof file read back (vprofctl diff --base-pprof): its samples as stacks of named frames, the functions
 * named as vprofd names them, so that a profile written earlier by vprof compares row by row with a window of
 * today. The file is untrusted: every id is looked up and checked, every count bounded, and what does not fit is
 * an error, never a guess. The strings point into the decoded message, which the PprofRead owns. */

typedef struct PprofReadFunction {
        const char *module; /* vprofd's name for it: a file's base name, "[kernel]", a Python source file */
        const char *name;
        bool inlined; /* an inlined frame, a row apart from the same function called */
        bool kernel;
} PprofReadFunction;

typedef struct PprofReadStack {
        uint32_t *frames; /* indices into functions, outermost first */
        size_t n_frames;
        uint32_t n_kernel;  /* the last n_kernel frames are kernel code */
        uint32_t tid;       /* the "tid" label; 0: none */
        const char *thread; /* the "comm" label; NULL: none */
        uint64_t samples;
} PprofReadStack;

typedef struct PprofRead {
        uint32_t frequency;            /* from the sampling period */
        uint64_t start_usec, end_usec; /* CLOCK_REALTIME, from time_nanos and duration_nanos */
        uint64_t total_samples;
        PprofReadFunction *functions;
        size_t n_functions;
        PprofReadStack *stacks;
        size_t n_stacks;
        void *message; /* the decoded profile.proto, which the strings point into */
} PprofRead;

PprofRead *pprof_read_free(PprofRead *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(PprofRead *, pprof_read_free);

/* The most a file may inflate to: a pprof of vprof's largest reply is a few MiB. */
#define PPROF_READ_MAX_BYTES ((size_t)256 * 1024 * 1024)

/* data: a pprof file, gzip-compressed or not. -EBADMSG for what is no pprof profile or contradicts itself (an id
 * that names nothing, a negative count), -EMEDIUMTYPE for a profile without the sampling period, the duration or
 * a count of samples that a comparison needs, -EFBIG past PPROF_READ_MAX_BYTES, -ENOMEM. */
int pprof_read(const uint8_t *data, size_t size, PprofRead **ret);
