/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Whether the running kernel lets a perf_event program call bpf_loop() (Linux 5.17 and later), which the walk by
 * the unwind tables needs: one iteration per frame. VPROF_FORCE_NO_BPF_LOOP=1 in the environment answers false
 * anyway, so that the tests can check the frame-pointer walk that such a kernel gets (documented for tests only). */
bool bpf_features_have_loop(void);

/* Whether the kernel has bpf_task_pt_regs() (Linux 5.15), which every sample needs: to tell an old kernel from
 * missing privileges when the load fails. */
bool bpf_features_have_task_pt_regs(void);
