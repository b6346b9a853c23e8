/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include <microhttpd.h>

#include "exporter-access.h"
#include "exporter-config.h"
#include "exporter-response.h"

/* The most listening sockets: systemd's ListenStream= lines (the packaged socket has a unix socket and a TCP
 * one). */
#define EXPORTER_LISTEN_MAX 8

typedef struct ConnectionTrack ConnectionTrack;

/* The server: its configuration, the libmicrohttpd daemon and its worker threads, the connections in flight
 * (for the request deadline) and the counters of /metrics. */
typedef struct Exporter {
        const ExporterConfig *config;
        struct MHD_Daemon *mhd[EXPORTER_LISTEN_MAX]; /* one a listening socket, each with Threads= workers */
        size_t n_mhd;
        ExporterCounters counters;
        const char *token; /* the bearer token, or NULL: no client but a local one reads */
        size_t token_len;
        uid_t uid; /* ours: a local client of this user reads with our rights, as it could run us itself */

        /* The connections whose request is not all in yet, each with its deadline, and the thread that cuts
         * them at RequestTimeoutSec=: libmicrohttpd's own timeout only cuts a connection idle that long, never
         * one that sends a byte a second. */
        pthread_mutex_t lock;
        pthread_cond_t wake;
        ConnectionTrack *tracks;
        pthread_t reaper;
        bool reaper_started;
        bool stopping;
        ExporterLogLimit auth_log; /* under lock */
} Exporter;

/* Starts serving on the n listening sockets fds, which libmicrohttpd then owns and closes when it stops (all of
 * them, also on failure). token: the bearer token (NULL: none), kept by the caller until
 * exporter_http_stop(). */
int exporter_http_start(Exporter *e, const ExporterConfig *config, const int *fds, size_t n, const char *token);
void exporter_http_stop(Exporter *e);

/* The endpoints (exporter-endpoints.h names the files); each answers the request, GET or HEAD, whose query
 * string was checked already. */
typedef enum MHD_Result (*ExporterHandler)(Exporter *e, struct MHD_Connection *c);
