/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

/* Listen=: "ADDRESS:PORT" with an IPv4 address, or "[ADDRESS]:PORT" with an IPv6 one; numbers only, no names to
 * resolve. Port 0 asks the kernel for a free one (the tests' ephemeral port). */
typedef struct ExporterAddress {
        struct sockaddr_storage sa;
        socklen_t len;
} ExporterAddress;

/* -EINVAL for anything else. */
int exporter_address_parse(const char *s, ExporterAddress *ret);

/* The listening socket, bound and listening, SOCK_CLOEXEC and non-blocking; a negative errno. */
int exporter_address_listen(const ExporterAddress *a, int backlog);

/* "127.0.0.1:6068" or "[::1]:6068" of a bound socket, for the startup log line. */
int exporter_socket_name(int fd, char *buf, size_t size);
