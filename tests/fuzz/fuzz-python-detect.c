/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPython readers of common/python/ on a file that anyone may have named python3.11: the input is the
 * file (a memfd), detected as the daemon will (its symbols, Py_Version or the PY_VERSION string, the .cold
 * part), its layout filled (its own DWARF through libdw, PyCode_Type's member table through its relocations,
 * _Py_DebugOffsets); then its member table and _Py_DebugOffsets read at addresses the input holds, as if
 * detection had said so; and the version scan on the raw bytes. No debug file is looked for: the debug
 * directory does not exist. Seeds: the stand-in interpreter of tests/fixtures/fixture-python.c (3.11
 * and 3.13) and the ELF fixtures. */
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "macros.h"
#include "python-detect.h"
#include "python-offsets.h"
#include "python-version.h"

static void use_offsets(const PythonOffsets *o)
{
        for (size_t i = 0; i < PYTHON_LAYOUT_FIELDS_MAX; i++)
                if (!python_layout_source_to_string(o->source[i]))
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;
        const PythonDetectOptions options = {.debug_dir = "/nonexistent-vprof-fuzz"};
        _cleanup_close_ int fd = -1;
        PythonOffsets o;
        uint32_t v;
        char buf[32];

        if (python_version_scan(data, size, &v) >= 0 &&
            strlen(python_version_format(v, buf, sizeof(buf))) == 0)
                abort();
        fd = fuzz_memfd(data, size);
        if (fd < 0)
                return 0;
        if (python_detect_fd(fd, &options, &p) >= 0) {
                if (p->eval_start >= p->eval_end || (p->dwarf_path && p->own_dwarf))
                        abort();
                if (python_offsets_fill(fd, p, NULL, &o) >= 0)
                        use_offsets(&o);
        }
        /* The member table wherever the input says PyCode_Type is, and _Py_DebugOffsets wherever it says
         * _PyRuntime is (3.13), for each version with a table. */
        for (unsigned minor = 8; minor <= 13; minor++) {
                PythonInterpreter q = {
                        .version_hex = PYTHON_VERSION_HEX(3, minor, 0),
                        .code_type = fuzz_word(data, size, minor - 8),
                        .runtime = fuzz_word(data, size, minor),
                        .runtime_size = 4096,
                };

                if (python_offsets_fill(fd, &q, NULL, &o) >= 0)
                        use_offsets(&o);
        }
        return 0;
}

/* A block of strings as an interpreter's .rodata has them, for the version scan. */
static int write_seeds(const char *dir)
{
        static const char rodata[] = "usage: %s\0"
                                     "3.2.0\0"
                                     "3.11.2\0"
                                     "3.12.0rc1\0"
                                     "3.13.0a4+\0";

        return fuzz_write_file(dir, "rodata", rodata, sizeof(rodata));
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
