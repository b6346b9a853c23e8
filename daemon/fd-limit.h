/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* Each target holds an open file, its pidfd, so MaxTargets= of them must fit under RLIMIT_NOFILE next to the
 * daemon's own descriptors: the perf events (one per CPU), the BPF objects, the bus, and the files it reads for
 * a moment (symbols, /proc, the state file). Attaches stop short of the limit by FD_LIMIT_RESERVE, so that a
 * daemon full of targets can still read a symbol table or save its state. */

#define FD_LIMIT_RESERVE 64

/* At start, with sampling set up: checks the limit against max_targets pidfds on top of the descriptors open
 * now and the reserve; raises the soft limit towards the hard one if that is short (not under the unit, whose
 * LimitNOFILE= sets both, and whose system call filter forbids setrlimit()), and warns when the targets still
 * cannot all fit. Sets *ret_limit to the soft limit and *ret_pidfd_bound to the first descriptor number a pidfd
 * may not have: an attach that gets one at or above it fails with EMFILE. */
void fd_limit_setup(uint32_t max_targets, uint64_t *ret_limit, int *ret_pidfd_bound);
