/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "flamegraph-assets.h"
#include "flamegraph-diff.h"
#include "flamegraph-svg.h"
#include "hashmap.h"

/* The picture, in pixels: an icicle, the root on top. The names are monospace, about 7.2 px a character at
 * 12 px in the fonts browsers pick; 7.3 keeps the cut names inside their frames. */
#define WIDTH 1200
#define X0 10
#define FRAMES_WIDTH (WIDTH - 2 * X0)
#define FRAMES_Y 84
#define FRAME_HEIGHT 17
#define CHAR_WIDTH 7.3

bool flamegraph_node_drawn(const FlameTree *t, const FlameNode *n)
{
        /* Integer arithmetic, no rounding: inclusive / total >= 1/1000. */
        return t->total > 0 && n->inclusive >= (t->total + 999) / 1000 * FLAMEGRAPH_MIN_PER_MILLE;
}

/* A colour of its own for each function, the same in every graph: warm for user code, cool for the kernel's,
 * grey for the root and the samples in no stack. */
static void write_colour(FlameBuffer *b, const FlameTree *t, const FlameNode *n)
{
        const char *name = flame_node_name(t, n);
        uint64_t h = hash_bytes(name, strlen(name), 0);
        unsigned hue_range = 55, hue_base = 0, sat = 70 + (unsigned)(h >> 8 & 0xff) % 20,
                 light = 55 + (unsigned)(h >> 16 & 0xff) % 15;

        if (n->function == FLAME_NO_FUNCTION) {
                flame_buffer_puts(b, "hsl(0,0%,75%)");
                return;
        }
        if (n->kind == FLAME_NODE_KERNEL) {
                hue_base = 180;
                hue_range = 40;
        }
        flame_buffer_printf(b, "hsl(%u,%u%%,%u%%)", hue_base + (unsigned)(h % hue_range), sat, light);
}

static void write_frame(FlameBuffer *b, const FlameTree *t, const FlameNode *n, const FlameDiff *diff)
{
        double x = X0 + (double)FRAMES_WIDTH * (double)n->start / (double)t->total,
               w = (double)FRAMES_WIDTH * (double)n->inclusive / (double)t->total;
        unsigned y = FRAMES_Y + n->depth * FRAME_HEIGHT;
        const char *name = flame_node_name(t, n), *module = flame_node_module(t, n);
        double fits = (w - 6) / CHAR_WIDTH;

        flame_buffer_printf(b, "<g class=\"f%s%s\" data-k=\"%016" PRIx64 "\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
                               "\" data-x=\"%" PRIu64 "\" data-d=\"%" PRIu32 "\" data-f=\"",
                            n->kind == FLAME_NODE_KERNEL ? " k" : "", n->function == FLAME_NO_FUNCTION ? " sp" : "",
                            n->key, n->start, n->inclusive, n->exclusive, n->depth);
        flame_buffer_escape(b, name, SIZE_MAX);
        flame_buffer_puts(b, "\" data-m=\"");
        flame_buffer_escape(b, module, SIZE_MAX);
        flame_buffer_puts(b, "\"><title>");
        flame_buffer_escape(b, name, SIZE_MAX);
        if (*module) {
                flame_buffer_puts(b, " (");
                flame_buffer_escape(b, module, SIZE_MAX);
                flame_buffer_puts(b, ")");
        }
        if (n->kind == FLAME_NODE_KERNEL)
                flame_buffer_puts(b, " [kernel]");
        else if (n->function != FLAME_NO_FUNCTION && t->table->functions[n->function].inlined)
                flame_buffer_puts(b, " [inlined]");
        else if (n->function != FLAME_NO_FUNCTION && t->table->functions[n->function].python)
                flame_buffer_puts(b, " [python]");
        flame_buffer_printf(b, "\n%" PRIu64 " samples, %.2f%% inclusive, %.2f%% exclusive", n->inclusive,
                            flame_tree_percent(t, n->inclusive), flame_tree_percent(t, n->exclusive));
        if (diff) {
                double base, points = flame_diff_points(diff, n, &base);
                char colour[48];

                flame_buffer_printf(b, "\nbase %.2f%% inclusive, %+.2f points", base, points);
                flame_diff_colour(diff, n, colour, sizeof(colour));
                flame_buffer_printf(b, "</title><rect data-dp=\"%.2f\" x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
                                       "height=\"%u\" fill=\"%s",
                                    points, x, y, w, FRAME_HEIGHT - 1, colour);
        } else {
                flame_buffer_printf(b, "</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" fill=\"", x, y,
                                    w, FRAME_HEIGHT - 1);
                write_colour(b, t, n);
        }
        flame_buffer_printf(b, "\"/><text x=\"%.2f\" y=\"%u\">", x + 3, y + 12);
        flame_buffer_escape(b, name, fits > 0 ? (size_t)fits : 0);
        flame_buffer_puts(b, "</text></g>\n");
}

