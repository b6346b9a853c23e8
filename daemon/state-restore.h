/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "state-internal.h"

/* Restoring at start, the half of the state store (state-store.h) that state_store_setup() calls once; it uses
 * the layout and helpers of state-internal.h and nothing of the saving half. */

/* Restore the saved targets, replaying the journal of their snapshot; returns the snapshot's generation (0 for
 * none). Logs everything it does. */
uint64_t state_restore(StateStore *s);
