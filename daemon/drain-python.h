/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "target.h"
#include "vprof-abi.h"

typedef struct DrainPythonStats {
        uint64_t frames;  /* Python frames of the records counted */
        uint64_t dropped; /* left out: their native frame not in the stack counted, or no room */
        uint64_t unknown; /* of frames, whose code object could not be read */
} DrainPythonStats;

/* The Python frames of a record (VPROF_PYTHON_FRAME_TAG words after its user frames, common/vprof-abi.h) named:
 * each through the target's code objects (target-python.h) as its qualified name in its file (the .py path, the
 * frame's module), the file and first line its source; one that cannot be read "[python: unknown]". */

/* The name of a frame whose code object could not be read (the function; its module is "[python]"). */
#define DRAIN_PYTHON_UNKNOWN "[python: unknown]"

/* The frames of the run that native user frame `native` (a position in the record's user frames) runs, from
 * word *at on, into frames[] (innermost first) while room keeps one entry for each of the `after` frames still to
 * come; *at moves past them. How many it added, or -ENOMEM. */
int drain_python_run(DrainPythonStats *stats, Target *t, const struct vprof_sample *s, size_t native, size_t *at,
                     uint32_t *frames, size_t room, size_t after);
