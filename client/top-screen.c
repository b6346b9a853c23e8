/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include "profile.h"
#include "table-schema.h"
#include "top-header.h"
#include "top-screen.h"

/* The header's lines above the table's headings. */
#define HEADER_LINES 5
/* What is kept of standard error while the screen is up. */
#define HELD_STDERR_MAX (64 * 1024)

struct TopScreen {
        SCREEN *screen;
        int saved_stderr; /* the real standard error while fd 2 is held_stderr */
        int held_stderr;
};

int top_screen_new(TopScreen **ret)
{
        _cleanup_(top_screen_freep) TopScreen *s = NULL;
        const char *cup;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->saved_stderr = s->held_stderr = -1;

        s->screen = newterm(NULL, stdout, stdin);
        if (!s->screen)
                return -ENOTTY;
        /* A terminal that cannot move its cursor (TERM=dumb) gets lines after lines, not a screen. */
        cup = tigetstr("cup");
        if (!cup || cup == (char *)-1)
                return -ENOTTY;
        /* Keys one at a time and unechoed, never waiting; the cursor hidden. Ctrl+C stays a signal. */
        if (cbreak() == ERR || noecho() == ERR || nodelay(stdscr, TRUE) == ERR ||
            keypad(stdscr, TRUE) == ERR)
                return -ENOTTY;
        (void)curs_set(0);

        s->held_stderr = memfd_create("vprofctl-top-stderr", MFD_CLOEXEC);
        if (s->held_stderr >= 0)
                s->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        if (s->saved_stderr >= 0 && dup2(s->held_stderr, STDERR_FILENO) < 0)
                s->saved_stderr = safe_close(s->saved_stderr);

        *ret = TAKE_PTR(s);
        return 0;
}

/* Prints what standard error got while it was held, up to HELD_STDERR_MAX. */
static void release_stderr(TopScreen *s)
{
        char buf[4096];
        size_t left = HELD_STDERR_MAX;
        ssize_t n;

        if (s->saved_stderr < 0)
                return;
        (void)dup2(s->saved_stderr, STDERR_FILENO);
        s->saved_stderr = safe_close(s->saved_stderr);
        if (lseek(s->held_stderr, 0, SEEK_SET) < 0)
                return;
        while (left > 0 && (n = read(s->held_stderr, buf, MIN(sizeof(buf), left))) > 0) {
                if (write(STDERR_FILENO, buf, (size_t)n) != n)
                        break;
                left -= (size_t)n;
        }
}

TopScreen *top_screen_free(TopScreen *s)
{
        if (!s)
                return NULL;
        if (s->screen) {
                endwin();
                delscreen(s->screen);
        }
        release_stderr(s);
        safe_close(s->held_stderr);
        free(s);
        return NULL;
}

void top_screen_resize(_unused_ TopScreen *s)
{
        struct winsize ws;

        /* ncurses' own SIGWINCH handler does not run: the event loop takes the signal. */
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
                (void)resize_term(ws.ws_row, ws.ws_col);
        /* What the terminal shows after a resize is its own business (a wider one may bring back text it
         * cut): ncurses' copy of it no longer says, so the next refresh paints every cell, once. */
        (void)clearok(curscr, TRUE);
}

void top_screen_take_error(TopScreen *s, char *buf, size_t size)
{
        char text[4096];
        ssize_t n = -1;
        off_t end, len;
        char *line;

        buf[0] = '\0';
        if (s->saved_stderr < 0)
                return;
        /* The last line is at the end of what was written. */
        end = lseek(s->held_stderr, 0, SEEK_END);
        len = MIN((off_t)sizeof(text) - 1, end);
        if (len > 0)
                n = pread(s->held_stderr, text, (size_t)len, end - len);
        if (ftruncate(s->held_stderr, 0) < 0 || lseek(s->held_stderr, 0, SEEK_SET) < 0)
                return;
        if (n <= 0)
                return;
        text[n] = '\0';
        while (n > 0 && text[n - 1] == '\n')
                text[--n] = '\0';
        line = strrchr(text, '\n');
        snprintf(buf, size, "%s", line ? line + 1 : text);
}

int top_screen_read_key(_unused_ TopScreen *s)
{
        int c = getch();

        return c == ERR ? -1 : c;
}

uint32_t top_screen_table_rows(const TopScreen *s)
{
        struct winsize ws;
        int lines = LINES;

        if (!s)
                lines = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_row : 0;
        /* The header, then the headings. */
        return lines > HEADER_LINES + 1 ? (uint32_t)(lines - HEADER_LINES - 1) : 0;
}

