/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "bpf-features.h"
#include "log.h"

bool bpf_features_have_loop(void)
{
        const char *force = getenv("VPROF_FORCE_NO_BPF_LOOP");
        int r;

        if (force && strcmp(force, "1") == 0) {
                log_notice("VPROF_FORCE_NO_BPF_LOOP=1: taken as a kernel without bpf_loop (for tests).");
                return false;
        }
        /* libbpf loads a tiny program calling the helper: 1 when the verifier knows it, 0 when it does not. Any
         * other failure (no BPF at all) is left to the real load, which reports it better. */
        r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to probe for bpf_loop, assuming it is there: %m");
        return r != 0;
}

bool bpf_features_have_task_pt_regs(void)
{
        return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) != 0;
}
