/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "top-fetch.h"
#include "top-state.h"

/* top's full screen, drawn with ncurses: the header lines, the table fitted to the terminal's width and
 * height, the help over it. Each draw erases and redraws the whole screen in ncurses' buffer and lets
 * ncurses send the difference, so nothing flickers. While the screen is up, standard error is held in
 * memory, so that a message does not land in the middle of the screen: it is printed when the screen ends.
 */

typedef struct TopScreen TopScreen;

/* Takes the terminal of standard input and output; -ENOTTY when ncurses cannot drive it (TERM unknown). */
int top_screen_new(TopScreen **ret);
/* Gives the terminal back as it was (endwin()), then prints what came to standard error meanwhile. */
TopScreen *top_screen_free(TopScreen *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(TopScreen *, top_screen_free);

/* After SIGWINCH: takes the terminal's new size. */
void top_screen_resize(TopScreen *s);

/* The next key typed, or -1 when none is waiting (never blocks). */
int top_screen_read_key(TopScreen *s);

/* How many rows of the table fit on s; with s NULL, on the terminal of standard output before the screen is
 * up (0 when it has no size). */
uint32_t top_screen_table_rows(const TopScreen *s);

/* What was logged since the screen came up, or since the last call: its last line, in buf, and the rest
 * dropped; an empty string when nothing was. For an error that the screen shows instead of ending. */
void top_screen_take_error(TopScreen *s, char *buf, size_t size);

/* The view v, with the keys' state st (paused, help, notice) and error, when not empty, on the header's
 * last line. target: as on the command line, NULL for every target. */
void top_screen_draw(TopScreen *s, const TopState *st, const char *target, const TopView *v,
                     const char *error);
