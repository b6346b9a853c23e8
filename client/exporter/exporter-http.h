/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include <microhttpd.h>

#include "exporter-config.h"
#include "exporter-response.h"

typedef struct ConnectionTrack ConnectionTrack;

/* The server: its configuration, the libmicrohttpd daemon and its worker threads, the connections in flight
 * (for the request deadline) and the counters of /metrics. */
typedef struct Exporter {
        const ExporterConfig *config;
        struct MHD_Daemon *mhd;
        ExporterCounters counters;

        /* The connections whose request is not all in yet, each with its deadline, and the thread that cuts
         * them at RequestTimeoutSec=: libmicrohttpd's own timeout only cuts a connection idle that long, never
         * one that sends a byte a second. */
        pthread_mutex_t lock;
        pthread_cond_t wake;
        ConnectionTrack *tracks;
        pthread_t reaper;
        bool reaper_started;
        bool stopping;
} Exporter;

/* Starts serving on listen_fd, which libmicrohttpd then owns and closes when it stops. */
int exporter_http_start(Exporter *e, const ExporterConfig *config, int listen_fd);
void exporter_http_stop(Exporter *e);

/* The endpoints (exporter-endpoints.h names the files); each answers the request, GET or HEAD, whose query
 * string was checked already. */
typedef enum MHD_Result (*ExporterHandler)(Exporter *e, struct MHD_Connection *c);
