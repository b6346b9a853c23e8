/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "bus-client-window.h"

/* An interactive flame graph of a target's stacks (GetStacks), as a standalone SVG file or an HTML page with
 * the same SVG inline: an icicle, the root on top and each callee under its caller, widths proportional to the
 * samples, percents of the window's total. Click to zoom, a search box, tooltips; the search term and the zoom
 * live in the URL fragment (#search=TERM&zoom=KEY). The page loads nothing and needs no inline event handler:
 * flamegraph_content_security_policy() is the policy to send with it. */

typedef enum FlamegraphFormat {
        FLAMEGRAPH_SVG,
        FLAMEGRAPH_HTML,
} FlamegraphFormat;

typedef struct FlameDiff FlameDiff;

/* A link of the HTML page's header (the exporter's base window choice): label, and its URL. */
typedef struct FlamegraphLink {
        const char *label;
        const char *href;
} FlamegraphLink;

typedef struct FlamegraphOptions {
        const char *title;        /* NULL: a default naming the target and the window */
        const FlamegraphLink *links; /* FLAMEGRAPH_HTML: a "Compare with:" line of links in the header */
        size_t n_links;
        const FlameDiff *diff;    /* a differential flame graph's colours (flamegraph-diff.h), NULL for none */
        uint32_t refresh_seconds; /* FLAMEGRAPH_HTML: the page reloads itself every N s, keeping its fragment;
                                   * 0 never */
} FlamegraphOptions;

/* The flame graph of target (as the daemon names it) over the last window_usec (0: since the attach) into a
 * new NUL-terminated buffer *ret_data of *ret_size bytes (the NUL not counted). o may be NULL (the defaults).
 * -EFBIG past max_bytes (0: no bound); bus errors as the other bus_* calls: *error filled, a negative errno
 * (a reply that does not parse: -EBADMSG and the like, with *error saying so); -E2BIG for a reply of more
 * functions or nodes than a tree indexes; -EINVAL for a NULL target or an unknown format. */
int flamegraph_export(sd_bus *bus, const char *target, uint64_t window_usec, FlamegraphFormat format,
                      const FlamegraphOptions *o, size_t max_bytes, sd_bus_error *error, char **ret_data,
                      size_t *ret_size);

/* A differential flame graph: the tree of new's stacks (widths its samples), each frame coloured by the change
 * of its call path's share against base's (flamegraph-diff.h); o->title NULL: a default naming the target and
 * both windows. Errors as flamegraph_export()'s. */
int flamegraph_render_diff(const WindowTables *base, const WindowTables *new, const char *target,
                           FlamegraphFormat format, const FlamegraphOptions *o, size_t max_bytes, char **ret_data,
                           size_t *ret_size);
/* That of the last window_usec of target against the base_window_usec that end base_ago_usec before it
 * (GetWindowTables). */
int flamegraph_export_diff(sd_bus *bus, const char *target, uint64_t window_usec, uint64_t base_window_usec,
                           uint64_t base_ago_usec, FlamegraphFormat format, const FlamegraphOptions *o,
                           size_t max_bytes, sd_bus_error *error, char **ret_data, size_t *ret_size);

/* The Content-Security-Policy under which the documents above work: nothing loaded, their one script and one
 * style sheet allowed by hash. */
const char *flamegraph_content_security_policy(void);