/* The window as the page says it: what was asked, and the span the daemon really counted. */
static void write_window(FlameBuffer *b, const StackTable *s)
{
        char asked[32], from[32], to[32];
        time_t start = (time_t)(s->window_start_usec / 1000000), end = (time_t)(s->window_end_usec / 1000000);
        struct tm tm_start, tm_end;

        if (s->window_usec > 0) {
                duration_format(asked, sizeof(asked), s->window_usec);
                flame_buffer_printf(b, "the last %s", asked);
        } else
                flame_buffer_puts(b, "since the attach");
        if (s->window_end_usec > s->window_start_usec && gmtime_r(&start, &tm_start) && gmtime_r(&end, &tm_end) &&
            strftime(from, sizeof(from), "%Y-%m-%d %H:%M:%S", &tm_start) > 0 &&
            strftime(to, sizeof(to), "%Y-%m-%d %H:%M:%S", &tm_end) > 0)
                flame_buffer_printf(b, ", %s to %s UTC (%.1f s)", from, to,
                                    (double)(s->window_end_usec - s->window_start_usec) / 1e6);
}

static void write_title(FlameBuffer *b, const FlameTree *t, const char *target, const FlamegraphOptions *o)
{
        if (o && o->title) {
                flame_buffer_escape(b, o->title, SIZE_MAX);
                return;
        }
        flame_buffer_puts(b, "vprof flame graph of ");
        flame_buffer_escape(b, target, SIZE_MAX);
        flame_buffer_puts(b, ", ");
        write_window(b, &(StackTable){ .window_usec = t->table->window_usec });
}

static void write_summary(FlameBuffer *b, const FlameTree *t)
{
        const StackTable *s = t->table;

        flame_buffer_puts(b, "Window: ");
        write_window(b, s);
        flame_buffer_printf(b, "; %" PRIu64 " samples", s->total_samples);
        if (s->listed_samples != s->total_samples)
                flame_buffer_printf(b, ", %" PRIu64 " of them in the stacks listed", s->listed_samples);
}

static size_t count_hidden(const FlameTree *t, uint32_t *ret_depth)
{
        size_t hidden = 0;

        *ret_depth = 0;
        for (size_t i = 0; i < t->n_nodes; i++)
                if (flamegraph_node_drawn(t, &t->nodes[i]))
                        *ret_depth = MAX(*ret_depth, t->nodes[i].depth);
                else
                        hidden++;
        return hidden;
}

