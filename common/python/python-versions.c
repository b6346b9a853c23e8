/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <string.h>

#include "macros.h"
#include "python-versions.h"

#define FIELD(name) { #name, offsetof(PythonLayout, name) }

const PythonLayoutField python_layout_fields[] = {
        FIELD(runtime_tss_key),
        FIELD(runtime_tss_initialized),
        FIELD(runtime_interpreters_head),
        FIELD(interp_threads_head),
        FIELD(tstate_next),
        FIELD(tstate_native_thread_id),
        FIELD(tstate_cframe),
        FIELD(cframe_current_frame),
        FIELD(frame_code),
        FIELD(frame_previous),
        FIELD(frame_instr),
        FIELD(frame_is_entry),
        FIELD(frame_owner),
        FIELD(object_type),
        FIELD(code_filename),
        FIELD(code_name),
        FIELD(code_qualname),
        FIELD(code_firstlineno),
        FIELD(code_linetable),
        FIELD(code_bytecode),
        FIELD(unicode_length),
        FIELD(unicode_state),
        FIELD(unicode_ascii_data),
        FIELD(unicode_compact_data),
        FIELD(bytes_size),
        FIELD(bytes_data),
};
const size_t python_layout_n_fields = ELEMENTSOF(python_layout_fields);

ssize_t python_layout_field_index(const char *name)
{
        for (size_t i = 0; i < python_layout_n_fields; i++)
                if (strcmp(python_layout_fields[i].name, name) == 0)
                        return (ssize_t)i;
        return -1;
}

#define NONE PYTHON_LAYOUT_NONE

/* Fields common to every version: PyObject's ob_type, and PyBytesObject (PyObject_VAR_HEAD, ob_shash,
 * ob_sval). */
#define COMMON_FIELDS .object_type = 8, .bytes_size = 16, .bytes_data = 32

/* Before 3.12, PyASCIIObject ends with wstr (48 bytes) and PyCompactUnicodeObject with wstr_length (72);
 * 3.12 dropped both (40, 56). length and the state bit field did not move. */
#define UNICODE_TO_3_11 \
        .unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48, .unicode_compact_data = 72
#define UNICODE_FROM_3_12 \
        .unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40, .unicode_compact_data = 56

/* 3.8 to 3.10 run PyFrameObjects: frame_code, frame_previous and frame_instr are f_code, f_back and f_lasti
 * (an int, the index of the last instruction, not a pointer); cframe_current_frame is PyThreadState.frame.
 *
 * 3.11 is Debian's 3.11.2 and pyenv's 3.11.7 as their debug info says, and as the running interpreters show
 * (test-python-detect). The other minors have no interpreter on this machine: their numbers were written
 * from CPython's headers and then derived a second way, independently: the struct definitions that bindgen
 * made of the headers of 3.8.0, 3.9.5, 3.10.0, 3.12.0 and 3.13.0 (py-spy's bindings), laid out by a
 * compiler and asked for each field's offset. Every number written from the headers agreed with it; the TSS
 * keys of 3.9, 3.10, 3.12 and 3.13, interp_threads_head of 3.12 and 3.13 and runtime_interpreters_head of
 * 3.13 come from it alone. _PyRuntime's TSS key of 3.8 is NONE: no such derivation was at hand. The
 * runtime's and the interpreter's structures (runtime_*, interp_threads_head) move with micro versions and
 * build options more than the others: an interpreter's DWARF, where there is one, takes precedence
 * (python-offsets.c). docs/PYTHON.md has the table. */
