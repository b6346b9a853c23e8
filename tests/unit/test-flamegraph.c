/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check-main.h"
#include "flamegraph-buffer.h"
#include "flamegraph-svg.h"
#include "flamegraph-tree.h"

/* The flame graph's tree on hand-made stacks, its escaping of hostile names, the elision of narrow frames and
 * the bound on the document's size. */

/* A table of the functions named in names (module "app", "[kernel]" for names starting with "k_"); stacks
 * added with add_stack(). */
static StackTable *table_new(const char *const *names, size_t n)
{
        StackTable *t = calloc(1, sizeof(StackTable));

        ck_assert_ptr_nonnull(t);
        t->functions = calloc(n, sizeof(StackFunction));
        ck_assert_ptr_nonnull(t->functions);
        for (size_t i = 0; i < n; i++) {
                t->functions[i].function = strdup(names[i]);
                t->functions[i].module = strdup(strncmp(names[i], "k_", 2) == 0 ? "[kernel]" : "app");
        }
        t->n_functions = n;
        t->window_start_usec = UINT64_C(1700000000) * 1000000;
        t->window_end_usec = t->window_start_usec + 10 * 1000000;
        t->window_usec = 10 * 1000000;
        return t;
}

/* A stack of samples, its frames outermost first as indices, the last n_kernel of them kernel frames; -1 ends. */
static void add_stack(StackTable *t, uint64_t samples, uint32_t n_kernel, ...)
{
        StackEntry *s;
        va_list ap;
        int index;

        t->stacks = reallocarray(t->stacks, t->n_stacks + 1, sizeof(StackEntry));
        ck_assert_ptr_nonnull(t->stacks);
        s = &t->stacks[t->n_stacks++];
        *s = (StackEntry){ .n_kernel = n_kernel, .samples = samples };
        va_start(ap, n_kernel);
        while ((index = va_arg(ap, int)) >= 0) {
                s->frames = reallocarray(s->frames, s->n_frames + 1, sizeof(uint32_t));
                ck_assert_ptr_nonnull(s->frames);
                s->frames[s->n_frames++] = (uint32_t)index;
        }
        va_end(ap);
        t->listed_samples += samples;
        t->total_samples += samples;
}

/* The node at the path of function names from the root, or NULL; kernel: the last one a kernel frame. */
static const FlameNode *find(const FlameTree *t, bool kernel, const char *const *path, size_t n)
{
        const FlameNode *node = &t->nodes[0];

        for (size_t depth = 0; depth < n; depth++) {
                const FlameNode *next = NULL;
                for (size_t c = 0; c < node->n_children; c++) {
                        const FlameNode *k = &t->nodes[t->children[node->first_child + c]];
                        if (strcmp(flame_node_name(t, k), path[depth]) == 0 &&
                            (k->kind == FLAME_NODE_KERNEL) == (kernel && depth == n - 1))
                                next = k;
                }
                if (!next)
                        return NULL;
                node = next;
        }
        return node;
}

#define FIND(t, ...) find((t), false, (const char *const[]){ __VA_ARGS__ }, \
                          ELEMENTSOF(((const char *const[]){ __VA_ARGS__ })))

static const char *const names[] = { "main", "a", "b", "c", "k_sys" };
enum { MAIN, A, B, C, K_SYS };

