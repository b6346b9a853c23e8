/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CPython's versions as PY_VERSION_HEX: 0xMMmmuuLS (major, minor, micro, release level 0xA alpha, 0xB beta,
 * 0xC candidate, 0xF final, serial). Pure: the parsers take bytes of an untrusted file. */

#define PYTHON_VERSION_MAJOR(v) (((v) >> 24) & 0xffu)
#define PYTHON_VERSION_MINOR(v) (((v) >> 16) & 0xffu)
#define PYTHON_VERSION_MICRO(v) (((v) >> 8) & 0xffu)
#define PYTHON_VERSION_HEX(major, minor, micro) \
        ((uint32_t)(major) << 24 | (uint32_t)(minor) << 16 | (uint32_t)(micro) << 8 | 0xf0u)

/* Whether v looks like a CPython 3 version (major 3, a release level that exists). */
bool python_version_valid(uint32_t v);

/* The PY_VERSION string s (len bytes, no NUL needed): "3.11.2", "3.12.0rc1", "3.13.0a4+"; 0 and *ret, or
 * -EINVAL when it is not one. */
int python_version_parse(const char *s, size_t len, uint32_t *ret);

/* Scan a block of NUL-separated strings (an ELF's .rodata) for the PY_VERSION string: a string that is, or
 * ends with after a '/', '-' or ' ', a version of Python 3.6 or later (a linker may keep PY_VERSION as the
 * tail of a longer string: "/root/.pyenv/versions/3.11.7"). 0 and *ret when all such strings agree on the
 * minor version (the first of them taken), -ENOENT when there is none, -ENOTUNIQ when two minors appear. */
int python_version_scan(const uint8_t *data, size_t size, uint32_t *ret);

/* "3.11.2" for v into buf (at least 32 bytes). */
const char *python_version_format(uint32_t v, char *buf, size_t size);
