/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exporter-config.h"

/* Who may ask at all, before whose rights a request reads with (exporter-peer.h): the Host header, against DNS
 * rebinding, and the bearer token of a client that is not on this machine. */

/* The longest token a token file may hold. */
#define EXPORTER_TOKEN_MAX 4096
/* The credential's name, under $CREDENTIALS_DIRECTORY (systemd's LoadCredential=bearer-token:PATH). */
#define EXPORTER_TOKEN_CREDENTIAL "bearer-token"

/* Whether host, a Host header's value, names this exporter: localhost, 127.0.0.1, [::1], the address the
 * client connected to (local_name, "ADDR" or "[ADDR]"; NULL on a unix socket), the address of Listen=, or a
 * name of AllowHosts=, compared without regard to case; with no port, or with local_port (any port on a unix
 * socket, which no browser reaches). */
bool exporter_host_allowed(const ExporterConfig *config, const char *host, const char *local_name,
                           unsigned local_port);

/* Whether header, an Authorization header's value, is "Bearer TOKEN" with this token; in a time that depends on
 * the token's length only, not on how much of it a guess got right. */
bool exporter_bearer_matches(const char *header, const char *token, size_t token_len);

/* The token of a token file: at most EXPORTER_TOKEN_MAX bytes, one trailing newline dropped, the rest visible
 * ASCII and not empty. 0 with *ret (malloc()ed); -EINVAL for a file that holds no such token (-EFBIG when too
 * large), another negative errno when it cannot be read. */
int exporter_token_load(const char *path, char **ret);

/* Who was told about a wrong token lately: each client address is logged once in
 * EXPORTER_AUTH_LOG_INTERVAL_USEC, the rest counted (vprof_exporter_auth_failures_total). Not thread-safe: the
 * caller holds a lock. */
#define EXPORTER_AUTH_LOG_INTERVAL_USEC (UINT64_C(60) * 1000000U)
#define EXPORTER_AUTH_LOG_SLOTS 64
typedef struct ExporterLogLimit {
        struct {
                char address[64];
                uint64_t last_usec;
                uint64_t suppressed;
        } slots[EXPORTER_AUTH_LOG_SLOTS];
} ExporterLogLimit;

/* Whether to log a failure of address at now_usec; *ret_suppressed: the failures of address not logged since its
 * last line. A full table gives way to its oldest entry. */
bool exporter_log_limit(ExporterLogLimit *l, const char *address, uint64_t now_usec, uint64_t *ret_suppressed);