START_TEST(test_tree)
{
        _cleanup_(stack_table_freep) StackTable *s = table_new(names, ELEMENTSOF(names));
        _cleanup_(flame_tree_freep) FlameTree *t = NULL;
        const FlameNode *n;

        add_stack(s, 5, 0, MAIN, A, B, -1);
        add_stack(s, 3, 0, MAIN, A, -1);
        add_stack(s, 2, 1, MAIN, C, K_SYS, -1);
        add_stack(s, 1, 0, -1); /* no frame at all: the root's own */
        /* Samples the reply has in no stack: 4 past the stack limit, 2 left out. */
        s->other_samples = 4;
        s->total_samples += 6;

        ck_assert_int_eq(flame_tree_build(s, &t), 0);
        ck_assert_uint_eq(t->total, 17);
        ck_assert_uint_eq(t->nodes[0].inclusive, 17);
        ck_assert_uint_eq(t->nodes[0].exclusive, 1);

        n = FIND(t, "main");
        ck_assert_ptr_nonnull(n);
        ck_assert_uint_eq(n->inclusive, 10);
        ck_assert_uint_eq(n->exclusive, 0);
        ck_assert_uint_eq(n->depth, 1);
        ck_assert_uint_eq(n->start, 0);
        n = FIND(t, "main", "a");
        ck_assert_uint_eq(n->inclusive, 8);
        ck_assert_uint_eq(n->exclusive, 3);
        ck_assert_uint_eq(n->start, 0);
        n = FIND(t, "main", "a", "b");
        ck_assert_uint_eq(n->inclusive, 5);
        ck_assert_uint_eq(n->exclusive, 5);
        n = FIND(t, "main", "c");
        ck_assert_uint_eq(n->inclusive, 2);
        ck_assert_uint_eq(n->exclusive, 0);
        ck_assert_uint_eq(n->start, 8); /* after a, by name */
        n = find(t, true, (const char *const[]){ "main", "c", "k_sys" }, 3);
        ck_assert_ptr_nonnull(n);
        ck_assert_int_eq(n->kind, FLAME_NODE_KERNEL);
        ck_assert_uint_eq(n->exclusive, 2);
        ck_assert_str_eq(flame_node_module(t, n), "[kernel]");
        ck_assert_double_eq_tol(flame_tree_percent(t, n->inclusive), 100.0 * 2 / 17, 1e-9);

        /* The unlisted samples, after the functions. */
        n = FIND(t, "[stacks past the daemon's per-target limit]");
        ck_assert_ptr_nonnull(n);
        ck_assert_int_eq(n->kind, FLAME_NODE_OTHER);
        ck_assert_uint_eq(n->inclusive, 4);
        ck_assert_uint_eq(n->start, 10);
        n = FIND(t, "[stacks too rare to fit in the daemon's reply]");
        ck_assert_ptr_nonnull(n);
        ck_assert_uint_eq(n->inclusive, 2);
        ck_assert_uint_eq(n->start, 14);

        /* Every node's inclusive is its exclusive and its children's. */
        for (size_t i = 0; i < t->n_nodes; i++) {
                uint64_t sum = t->nodes[i].exclusive;
                for (size_t c = 0; c < t->nodes[i].n_children; c++)
                        sum += t->nodes[t->children[t->nodes[i].first_child + c]].inclusive;
                ck_assert_uint_eq(sum, t->nodes[i].inclusive);
        }
}
END_TEST

START_TEST(test_recursion)
{
        static const char *const rnames[] = { "main", "f", "f" };
        _cleanup_(stack_table_freep) StackTable *s = table_new(rnames, 2);
        _cleanup_(flame_tree_freep) FlameTree *t = NULL;
        const FlameNode *n;

        add_stack(s, 4, 0, 0, 1, 1, 1, -1);
        add_stack(s, 1, 0, 0, 1, -1);
        /* The same function in the kernel is another frame. */
        add_stack(s, 2, 1, 0, 1, 1, -1);
        ck_assert_int_eq(flame_tree_build(s, &t), 0);

        n = FIND(t, "main", "f");
        ck_assert_uint_eq(n->inclusive, 7);
        ck_assert_uint_eq(n->exclusive, 1);
        n = FIND(t, "main", "f", "f");
        ck_assert_uint_eq(n->inclusive, 4);
        ck_assert_uint_eq(n->exclusive, 0);
        n = find(t, true, rnames, 3);
        ck_assert_ptr_nonnull(n);
        ck_assert_uint_eq(n->inclusive, 2);
        ck_assert_uint_eq(n->exclusive, 2);
        n = FIND(t, "main", "f", "f", "f");
        ck_assert_uint_eq(n->inclusive, 4);
        ck_assert_uint_eq(n->exclusive, 4);
        ck_assert_uint_eq(t->max_depth, 4);
        /* The path's key differs from the same function's one level up. */
        ck_assert_uint_ne(FIND(t, "main", "f", "f")->key, FIND(t, "main", "f")->key);
}
END_TEST

