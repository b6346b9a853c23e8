/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared library of vprof-nofp: built without frame pointers too. */
#include "vprof-nofp.h"
#include "workload-util.h"

NOINLINE static uint64_t nofp_lib_spin(unsigned units, uint64_t seed)
{
        WORKLOAD_SPIN(units, seed, 20000);
}

uint64_t nofp_lib_work(unsigned units, uint64_t seed)
{
        uint64_t v = nofp_lib_spin(units, seed);

        return v ^ (v >> 7); /* work after the call: no tail call */
}
