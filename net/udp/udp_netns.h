/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A network namespace of the daemon's own for its UDP sockets, when no
 * device needs another host: nothing is bound on the host, so no other
 * process or user can send to a device or from its ports. A child
 * process made at start lives in the namespace (a user namespace of its
 * own too, without root) with its loopback up, and hands the daemon a new
 * socket of it on each request; a socket stays in the namespace it was
 * made in, so the daemon binds and uses it as any other.
 */
#ifndef ROCEMU_NET_UDP_NETNS_H
#define ROCEMU_NET_UDP_NETNS_H

#include <stdbool.h>
#include <stddef.h>

/* Make the namespace and its child: 0, or -errno with why set (namespaces refused, say). */
int rocemu_udp_netns_start(char *why, size_t len);
/* End the child; sockets already made stay where they are. */
void rocemu_udp_netns_stop(void);
/* Whether new UDP sockets come from the namespace. */
bool rocemu_udp_netns_active(void);
/* A new UDP socket (close-on-exec): the namespace's when active, else the daemon's own. -errno on failure. */
int rocemu_udp_socket(void);

#endif /* ROCEMU_NET_UDP_NETNS_H */