/* Copies s into out, cut to at most width columns, with every character that does not print (a control
 * character, an invalid sequence: a thread's name is whatever the process set) as '?'. Returns the columns
 * used. */
static int fit_text(const char *s, int width, char *out, size_t size)
{
        mbstate_t state = {};
        size_t len = strlen(s), o = 0;
        int used = 0;

        while (len > 0 && used < width) {
                wchar_t wc;
                size_t n = mbrtowc(&wc, s, len, &state);
                int w;

                if (n == (size_t)-1 || n == (size_t)-2 || n == 0 || !iswprint(wc) || (w = wcwidth(wc)) < 0) {
                        memset(&state, 0, sizeof(state));
                        n = 1;
                        w = 1;
                        wc = 0;
                }
                if (used + w > width || o + (wc ? n : 1) >= size)
                        break;
                if (wc)
                        memcpy(out + o, s, n);
                else
                        out[o] = '?';
                o += wc ? n : 1;
                used += w;
                s += n;
                len -= n;
        }
        out[o] = '\0';
        return used;
}

/* Draws text at (y, x) in at most width columns, left-aligned or right-aligned, and nothing past the right
 * edge. */
static void put_text(int y, int x, int width, const char *text, bool right)
{
        char buf[1024];
        int used;

        if (x >= COLS || width <= 0)
                return;
        used = fit_text(text, MIN(width, COLS - x), buf, sizeof(buf));
        mvaddstr(y, right ? x + MIN(width, COLS - x) - used : x, buf);
}

/* --- the table
 * ------------------------------------------------------------------------------------------------ */

#define MAX_COLUMNS 8

/* The columns of report's tables (table-schema.h) but the optional ones and the modules' symbols; names give way
 * to the width, numbers never. A thread's or process's inclusive and exclusive counts are both its samples. */
static size_t top_columns(ReportKind kind, const TableColumn *ret[static MAX_COLUMNS])
{
        const TableColumn *c;
        size_t n, k = 0;

        c = table_schema_columns((TableKind)kind, &n);
        for (size_t i = 0; i < n && k < MAX_COLUMNS; i++)
                if (!(c[i].flags & (TABLE_COLUMN_JSON_ONLY | TABLE_COLUMN_OPTIONAL | TABLE_COLUMN_SYMBOLS)))
                        ret[k++] = &c[i];
        return k;
}

static const char *cell(const ReportRow *row, const TableColumn *c, char *buf, size_t size)
{
        return table_cell_text(c, row, false, 0, buf, size);
}

/* The display width of a name, up to limit. */
static int name_width(const char *s, int limit)
{
        char buf[1024];

        return fit_text(s, limit, buf, sizeof(buf));
}

/* The width of each column for the rows shown: numbers as wide as their widest cell, then the names share
 * what is left of the screen, the module at most a third of it. */
static void layout(const ReportTable *t, const TableColumn *const *c, size_t n, size_t n_rows,
                   int widths[static MAX_COLUMNS])
{
        int space = COLS - (int)n + 1, name = -1, module = -1;
        char buf[1024]; /* a name with its "(inlined)" mark */

        for (size_t i = 0; i < n; i++) {
                widths[i] = (int)strlen(c[i]->heading);
                for (size_t r = 0; r < n_rows; r++) {
                        const char *text = cell(&t->rows[r], c[i], buf, sizeof(buf));

                        widths[i] = MAX(widths[i], table_column_is_name(c[i]) ? name_width(text, COLS)
                                                                               : (int)strlen(text));
                }
                if (c[i]->width == TABLE_WIDTH_NAME)
                        name = (int)i;
                else if (c[i]->width == TABLE_WIDTH_SUBNAME)
                        module = (int)i;
                else
                        space -= widths[i];
        }
        space = MAX(space, 0);
        if (module >= 0) {
                widths[module] = MIN(widths[module], space / 3);
                space = MAX(space - widths[module], 0);
        }
        if (name >= 0)
                widths[name] = MIN(widths[name], MAX(space, 1));
}

/* Whether the column is the one the table is sorted by. */
static bool sorted_by(const TopState *st, const ReportTable *t, const TableColumn *c)
{
        if (IN_SET(t->kind, REPORT_THREADS, REPORT_PROCESSES))
                return c->flags & TABLE_COLUMN_SORT_INCLUSIVE;
        return ((c->flags & TABLE_COLUMN_SORT_INCLUSIVE) && st->sort == PROFILE_SORT_INCLUSIVE) ||
               ((c->flags & TABLE_COLUMN_SORT_EXCLUSIVE) && st->sort == PROFILE_SORT_EXCLUSIVE);
}

