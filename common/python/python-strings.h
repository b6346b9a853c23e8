/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CPython's str and bytes objects read from a target's memory, through a read callback: process_vm_readv() in
 * the daemon and the tests, a fake memory image in the fuzzer. Everything read is untrusted: every read is
 * bounded and checked, a string comes out as valid UTF-8 of one line (utf8.h's escape, and code points UTF-8
 * cannot carry, lone surrogates, written as Python's backslashreplace writes them: "\udc80"). */

#include <stddef.h>
#include <stdint.h>

#include "python-layout.h"

/* Copies len bytes at addr in the target to buf: 0, or -EFAULT (nothing there, or a short read), -errno. */
typedef int (*PythonReadFn)(void *ctx, uint64_t addr, void *buf, size_t len);

typedef struct PythonMemory {
        PythonReadFn read;
        void *ctx;
} PythonMemory;

/* Longer names and paths are refused rather than cut: PATH_MAX bytes are at most 4096 code points. */
#define PYTHON_STRING_MAX 4096u

/* Kinds of a compact str (the state's kind field): bytes per code point. */
#define PYTHON_UNICODE_1BYTE 1u
#define PYTHON_UNICODE_2BYTE 2u
#define PYTHON_UNICODE_4BYTE 4u

/* The length code points of kind (1: Latin-1, 2: UCS-2, 4: UCS-4) at data in UTF-8, escaped (see above),
 * allocated: -EINVAL for another kind, -E2BIG past PYTHON_STRING_MAX, -ENOMEM. */
int python_text_to_utf8(const void *data, size_t length, unsigned kind, char **ret);

/* The str at address: compact only (what the compiler makes: code objects' names and file names), the ASCII
 * form or the others; its ob_type must be unicode_type unless that is 0. -EFAULT (unreadable), -EINVAL (not a
 * compact str of a known kind), -E2BIG, -ENOMEM. */
int python_string_read(const PythonLayout *l, const PythonMemory *m, uint64_t unicode_type, uint64_t address,
                       char **ret);

/* The contents of the bytes object at address, at most max bytes (else -E2BIG); its ob_type must be bytes_type
 * unless that is 0. The buffer is allocated, at least one byte even when empty. -EFAULT, -EINVAL, -ENOMEM. */
int python_bytes_read(const PythonLayout *l, const PythonMemory *m, uint64_t bytes_type, uint64_t address,
                      size_t max, uint8_t **ret, size_t *ret_size);

/* Helpers of the readers: the little-endian 8 or 4 bytes at offset of a copied header, -EINVAL when the offset
 * is none or lies outside it. */
int python_field_u64(const uint8_t *header, size_t size, uint32_t offset, uint64_t *ret);
int python_field_u32(const uint8_t *header, size_t size, uint32_t offset, uint32_t *ret);
