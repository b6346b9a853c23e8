/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A workload built as distributions build their code: -O2 without frame pointers, with call frame information,
 * calling into a shared library through the PLT. The BPF walk by the unwind tables must give its whole stack:
 *
 *   main -> nofp_run -> nofp_recurse (x depth + 1) -> nofp_lib_work [libvprof-nofp.so] -> nofp_lib_spin
 *
 * Each function keeps a frame on the stack and none keeps rbp, so a frame-pointer walk finds the leaf and no
 * caller. "--seconds N", "--wait-stdin" as the other workloads; "--depth N" recursions (default 6). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof-nofp.h"
#include "workload-util.h"

NOINLINE uint64_t nofp_recurse(unsigned depth, unsigned units, uint64_t seed)
{
        volatile uint64_t frame[4]; /* a frame of its own: the CFA moves with rsp */
        uint64_t v;

        frame[0] = seed;
        if (depth == 0)
                v = nofp_lib_work(units, frame[0]);
        else
                v = nofp_recurse(depth - 1, units, frame[0] + 1);
        frame[1] = v; /* work after the call: no tail call */
        return frame[1] + depth;
}

NOINLINE uint64_t nofp_run(unsigned depth, double seconds)
{
        double end = workload_now() + seconds;
        uint64_t sink = 0;

        while (workload_now() < end)
                sink += nofp_recurse(depth, 10, sink);
        return sink;
}

int main(int argc, char **argv)
{
        unsigned depth = 6;
        double seconds;
        uint64_t sink;

        for (int i = 1; i + 1 < argc; i++)
                if (strcmp(argv[i], "--depth") == 0)
                        depth = (unsigned)atoi(argv[++i]);
        seconds = workload_start(argc, argv);
        sink = nofp_run(depth, seconds);
        printf("done %llu\n", (unsigned long long)(sink & 1));
        return 0;
}