static void draw_table(const TopState *st, const ReportTable *t, int top, size_t n_rows)
{
        const TableColumn *c[MAX_COLUMNS];
        size_t n = top_columns(t->kind, c);
        int widths[MAX_COLUMNS], x = 0;
        char buf[1024];

        layout(t, c, n, n_rows, widths);

        /* The headings in reverse video across the whole width; the sort column's underlined too. */
        attron(A_REVERSE);
        mvhline(top, 0, ' ', COLS);
        for (size_t i = 0; i < n; x += widths[i] + 1, i++) {
                bool sorted = sorted_by(st, t, c[i]);

                if (sorted)
                        attron(A_UNDERLINE);
                put_text(top, x, widths[i], c[i]->heading, !table_column_is_name(c[i]));
                if (sorted)
                        attroff(A_UNDERLINE);
        }
        attroff(A_REVERSE);

        for (size_t r = 0; r < n_rows; r++) {
                x = 0;
                for (size_t i = 0; i < n; x += widths[i] + 1, i++)
                        put_text(top + 1 + (int)r, x, widths[i], cell(&t->rows[r], c[i], buf, sizeof(buf)),
                                 !table_column_is_name(c[i]));
        }
}

/* --- the header and the help
 * ---------------------------------------------------------------------------------- */

static void draw_header(const TopState *st, const char *target, const TopView *v, const char *error)
{
        char target_text[96], event[96], window[128], lost[128], line[512];
        static const char hint[] = "h: help";

        top_header_target(target_text, sizeof(target_text), target);
        top_header_event(event, sizeof(event), v);
        top_header_window(window, sizeof(window), v);
        top_header_lost(lost, sizeof(lost), v);

        snprintf(line, sizeof(line), "vprofctl top: %s, %s", target_text, event);
        put_text(0, 0, COLS, line, false);
        if (COLS > (int)(strlen(line) + sizeof(hint)))
                put_text(0, COLS - (int)strlen(hint), (int)strlen(hint), hint, false);
        snprintf(line, sizeof(line), "Window: %s   Samples: %" PRIu64, window, v->table->total_samples);
        put_text(1, 0, COLS, line, false);
        snprintf(line, sizeof(line), "Lost: %s", lost);
        put_text(2, 0, COLS, line, false);
        snprintf(line, sizeof(line), "Table: %s, sorted by %s", top_table_name(v->table->kind),
                 IN_SET(v->table->kind, REPORT_THREADS, REPORT_PROCESSES)
                         ? "samples"
                         : profile_sort_to_string(v->shown.sort));
        put_text(3, 0, COLS, line, false);
        if (st->paused) {
                attron(A_REVERSE | A_BOLD);
                put_text(3, (int)strlen(line) + 3, COLS, "PAUSED", false);
                attroff(A_REVERSE | A_BOLD);
        }
        /* Why the last key did nothing, or why the last refresh failed (the view is then the one before). */
        if (st->notice || (error && error[0])) {
                attron(A_BOLD);
                put_text(4, 0, COLS, st->notice ?: error, false);
                attroff(A_BOLD);
        }
}

static void draw_help(void)
{
        static const char *const lines[] = {
                "vprofctl top: keys",
                "",
                "q      quit",
                "w      window: 1s, 10s, 60s, all since attach",
                "s      sort: exclusive or inclusive",
                "f      functions",
                "m      modules",
                "t      threads (without a target: processes)",
                "p      pause; p again resumes",
                "h ?    this help",
                "",
                "Any key closes this help.",
        };
        int width = 0, height = (int)ELEMENTSOF(lines) + 2, top, left;

        for (size_t i = 0; i < ELEMENTSOF(lines); i++)
                width = MAX(width, (int)strlen(lines[i]));
        width += 4;
        top = MAX((LINES - height) / 2, 0);
        left = MAX((COLS - width) / 2, 0);

        attron(A_REVERSE);
        for (int y = 0; y < height && top + y < LINES; y++) {
                mvhline(top + y, left, ' ', MIN(width, COLS - left));
                if (y > 0 && y <= (int)ELEMENTSOF(lines))
                        put_text(top + y, left + 2, width - 4, lines[y - 1], false);
        }
        attroff(A_REVERSE);
}

void top_screen_draw(TopScreen *s, const TopState *st, const char *target, const TopView *v,
                     const char *error)
{
        size_t n_rows = MIN(v->table->n_rows, (size_t)top_screen_table_rows(s));

        /* erase(), not clear(): clear() makes the next refresh() repaint the whole terminal, the flicker. */
        erase();
        draw_header(st, target, v, error);
        if (LINES > HEADER_LINES)
                draw_table(&v->shown, v->table, HEADER_LINES, n_rows);
        if (st->help)
                draw_help();
        refresh();
}
