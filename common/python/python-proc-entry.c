/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "python-proc-entry.h"

/* An offset the walk reads: known and small. */
static int walk_offset(uint32_t offset, __u16 *ret)
{
        if (offset >= VPROF_PYTHON_OFFSET_MAX)
                return -EINVAL;
        *ret = (__u16)offset;
        return 0;
}

/* An offset that a version may lack (NONE stays NONE for the walk to test). */
static int optional_offset(uint32_t offset, __u16 *ret)
{
        if (offset == PYTHON_LAYOUT_NONE) {
                *ret = VPROF_PYTHON_NONE;
                return 0;
        }
        return walk_offset(offset, ret);
}

/* addr + bias, or -EINVAL when it wraps; 0 stays 0 (unknown). */
static int relocate(uint64_t addr, uint64_t bias, __u64 *ret)
{
        if (addr == 0) {
                *ret = 0;
                return 0;
        }
        if (addr + bias < addr)
                return -EINVAL;
        *ret = addr + bias;
        return 0;
}

int python_proc_entry_build(const PythonInterpreter *p, const PythonLayout *l, uint64_t bias,
                            struct vprof_python_proc *ret)
{
        struct vprof_python_proc e = { .version_hex = p->version_hex };
        uint32_t minor = (p->version_hex >> 16) & 0xff;
        int r = 0;

        /* 3.11 and 3.12 keep the current frame behind tstate->cframe; 3.13 moved it (and its table is unchecked). */
        if ((p->version_hex >> 24) != 3 || minor < 11 || minor > 12)
                return -EPROTONOSUPPORT;
        if (p->runtime == 0 || p->eval_start == 0 || p->eval_end <= p->eval_start ||
            p->eval_cold_end < p->eval_cold_start)
                return -EINVAL;

        r = r ?: relocate(p->eval_start, bias, &e.eval_start);
        r = r ?: relocate(p->eval_end, bias, &e.eval_end);
        r = r ?: relocate(p->eval_cold_start, bias, &e.eval_cold_start);
        r = r ?: relocate(p->eval_cold_end, bias, &e.eval_cold_end);
        r = r ?: relocate(p->runtime, bias, &e.runtime);
        r = r ?: relocate(p->code_type, bias, &e.code_type);
        r = r ?: walk_offset(l->runtime_interpreters_head, &e.runtime_interpreters_head);
        r = r ?: walk_offset(l->interp_threads_head, &e.interp_threads_head);
        r = r ?: walk_offset(l->tstate_next, &e.tstate_next);
        r = r ?: walk_offset(l->tstate_native_thread_id, &e.tstate_native_thread_id);
        r = r ?: walk_offset(l->tstate_cframe, &e.tstate_cframe);
        r = r ?: walk_offset(l->cframe_current_frame, &e.cframe_current_frame);
        r = r ?: walk_offset(l->frame_code, &e.frame_code);
        r = r ?: walk_offset(l->frame_previous, &e.frame_previous);
        r = r ?: walk_offset(l->frame_instr, &e.frame_instr);
        r = r ?: optional_offset(l->frame_is_entry, &e.frame_is_entry);
        r = r ?: walk_offset(l->frame_owner, &e.frame_owner);
        r = r ?: walk_offset(l->object_type, &e.object_type);
        r = r ?: walk_offset(l->code_bytecode, &e.code_bytecode);
        if (r < 0)
                return r;
        /* 3.11 marks the entry frame with is_entry; without it the walk could not tell where a run ends. */
        if (minor == 11 && e.frame_is_entry == VPROF_PYTHON_NONE)
                return -EINVAL;
        *ret = e;
        return 0;
}

bool python_file_name_candidate(const char *basename)
{
        const char *s;

        if (strncmp(basename, "libpython3.", 11) == 0)
                s = basename + 11;
        else if (strncmp(basename, "python3.", 8) == 0)
                s = basename + 8;
        else
                return false;
        /* The minor's digits, then the end, an ABI suffix or ".so". */
        if (*s < '0' || *s > '9')
                return false;
        while (*s >= '0' && *s <= '9')
                s++;
        return *s == '\0' || *s == '.' || (*s >= 'a' && *s <= 'z' && strchr(s, '/') == NULL);
}
