/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Readable names for C++ and Rust symbols through libiberty's demangler (the one of c++filt and gdb): Itanium
 * C++ names ("_Z..."), legacy Rust names ("_ZN...17h<16 hex digits>E", without the "::h<hash>" element) and Rust
 * v0 names ("_R..."). Everything else stays as it is. */

/* 1 and *ret (to free) the demangled name; 0 when name is not a mangled name this knows (*ret untouched);
 * -ENOMEM. */
int demangle_symbol(const char *name, char **ret);