static const PythonVersionTable tables[] = {
        {
                .minor = 8,
                .layout = {
                        .version_hex = 0x030800f0,
                        .runtime_tss_key = NONE, .runtime_tss_initialized = NONE,
                        .runtime_interpreters_head = 32, .interp_threads_head = 8,
                        .tstate_next = 8, .tstate_native_thread_id = NONE, .tstate_cframe = NONE,
                        .cframe_current_frame = 24,
                        .frame_code = 32, .frame_previous = 24, .frame_instr = 104,
                        .frame_is_entry = NONE, .frame_owner = NONE,
                        .code_filename = 104, .code_name = 112, .code_qualname = NONE,
                        .code_firstlineno = 40, .code_linetable = 120, .code_bytecode = NONE,
                        UNICODE_TO_3_11, COMMON_FIELDS,
                },
        },
        {
                .minor = 9,
                .layout = {
                        .version_hex = 0x030900f0,
                        .runtime_tss_key = 588, .runtime_tss_initialized = 584,
                        .runtime_interpreters_head = 32, .interp_threads_head = 8,
                        .tstate_next = 8, .tstate_native_thread_id = NONE, .tstate_cframe = NONE,
                        .cframe_current_frame = 24,
                        .frame_code = 32, .frame_previous = 24, .frame_instr = 104,
                        .frame_is_entry = NONE, .frame_owner = NONE,
                        .code_filename = 104, .code_name = 112, .code_qualname = NONE,
                        .code_firstlineno = 40, .code_linetable = 120, .code_bytecode = NONE,
                        UNICODE_TO_3_11, COMMON_FIELDS,
                },
        },
        {
                .minor = 10,
                .layout = {
                        .version_hex = 0x030a00f0,
                        .runtime_tss_key = 588, .runtime_tss_initialized = 584,
                        .runtime_interpreters_head = 32, .interp_threads_head = 8,
                        .tstate_next = 8, .tstate_native_thread_id = NONE, .tstate_cframe = NONE,
                        .cframe_current_frame = 24,
                        .frame_code = 32, .frame_previous = 24, .frame_instr = 96,
                        .frame_is_entry = NONE, .frame_owner = NONE,
                        .code_filename = 104, .code_name = 112, .code_qualname = NONE,
                        .code_firstlineno = 40, .code_linetable = 120, .code_bytecode = NONE,
                        UNICODE_TO_3_11, COMMON_FIELDS,
                },
        },
        {
                .minor = 11,
                .verified = true,
                .layout = {
                        .version_hex = 0x030b00f0,
                        .runtime_tss_key = 596, .runtime_tss_initialized = 592,
                        .runtime_interpreters_head = 40, .interp_threads_head = 16,
                        .tstate_next = 8, .tstate_native_thread_id = 160, .tstate_cframe = 56,
                        .cframe_current_frame = 8,
                        .frame_code = 32, .frame_previous = 48, .frame_instr = 56,
                        .frame_is_entry = 68, .frame_owner = 69,
                        .code_filename = 112, .code_name = 120, .code_qualname = 128,
                        .code_firstlineno = 72, .code_linetable = 136, .code_bytecode = 184,
                        UNICODE_TO_3_11, COMMON_FIELDS,
                },
        },
        {
                .minor = 12,
                .layout = {
                        .version_hex = 0x030c00f0,
                        .runtime_tss_key = 1548, .runtime_tss_initialized = 1544,
                        .runtime_interpreters_head = 40, .interp_threads_head = 72,
                        .tstate_next = 8, .tstate_native_thread_id = 144, .tstate_cframe = 56,
                        .cframe_current_frame = 0,
                        .frame_code = 0, .frame_previous = 8, .frame_instr = 56,
                        .frame_is_entry = NONE, .frame_owner = 70,
                        .code_filename = 112, .code_name = 120, .code_qualname = 128,
                        .code_firstlineno = 68, .code_linetable = 136, .code_bytecode = 192,
                        UNICODE_FROM_3_12, COMMON_FIELDS,
                },
        },
        {
                .minor = 13,
                .layout = {
                        .version_hex = 0x030d00f0,
                        .runtime_tss_key = 2164, .runtime_tss_initialized = 2160,
                        .runtime_interpreters_head = 632, .interp_threads_head = 7344,
                        .tstate_next = 8, .tstate_native_thread_id = 160, .tstate_cframe = NONE,
                        .cframe_current_frame = 72,
                        .frame_code = 0, .frame_previous = 8, .frame_instr = 56,
                        .frame_is_entry = NONE, .frame_owner = 70,
                        .code_filename = 112, .code_name = 120, .code_qualname = 128,
                        .code_firstlineno = 68, .code_linetable = 136, .code_bytecode = 200,
                        UNICODE_FROM_3_12, COMMON_FIELDS,
                },
        },
};

const PythonVersionTable *python_versions_lookup(unsigned minor)
{
        for (size_t i = 0; i < ELEMENTSOF(tables); i++)
                if (tables[i].minor == minor)
                        return &tables[i];
        return NULL;
}
