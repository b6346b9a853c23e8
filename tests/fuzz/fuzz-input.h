/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The parser fuzz harnesses (fuzz-elf-symbols.c, fuzz-eh-frame.c, fuzz-proc-maps.c, fuzz-perf-map.c,
 * fuzz-kallsyms.c, fuzz-state.c, fuzz-journal.c). Each is one libFuzzer entry point, LLVMFuzzerTestOneInput(),
 * that feeds an input to a parser the way the daemon does and then uses what came out, and one
 * LLVMFuzzerInitialize() that
 * writes the harness's seed inputs, made from real data at test time, when VPROF_FUZZ_WRITE_SEEDS names a
 * directory. Built with clang they link libFuzzer (-fsanitize=fuzzer); otherwise fuzz-driver.c is their
 * main(). tests/fuzz/run-fuzz.py runs them for the meson suite "fuzz". */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* For LLVMFuzzerInitialize(): when VPROF_FUZZ_WRITE_SEEDS is set, call write_seeds(dir) and exit with its
 * result (0 or 1); else return 0. */
int fuzz_seeds_main(int (*write_seeds)(const char *dir));
/* Write size bytes to dir/name; -errno. */
int fuzz_write_file(const char *dir, const char *name, const void *data, size_t size);
/* Copy the first max bytes (all with 0) of the file at path, possibly growing (/proc files), to dir/name. */
int fuzz_copy_file(const char *path, size_t max, const char *dir, const char *name);

/* This process's vDSO, a small real ELF image in memory: from its ELF header to the end of its last loadable
 * segment or of its section headers. NULL when there is none. */
const uint8_t *fuzz_vdso(size_t *ret_size);

/* The input in a memfd, a regular file as the readers want one: the descriptor, or -1 (then the input is
 * skipped). */
int fuzz_memfd(const uint8_t *data, size_t size);
/* The little-endian word at the i-th 8-byte position from the end of the input (0 past the start): values
 * the fuzzer controls, for addresses to look up. */
uint64_t fuzz_word(const uint8_t *data, size_t size, size_t i);

/* A small .debug_frame describing code at code_start, for the seeds of the CFI harnesses: both record
 * formats (32-bit with a version 1 CIE, 64-bit with a version 4 one), FDEs before and after their CIE, a
 * discarded function's FDE (address 0), a few of GCC's CFA forms. Written into buf: its size, 0 when it does
 * not fit. */
size_t fuzz_debug_frame(uint8_t *buf, size_t size, uint64_t code_start);