static void write_svg(FlameBuffer *b, const FlameTree *t, const char *target, const FlamegraphOptions *o,
                      bool inline_svg)
{
        uint32_t depth;
        size_t hidden = count_hidden(t, &depth);
        unsigned details_y = FRAMES_Y + (depth + 1) * FRAME_HEIGHT + 16, height = details_y + 22;

        flame_buffer_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"flamegraph\" "
                               "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-x0=\"%u\" "
                               "data-frames-width=\"%u\" data-char-width=\"%.1f\" data-total=\"%" PRIu64 "\" "
                               "data-refresh=\"%" PRIu32 "\">\n",
                            WIDTH, height, WIDTH, height, X0, FRAMES_WIDTH, CHAR_WIDTH, t->total,
                            inline_svg && o ? o->refresh_seconds : 0);
        flame_buffer_printf(b, "<style>%s</style>\n", flamegraph_style_xml);
        flame_buffer_printf(b, "<text class=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">", WIDTH / 2);
        write_title(b, t, target, o);
        flame_buffer_printf(b, "</text>\n<text class=\"subtitle\" x=\"%u\" y=\"42\" text-anchor=\"middle\">",
                            WIDTH / 2);
        write_summary(b, t);
        flame_buffer_printf(b, "</text>\n<foreignObject x=\"%u\" y=\"50\" width=\"300\" height=\"26\">"
                               "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
                               "placeholder=\"Search: a regular expression\" autocomplete=\"off\"/>"
                               "</foreignObject>\n",
                            X0);
        flame_buffer_printf(b, "<text id=\"reset\" class=\"button subtitle\" x=\"%u\" y=\"67\">Reset zoom</text>\n",
                            X0 + 310);
        flame_buffer_printf(b, "<text id=\"matched\" class=\"subtitle\" x=\"%u\" y=\"67\"></text>\n", X0 + 400);
        for (size_t i = 0; i < t->n_nodes; i++)
                if (flamegraph_node_drawn(t, &t->nodes[i]))
                        write_frame(b, t, &t->nodes[i], o ? o->diff : NULL);
        flame_buffer_printf(b, "<text id=\"details\" class=\"subtitle\" x=\"%u\" y=\"%u\">", X0, details_y);
        if (hidden > 0)
                flame_buffer_printf(b, "%zu frames under 0.1%% of the samples are not drawn: their samples are "
                                       "in their callers' width. ",
                                    hidden);
        flame_buffer_puts(b, "Icicle: callers above their callees; widths are samples");
        if (o && o->diff)
                flame_buffer_puts(b, "; red grew and blue shrank against the base, in points of the samples");
        flame_buffer_puts(b, ".</text>\n");
        flame_buffer_printf(b, "<script>%s</script>\n</svg>\n", flamegraph_script_xml);
}

void flamegraph_write(FlameBuffer *b, const FlameTree *t, const char *target, FlamegraphFormat format,
                      const FlamegraphOptions *o)
{
        if (format == FLAMEGRAPH_SVG) {
                flame_buffer_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
                write_svg(b, t, target, o, false);
                return;
        }
        flame_buffer_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
        write_title(b, t, target, o);
        flame_buffer_puts(b, "</title>\n</head>\n<body>\n<header>\n<h1>");
        write_title(b, t, target, o);
        flame_buffer_puts(b, "</h1>\n<p id=\"summary\">");
        write_summary(b, t);
        flame_buffer_puts(b, "</p>\n");
        if (o && o->refresh_seconds > 0)
                flame_buffer_printf(b, "<p>Reloads every %" PRIu32 " s, keeping the search and the zoom.</p>\n",
                                    o->refresh_seconds);
        if (o && o->n_links > 0) {
                flame_buffer_puts(b, "<p id=\"compare\">Compare with:");
                for (size_t i = 0; i < o->n_links; i++) {
                        flame_buffer_puts(b, i > 0 ? " | <a href=\"" : " <a href=\"");
                        flame_buffer_escape(b, o->links[i].href, SIZE_MAX);
                        flame_buffer_puts(b, "\">");
                        flame_buffer_escape(b, o->links[i].label, SIZE_MAX);
                        flame_buffer_puts(b, "</a>");
                }
                flame_buffer_puts(b, "</p>\n");
        }
        flame_buffer_puts(b, "</header>\n");
        write_svg(b, t, target, o, true);
        flame_buffer_puts(b, "</body>\n</html>\n");
}

const char *flamegraph_content_security_policy(void)
{
        return flamegraph_csp;
}
