/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

#define EXPORTER_CONFIG_FILE "/etc/vprof/exporter.conf"
#define EXPORTER_LISTEN_DEFAULT "127.0.0.1:6068"
#define EXPORTER_MAX_CONNECTIONS_DEFAULT 256
#define EXPORTER_REQUEST_TIMEOUT_SEC_DEFAULT 10
#define EXPORTER_MAX_SECONDS_DEFAULT 60
#define EXPORTER_MAX_RESPONSE_BYTES_DEFAULT (UINT64_C(32) << 20)
#define EXPORTER_THREADS_DEFAULT 4
/* Bounds of the values, so that a typo cannot ask for a million threads. */
#define EXPORTER_MAX_CONNECTIONS_MAX 65536
#define EXPORTER_THREADS_MAX 64
#define EXPORTER_ALLOW_TARGETS_MAX 1024
#define EXPORTER_ALLOW_HOSTS_MAX 64

/* What the exporter is told, by /etc/vprof/exporter.conf and then by its command line, which wins. */
typedef struct ExporterConfig {
        char *listen; /* ADDR:PORT or [ADDR]:PORT; ignored when systemd passes the socket */
        uint32_t max_connections;
        uint32_t max_connections_per_ip; /* 0: MaxConnections= alone bounds them */
        uint32_t request_timeout_sec;
        uint32_t max_seconds;
        uint64_t max_response_bytes;
        uint32_t threads;
        char **allow_targets; /* the specs a request may read; none: every target the bus lets us see */
        size_t n_allow_targets;
        char **allow_hosts; /* the Host names accepted besides localhost and the addresses (exporter-access.h) */
        size_t n_allow_hosts;
        char *bearer_token_file; /* NULL: $CREDENTIALS_DIRECTORY/bearer-token, if systemd passes it */
} ExporterConfig;

void exporter_config_init(ExporterConfig *c);
void exporter_config_done(ExporterConfig *c);

/* Sets one value by its configuration file key ("MaxSeconds"); where names the source ("PATH:3", NULL for the
 * command line) in the one line logged on a bad value (-EINVAL) or an unknown key (-ENOENT). */
int exporter_config_set(ExporterConfig *c, const char *key, const char *value, const char *where);

/* The configuration file; must_exist when its path was given explicitly. */
int exporter_config_load_file(ExporterConfig *c, const char *path, bool must_exist);

/* Whether spec (a target spec, target-spec.h) is one of AllowTargets= (true when it is empty); PIDs compare by
 * number, names exactly. */
bool exporter_config_allows(const ExporterConfig *c, const char *spec);
