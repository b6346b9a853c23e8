/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "macros.h"
#include "python-layout.h"

/* What the drain needs to name a target's Python frames (issue 26): its interpreter's layout and PyCode_Type's
 * address (python-procs.c sets them with the BPF map's entry), and the cache of its code objects, read from the
 * process's memory with process_vm_readv(). Kept by the Target, freed with it. */

/* Code objects and bytes kept per target: a large service has some tens of thousands of functions; a code
 * object with its names and decoded table takes a few hundred bytes. */
#define TARGET_PYTHON_CODES_MAX 65536
#define TARGET_PYTHON_BYTES_MAX (32u * 1024u * 1024u)

typedef struct TargetPython TargetPython;

/* The interpreter of pid is of layout l, its code objects of type code_type (an absolute address): a new
 * TargetPython in *p, or *p updated (its cache emptied when the layout or the type moved: another image). */
int target_python_set(TargetPython **p, pid_t pid, const PythonLayout *l, uint64_t code_type);
TargetPython *target_python_free(TargetPython *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(TargetPython *, target_python_free);

/* A drain of the target's records begins: each code object met is checked again on its first hit. */
void target_python_next_generation(TargetPython *p);

/* A Python frame of a record: the code object's address and the instruction's byte offset in its bytecode. */
typedef struct TargetPythonFrame {
        const char *qualname; /* valid until the next call */
        const char *filename;
        int firstlineno;
        int line;             /* of the instruction; the first line when it has none */
} TargetPythonFrame;

/* 0 and *ret, or the errors of python_code_cache_get() (-EFAULT: the process's memory no longer has it; -ESRCH:
 * the target, pinned by pidfd, is gone, and what the cache holds of it is all there is). */
int target_python_frame(TargetPython *p, int pidfd, uint64_t code, uint64_t offset, TargetPythonFrame *ret);