static void escaped(const char *s, size_t max_chars, const char *expected)
{
        _cleanup_(flame_buffer_done) FlameBuffer b = {};

        flame_buffer_escape(&b, s, max_chars);
        ck_assert_int_eq(b.error, 0);
        ck_assert_str_eq(b.data ?: "", expected);
}

START_TEST(test_escape)
{
        escaped("plain::name<int>", SIZE_MAX, "plain::name&lt;int&gt;");
        escaped("a&b\"c'd", SIZE_MAX, "a&amp;b&quot;c&#39;d");
        escaped("</text><script>alert(1)</script>", SIZE_MAX,
                "&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
        /* Invalid UTF-8, byte by byte: a stray continuation, a truncated sequence, an overlong '/', a surrogate,
         * past U+10FFFF. */
        escaped("x\x80y", SIZE_MAX, "x\xef\xbf\xbdy");
        escaped("\xe2\x82", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd");
        escaped("\xc0\xaf", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd");
        escaped("\xed\xa0\x80", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        escaped("\xf4\x90\x80\x80", SIZE_MAX, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        /* Controls (C0, DEL, C1) and noncharacters. */
        escaped("a\x01\n\x7f\xc2\x85z", SIZE_MAX, "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
        escaped("\xef\xbf\xbe", SIZE_MAX, "\xef\xbf\xbd");
        /* Valid multibyte text stays. */
        escaped("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5", SIZE_MAX, "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5");

        /* Cut to code points, never inside one, nor inside a character reference. */
        escaped("abcdef", 6, "abcdef");
        escaped("abcdef", 5, "abc..");
        escaped("abc", 3, "abc");
        escaped("abcd", 3, "a..");
        escaped("abcd", 2, "");
        escaped("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3, "\xc3\xa9..");
        escaped("<<<<", 3, "&lt;..");
        ck_assert_uint_eq(flame_utf8_chars("a\xc3\xa9\xff"), 3);
}
END_TEST

/* The document of s, which must fit max_bytes (0: no bound). */
static char *render(const StackTable *s, FlamegraphFormat format, const FlamegraphOptions *o, size_t max_bytes,
                    int *ret_error, size_t *ret_size)
{
        _cleanup_(flame_tree_freep) FlameTree *t = NULL;
        FlameBuffer b = { .max = max_bytes };

        ck_assert_int_eq(flame_tree_build(s, &t), 0);
        flamegraph_write(&b, t, "1234", format, o);
        *ret_error = b.error;
        if (ret_size)
                *ret_size = b.size;
        if (b.error < 0) {
                flame_buffer_done(&b);
                return NULL;
        }
        return b.data;
}

static size_t count(const char *haystack, const char *needle)
{
        size_t n = 0;

        for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* Whether s is valid UTF-8 without C0 controls but tab and newline. */
static bool clean_text(const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p < 0x20 && *p != '\n' && *p != '\t')
                        return false;
                if (*p >= 0x80) {
                        size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
                        if (*p < 0xc2 || *p > 0xf4)
                                return false;
                        for (size_t i = 1; i < n; i++)
                                if ((p[i] & 0xc0) != 0x80)
                                        return false;
                        p += n - 1;
                }
        }
        return true;
}

START_TEST(test_hostile_names)
{
        static const char *const hostile[] = {
                "main",
                "\"><script>alert(1)</script>",
                "'onload='alert(2)",
                "]]><script>alert(3)</script><![CDATA[",
                "evil\x01\x1b[31m\xff\xfe</title>",
        };
        _cleanup_(stack_table_freep) StackTable *s = table_new(hostile, ELEMENTSOF(hostile));
        FlamegraphOptions o = { .title = "<b>title</b>", .refresh_seconds = 5 };
        FlamegraphFormat formats[] = { FLAMEGRAPH_SVG, FLAMEGRAPH_HTML };
        int error;

        add_stack(s, 10, 0, 0, 1, -1);
        add_stack(s, 10, 0, 0, 2, -1);
        add_stack(s, 10, 0, 0, 3, -1);
        add_stack(s, 10, 0, 0, 4, -1);
        for (size_t i = 0; i < ELEMENTSOF(formats); i++) {
                _cleanup_free_ char *doc = render(s, formats[i], &o, 0, &error, NULL);

                ck_assert_int_eq(error, 0);
                /* The one script is the page's own; no name opens an element, an attribute or a section. */
                ck_assert_uint_eq(count(doc, "<script"), 1);
                ck_assert_uint_eq(count(doc, "alert("), 3 * 3); /* each in data-f, title, text: escaped */
                ck_assert_uint_eq(count(doc, "&lt;script&gt;alert(1)"), 3);
                ck_assert_uint_eq(count(doc, "'onload"), 0);
                ck_assert_uint_eq(count(doc, "&#39;onload=&#39;alert(2)"), 3);
                ck_assert_uint_eq(count(doc, "]]>"), 0);
                ck_assert_uint_eq(count(doc, "<![CDATA["), 0);
                ck_assert_uint_eq(count(doc, "<b>"), 0);
                ck_assert_uint_eq(count(doc, "&lt;b&gt;title&lt;/b&gt;"), formats[i] == FLAMEGRAPH_HTML ? 3 : 1);
                ck_assert(clean_text(doc));
                ck_assert_uint_eq(count(doc, "data-refresh=\"5\""), formats[i] == FLAMEGRAPH_HTML ? 1 : 0);
        }
}
END_TEST

START_TEST(test_elision)
{
        static const char *const enames[] = { "main", "wide", "narrow", "deeper" };
        _cleanup_(stack_table_freep) StackTable *s = table_new(enames, ELEMENTSOF(enames));
        _cleanup_(flame_tree_freep) FlameTree *t = NULL;
        _cleanup_free_ char *doc = NULL;
        int error;

        /* 10000 samples: 10 (0.1%) are drawn, 9 are not, nor what is under them. */
        add_stack(s, 9981, 0, 0, -1);
        add_stack(s, 10, 0, 0, 1, -1);
        add_stack(s, 9, 0, 0, 2, 3, -1);
        ck_assert_uint_eq(s->total_samples, 10000);
        ck_assert_int_eq(flame_tree_build(s, &t), 0);
        ck_assert(flamegraph_node_drawn(t, FIND(t, "main", "wide")));
        ck_assert(!flamegraph_node_drawn(t, FIND(t, "main", "narrow")));
        ck_assert(!flamegraph_node_drawn(t, FIND(t, "main", "narrow", "deeper")));

        doc = render(s, FLAMEGRAPH_SVG, NULL, 0, &error, NULL);
        ck_assert_int_eq(error, 0);
        ck_assert_uint_eq(count(doc, "<g class=\"f"), 3); /* all, main, wide */
        ck_assert_uint_eq(count(doc, "data-f=\"narrow\""), 0);
        ck_assert_uint_eq(count(doc, "2 frames under 0.1% of the samples are not drawn"), 1);
        /* main keeps the narrow one's samples in its width: all of it. */
        ck_assert_uint_eq(count(doc, "data-n=\"10000\" data-x=\"9981\" data-d=\"1\" data-f=\"main\""), 1);
        ck_assert_uint_eq(count(doc, "<title>main (app)\n10000 samples, 100.00% inclusive, 99.81% exclusive"), 1);
        ck_assert_uint_eq(count(doc, "<title>wide (app)\n10 samples, 0.10% inclusive, 0.10% exclusive"), 1);

        /* An inlined frame says so in its title. */
        s->functions[1].inlined = true;
        free(doc);
        doc = render(s, FLAMEGRAPH_SVG, NULL, 0, &error, NULL);
        ck_assert_int_eq(error, 0);
        ck_assert_uint_eq(count(doc, "<title>wide (app) [inlined]\n10 samples"), 1);
        ck_assert_uint_eq(count(doc, "<title>main (app)\n10000 samples"), 1);
}
END_TEST

START_TEST(test_bound)
{
        _cleanup_(stack_table_freep) StackTable *s = table_new(names, ELEMENTSOF(names));
        _cleanup_free_ char *doc = NULL, *exact = NULL;
        size_t size, size2;
        int error;

        add_stack(s, 5, 0, MAIN, A, B, -1);
        add_stack(s, 3, 1, MAIN, K_SYS, -1);
        doc = render(s, FLAMEGRAPH_HTML, NULL, 0, &error, &size);
        ck_assert_int_eq(error, 0);
        ck_assert_uint_eq(strlen(doc), size);

        exact = render(s, FLAMEGRAPH_HTML, NULL, size, &error, &size2);
        ck_assert_int_eq(error, 0);
        ck_assert_uint_eq(size2, size);
        ck_assert_str_eq(exact, doc);
        ck_assert_ptr_null(render(s, FLAMEGRAPH_HTML, NULL, size - 1, &error, NULL));
        ck_assert_int_eq(error, -EFBIG);
        ck_assert_ptr_null(render(s, FLAMEGRAPH_SVG, NULL, 100, &error, NULL));
        ck_assert_int_eq(error, -EFBIG);
}
END_TEST

START_TEST(test_empty)
{
        _cleanup_(stack_table_freep) StackTable *s = table_new(names, ELEMENTSOF(names));
        _cleanup_free_ char *doc = NULL;
        int error;

        doc = render(s, FLAMEGRAPH_SVG, NULL, 0, &error, NULL);
        ck_assert_int_eq(error, 0);
        ck_assert_uint_eq(count(doc, "<g class=\"f"), 0);
        ck_assert_uint_eq(count(doc, "data-total=\"0\""), 1);

        /* A table whose counts contradict each other is refused. */
        s->other_samples = 1;
        {
                _cleanup_(flame_tree_freep) FlameTree *t = NULL;
                ck_assert_int_eq(flame_tree_build(s, &t), -EINVAL);
        }
}
END_TEST

/* Random tables of random names (any bytes but NUL) and stacks (deep, recursive, kernel frames, shared
 * prefixes), from a fixed seed: the counts add up in every node, and the document has the page's one script, no
 * control byte and only valid UTF-8, and draws exactly the nodes of 0.1% or more. */
START_TEST(test_random)
{
        unsigned seed = 17;

        for (int round = 0; round < 200; round++) {
                _cleanup_(stack_table_freep) StackTable *s = calloc(1, sizeof(StackTable));
                _cleanup_(flame_tree_freep) FlameTree *t = NULL;
                _cleanup_free_ char *doc = NULL;
                size_t n_functions = 1 + (size_t)rand_r(&seed) % 40, drawn = 0;
                int error;

                ck_assert_ptr_nonnull(s);
                s->functions = calloc(n_functions, sizeof(StackFunction));
                ck_assert_ptr_nonnull(s->functions);
                for (size_t i = 0; i < n_functions; i++) {
                        size_t len = (size_t)rand_r(&seed) % 24;
                        char *name = calloc(len + 1, 1);

                        ck_assert_ptr_nonnull(name);
                        for (size_t k = 0; k < len; k++)
                                name[k] = (char)(1 + rand_r(&seed) % 255);
                        s->functions[i] = (StackFunction){ .function = name, .module = strdup(i % 2 ? "m" : "") };
                }
                s->n_functions = n_functions;
                for (int k = 0, n = rand_r(&seed) % 60; k < n; k++) {
                        size_t depth = (size_t)rand_r(&seed) % 12;
                        StackEntry *e;

                        s->stacks = reallocarray(s->stacks, s->n_stacks + 1, sizeof(StackEntry));
                        ck_assert_ptr_nonnull(s->stacks);
                        e = &s->stacks[s->n_stacks++];
                        *e = (StackEntry){ .n_frames = depth, .samples = 1 + (uint64_t)(rand_r(&seed) % 5000) };
                        e->frames = calloc(MAX(depth, (size_t)1), sizeof(uint32_t));
                        ck_assert_ptr_nonnull(e->frames);
                        for (size_t d = 0; d < depth; d++)
                                /* Few functions near the root: shared prefixes. */
                                e->frames[d] = (uint32_t)(rand_r(&seed) % (d < 3 ? MIN(n_functions, 3) : n_functions));
                        e->n_kernel = depth > 0 ? (uint32_t)(rand_r(&seed) % (depth + 1)) : 0;
                        s->listed_samples += e->samples;
                }
                s->other_samples = (uint64_t)(rand_r(&seed) % 3) * 100;
                s->total_samples = s->listed_samples + s->other_samples + (uint64_t)(rand_r(&seed) % 2) * 7;

                ck_assert_int_eq(flame_tree_build(s, &t), 0);
                ck_assert_uint_eq(t->total, s->total_samples);
                for (size_t i = 0; i < t->n_nodes; i++) {
                        const FlameNode *n = &t->nodes[i];
                        uint64_t sum = n->exclusive, start = n->start;

                        for (size_t c = 0; c < n->n_children; c++) {
                                const FlameNode *k = &t->nodes[t->children[n->first_child + c]];
                                ck_assert_uint_eq(k->start, start); /* side by side, inside the parent */
                                ck_assert_uint_eq(k->depth, n->depth + 1);
                                start += k->inclusive;
                                sum += k->inclusive;
                        }
                        ck_assert_uint_eq(sum, n->inclusive);
                        drawn += flamegraph_node_drawn(t, n);
                }

                doc = render(s, round % 2 ? FLAMEGRAPH_HTML : FLAMEGRAPH_SVG, NULL, 0, &error, NULL);
                ck_assert_int_eq(error, 0);
                ck_assert_uint_eq(count(doc, "<script"), 1);
                ck_assert_uint_eq(count(doc, "</script"), 1);
                ck_assert_uint_eq(count(doc, "<g class=\"f"), s->total_samples > 0 ? drawn : 0);
                ck_assert(clean_text(doc));
        }
}
END_TEST

/* A bus that makes messages but sends none: one end of a socketpair, started, never read. */
static sd_bus *message_bus(int fds[2])
{
        sd_bus *bus = NULL;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        return bus;
}

/* A GetStacks reply: main;a (5 samples), main;k (2, k a kernel frame), total and other as given, a stack whose
 * frame index is bad_index when it is not UINT32_MAX, a kernel count of bad_kernel for the first stack. */
static int decode(sd_bus *bus, uint64_t total, uint64_t other, uint32_t bad_index, uint32_t bad_kernel,
                  StackTable **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

        ck_assert_int_ge(sd_bus_message_new_signal(bus, &m, "/x", "x.y", "Z"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "tt(tt)", total, other, UINT64_C(1000000), UINT64_C(3000000)), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "a(ss)", 3, "app", "main", "app", "a<&>", "[kernel]", "k"), 0);
        ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "(auut)"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "(auut)", 2, 0, 1, bad_kernel, UINT64_C(5)), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "(auut)", 2, 0, 2, 1, UINT64_C(2)), 0);
        if (bad_index != UINT32_MAX)
                ck_assert_int_ge(sd_bus_message_append(m, "(auut)", 1, bad_index, 0, UINT64_C(1)), 0);
        ck_assert_int_ge(sd_bus_message_close_container(m), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        return stack_table_from_reply(m, ret);
}

START_TEST(test_reply)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(stack_table_freep) StackTable *t = NULL;
        StackTable *bad = NULL;
        int fds[2];

        bus = message_bus(fds);
        ck_assert_int_eq(decode(bus, 10, 1, UINT32_MAX, 0, &t), 0);
        ck_assert_uint_eq(t->n_functions, 3);
        ck_assert_str_eq(t->functions[1].function, "a<&>");
        ck_assert_str_eq(t->functions[2].module, "[kernel]");
        ck_assert_uint_eq(t->n_stacks, 2);
        ck_assert_uint_eq(t->stacks[0].n_frames, 2);
        ck_assert_uint_eq(t->stacks[0].frames[1], 1);
        ck_assert_uint_eq(t->stacks[1].n_kernel, 1);
        ck_assert(stack_entry_is_kernel(&t->stacks[1], 1));
        ck_assert(!stack_entry_is_kernel(&t->stacks[1], 0));
        ck_assert_uint_eq(t->listed_samples, 7);
        ck_assert_uint_eq(t->total_samples, 10);
        ck_assert_uint_eq(t->other_samples, 1);
        ck_assert_uint_eq(t->window_start_usec, 1000000);
        ck_assert_uint_eq(t->window_end_usec, 3000000);

        /* Refused, whole: a frame of no function, more kernel frames than frames, more samples listed than the
         * total has room for, more other samples than the total. */
        ck_assert_int_eq(decode(bus, 10, 0, 3, 0, &bad), -EBADMSG);
        ck_assert_int_eq(decode(bus, 10, 0, UINT32_MAX, 3, &bad), -EBADMSG);
        ck_assert_int_eq(decode(bus, 7, 1, UINT32_MAX, 0, &bad), -EBADMSG);
        ck_assert_int_eq(decode(bus, 7, 8, UINT32_MAX, 0, &bad), -EBADMSG);
        ck_assert_ptr_null(bad);
        close(fds[1]);
}
END_TEST

/* Which modules' functions the stacks mark as Python (bus-client-stacks.h): the daemon's names for them. */
START_TEST(test_python_modules)
{
        ck_assert(stack_module_is_python("/srv/app/handlers.py"));
        ck_assert(stack_module_is_python("tests/integration/../workloads/x.py"));
        ck_assert(stack_module_is_python("gui.pyw"));
        ck_assert(stack_module_is_python("<frozen importlib._bootstrap>"));
        ck_assert(stack_module_is_python("<string>"));
        ck_assert(stack_module_is_python("[python]"));
        ck_assert(!stack_module_is_python("python3.11"));
        ck_assert(!stack_module_is_python("libpython3.11.so.1.0"));
        ck_assert(!stack_module_is_python("[kernel]"));
        ck_assert(!stack_module_is_python("[vdso]"));
        ck_assert(!stack_module_is_python(".py.so"));
        ck_assert(!stack_module_is_python("py"));
        ck_assert(!stack_module_is_python("<"));
        ck_assert(!stack_module_is_python(""));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("flamegraph");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_tree);
        tcase_add_test(tc, test_recursion);
        tcase_add_test(tc, test_escape);
        tcase_add_test(tc, test_hostile_names);
        tcase_add_test(tc, test_elision);
        tcase_add_test(tc, test_bound);
        tcase_add_test(tc, test_empty);
        tcase_add_test(tc, test_reply);
        tcase_add_test(tc, test_random);
        tcase_add_test(tc, test_python_modules);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
