/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "drain-python.h"
#include "macros.h"
#include "target-python.h"

/* The id of one frame: the line of its instruction in the function (file, qualified name), which the tables
 * count in the function; both with "file:first line" as their source. */
static int python_frame_id(DrainPythonStats *stats, Target *t, uint64_t code, uint64_t offset, uint32_t *ret)
{
        TargetPythonFrame f;
        int r;

        r = t->python ? target_python_frame(t->python, t->pidfd, code, offset, &f) : -ENODATA;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                stats->unknown++;
                return profile_intern_function(t->profile, "[python]", DRAIN_PYTHON_UNKNOWN, ret);
        }
        r = profile_intern_line(t->profile, f.filename, f.qualname, f.line > 0 ? (uint32_t)f.line : 0, ret);
        if (r < 0)
                return r;
        /* Once per line: a name of 4096 code points may take four times as many bytes. */
        if (!profile_function_source(t->profile, *ret)) {
                _cleanup_free_ char *source = NULL;
                uint32_t whole = profile_function_whole(t->profile, *ret);

                if (asprintf(&source, "%s:%d", f.filename, f.firstlineno) < 0)
                        return -ENOMEM;
                r = profile_set_source(t->profile, *ret, source);
                if (r >= 0 && whole != *ret)
                        r = profile_set_source(t->profile, whole, source);
                if (r < 0)
                        return r;
        }
        return 0;
}

int drain_python_run(DrainPythonStats *stats, Target *t, const struct vprof_sample *s, size_t native, size_t *at,
                     uint32_t *frames, size_t room, size_t after)
{
        const __u64 *py = s->frames + s->kernel_depth + s->user_depth;
        size_t words = s->python_depth, n = 0;
        int r;

        for (; *at + VPROF_PYTHON_FRAME_WORDS <= words; *at += VPROF_PYTHON_FRAME_WORDS) {
                size_t of = (size_t)((py[*at] & VPROF_PYTHON_FRAME_NATIVE_MASK) >> VPROF_PYTHON_FRAME_NATIVE_SHIFT);

                if (!vprof_is_python_frame(py[*at]) || of > native) /* another run's, or not one */
                        break;
                if (of < native || n + 1 + after > room) { /* a frame the walk did not keep, or no room */
                        stats->dropped++;
                        continue;
                }
                r = python_frame_id(stats, t, py[*at] & VPROF_PYTHON_FRAME_CODE_MASK, py[*at + 1], &frames[n]);
                if (r < 0)
                        return r;
                n++;
                stats->frames++;
        }
        return (int)n;
}
