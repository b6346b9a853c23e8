/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Readable names for C++ and Rust symbols: Itanium C++ names ("_Z...") through libstdc++'s __cxa_demangle;
 * legacy Rust names ("_ZN...17h<16 hex digits>E") by their own rules, without the "::h<hash>" suffix. Rust v0
 * names ("_R...") and everything else stay as they are. */

/* 1 and *ret (to free) the demangled name; 0 when name is not a mangled name this knows (*ret untouched);
 * -ENOMEM. */
int demangle_symbol(const char *name, char **ret);
