/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A GetProfile reply, decoded (pprof-export.c) or made by hand (the tests, the bench): what a pprof file is built
 * from (pprof-build.h). The strings and frame arrays are borrowed (from the reply message, which outlives the
 * data); the arrays of structs are owned, freed by pprof_data_done(). Indices are checked on decoding: a stack's
 * frames are indices into its process's functions. org.vprof.Profiler1.xml says what each field means. */

typedef struct PprofMapping {
        const char *module;
        const char *path;
        const char *build_id; /* hex, "" for none */
        uint64_t start, limit, file_offset;
} PprofMapping;

typedef struct PprofFunction {
        const char *module;
        const char *name;
        const char *system_name; /* the mangled symbol when name is demangled, else "" */
        uint64_t address;        /* run-time address of the symbol's start, 0 when unknown */
        bool inlined;            /* an inlined frame: in a stack, inlined into the frame after it */
        const char *filename;    /* its source file (GetFunctionSources), NULL when unknown */
        int64_t line;            /* the line of its start in filename */
        uint32_t frame_line;     /* a line of a function (GetProfile's lines): where the frame was, else 0 */
} PprofFunction;

typedef struct PprofThread {
        uint32_t tid;
        const char *name;
} PprofThread;

typedef struct PprofStack {
        const uint32_t *frames; /* indices into the process's functions, innermost first */
        size_t n_frames;
        uint32_t n_kernel; /* the first n_kernel frames are kernel code */
        uint32_t tid;      /* 0: unknown */
        uint64_t samples;  /* on-CPU */
        uint64_t off_ns;   /* off-CPU */
} PprofStack;

typedef struct PprofProcess {
        uint32_t pid;
        const char *comm;
        const char *unit; /* "" when the target is no systemd unit */
        PprofMapping *mappings;
        size_t n_mappings;
        PprofFunction *functions;
        size_t n_functions;
        PprofThread *threads;
        size_t n_threads;
        PprofStack *stacks;
        size_t n_stacks;
} PprofProcess;

typedef struct PprofData {
        uint64_t total_samples;
        uint64_t other_samples; /* in stacks left out of the reply */
        uint64_t start_usec, end_usec; /* CLOCK_REALTIME */
        uint32_t frequency;
        bool off_cpu;
        PprofProcess *processes;
        size_t n_processes;
} PprofData;

void pprof_data_done(PprofData *d);
