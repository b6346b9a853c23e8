/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether s[0..n) is UTF-8 (shortest forms, no surrogates) without control characters: what a query value,
 * a path or a label may hold. */
bool exporter_text_valid(const char *s, size_t n);

/* The escapes of the exporter's outputs, written to f: HTML text and attribute values; a Prometheus label value
 * (backslash, double quote, newline); a URL query component (all but unreserved characters as %XX). */
void exporter_write_html(FILE *f, const char *s);
void exporter_write_label(FILE *f, const char *s);
void exporter_write_url_component(FILE *f, const char *s);
