/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#define NOINLINE __attribute__((noinline))

/* libvprof-nofp.so: units of spinning in its leaf, under one function of its own. */
uint64_t nofp_lib_work(unsigned units, uint64_t seed);
