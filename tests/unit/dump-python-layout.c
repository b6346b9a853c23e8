/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What common/python/ makes of interpreter files: for each path, its version and addresses, then each field
 * of its PythonLayout with the source it came from and the sources that agree, and the time detection and
 * the layout took. For docs/PYTHON.md's figures and by hand: dump-python-layout /usr/bin/python3.11 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "macros.h"
#include "python-detect.h"
#include "python-offsets.h"
#include "python-version.h"
#include "python-versions.h"

static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dump(const char *path)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;
        _cleanup_close_ int fd = -1;
        PythonOffsets o;
        char version[32];
        double t0, t1, t2;
        int r;

        t0 = now_ms();
        r = python_detect_path(path, NULL, &p);
        t1 = now_ms();
        if (r < 0) {
                printf("%s: not detected: %s\n", path, strerror(-r));
                return r;
        }
        printf("%s: Python %s (0x%08" PRIx32 ", from %s), build-id %s\n", path,
               python_version_format(p->version_hex, version, sizeof(version)), p->version_hex,
               p->version_from_symbol ? "Py_Version" : "the PY_VERSION string", p->build_id ?: "none");
        printf("  _PyEval_EvalFrameDefault 0x%" PRIx64 "-0x%" PRIx64 ", .cold 0x%" PRIx64 "-0x%" PRIx64
               ", _PyRuntime 0x%" PRIx64 ", PyCode_Type 0x%" PRIx64 "\n",
               p->eval_start, p->eval_end, p->eval_cold_start, p->eval_cold_end, p->runtime, p->code_type);
        printf("  DWARF: %s\n", p->own_dwarf ? "its own" : p->dwarf_path ?: "none");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = python_offsets_fill(fd, p, NULL, &o);
        t2 = now_ms();
        if (r < 0) {
                printf("  no layout: %s\n", strerror(-r));
                return r;
        }
        printf("  DWARF gave %d fields, _Py_DebugOffsets %d, the member table %d; %u conflicts; the table "
               "of 3.%u "
               "is %s\n",
               o.dwarf_result, o.debug_offsets_result, o.members_result, o.conflicts,
               PYTHON_VERSION_MINOR(p->version_hex), o.table_verified ? "verified" : "unverified");
        for (size_t i = 0; i < python_layout_n_fields; i++) {
                uint32_t v = python_layout_field_get(&o.layout, i);
                char agreed[64] = "";

                for (unsigned s = PYTHON_LAYOUT_SOURCE_TABLE; s < _PYTHON_LAYOUT_SOURCE_MAX; s++)
                        if (o.agreed[i] & (1u << s)) {
                                strcat(agreed, agreed[0] ? "," : "");
                                strcat(agreed, python_layout_source_to_string((PythonLayoutSource)s));
                        }
                if (v == PYTHON_LAYOUT_NONE)
                        printf("  %-26s %6s\n", python_layout_fields[i].name, "-");
                else
                        printf("  %-26s %6" PRIu32 "  %-13s (%s)\n", python_layout_fields[i].name, v,
                               python_layout_source_to_string((PythonLayoutSource)o.source[i]), agreed);
        }
        printf("  detection %.1f ms, layout %.1f ms\n", t1 - t0, t2 - t1);
        return 0;
}

int main(int argc, char **argv)
{
        int ret = 0;

        for (int i = 1; i < argc; i++)
                if (dump(argv[i]) < 0)
                        ret = 1;
        return ret;
}
