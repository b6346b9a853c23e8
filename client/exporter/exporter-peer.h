/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Who is at the other end of a connection, found once when it starts: the user whose rights a request without
 * a bearer token reads with (docs/EXPORT.md). A unix socket tells its peer's user (SO_PEERCRED); a TCP
 * connection from a loopback address is a socket of this machine, whose owner the kernel tells through
 * NETLINK_SOCK_DIAG (the client's socket, looked up by its exact address and port pair). Anything else, or a
 * lookup that fails, is nobody: such a client reads nothing without a token. */
typedef struct ExporterPeer {
        bool local; /* a unix socket, or TCP from a loopback address */
        bool known; /* uid is the peer's user */
        uid_t uid;
        char address[64]; /* "unix", "127.0.0.1:40000", "[2001:db8::1]:40000": for the log */
} ExporterPeer;

/* Whether sa is 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. */
bool exporter_address_is_loopback(const struct sockaddr *sa);

/* The owner of the TCP socket whose local end is src and remote end dst (the client's socket as the client sees
 * it), both AF_INET or both AF_INET6; 0 with *ret set, -ENOENT when the kernel has no such socket, another
 * negative errno when it could not be asked. */
int exporter_socket_owner(const struct sockaddr *src, const struct sockaddr *dst, uid_t *ret);

/* The peer of the connected socket fd. Always fills *ret (with known false when it cannot tell); returns 0 or
 * the negative errno of the lookup that failed, for the debug log. */
int exporter_peer_identify(int fd, ExporterPeer *ret);
