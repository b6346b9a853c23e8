/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Spins in clock_gettime(), which the vDSO serves without entering the kernel (with a TSC or another clock
 * source the vDSO can read), so most samples land in the vDSO. */
#include "workload-util.h"

int main(int argc, char **argv)
{
        double seconds = workload_start(argc, argv);
        struct timespec start, ts;

        clock_gettime(CLOCK_MONOTONIC, &start);
        do
                clock_gettime(CLOCK_MONOTONIC, &ts);
        while ((double)(ts.tv_sec - start.tv_sec) + (double)(ts.tv_nsec - start.tv_nsec) / 1e9 < seconds);
        return 0;
}
