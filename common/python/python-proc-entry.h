/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "python-detect.h"
#include "python-layout.h"
#include "vprof-abi.h"

/* The entry of the BPF map python_procs (common/vprof-abi.h) for an interpreter p of layout l whose file is
 * mapped at load bias (run-time address - ELF vaddr; 0 for a position-dependent executable). Pure.
 * 0 and *ret on success, *ret untouched on failure: -EPROTONOSUPPORT for a version whose frames the walk does
 * not follow (before 3.11: PyFrameObject chains; 3.13 and later: not checked yet), -EINVAL when an address
 * overflows with the bias or an offset the walk reads is unknown or not below VPROF_PYTHON_OFFSET_MAX. */
int python_proc_entry_build(const PythonInterpreter *p, const PythonLayout *l, uint64_t bias,
                            struct vprof_python_proc *ret);

/* Whether a mapped file's name (its basename) is one an interpreter goes by: python3.X (also with an ABI
 * suffix, python3.11d) or libpython3.X.so... Only a first filter: python_detect_fd() decides. */
bool python_file_name_candidate(const char *basename);
