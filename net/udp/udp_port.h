/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device's RoCEv2 UDP sockets: bound to its address (or a group it joined), port 4791. */
#ifndef ROCEMU_NET_UDP_PORT_H
#define ROCEMU_NET_UDP_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/roce/ipv4.h"

#define ROCEMU_ROCEV2_PORT 4791

/*
 * Open an unconnected UDP socket bound to ipv4_be:port with
 * IP_PMTUDISC_DO (so the kernel writes DF and the IDs of
 * rocemu_ipv4_send_id, which the ICRC covers), large buffers, UDP_GRO
 * where the kernel has it, and each datagram's TTL, TOS and arrival time
 * in control messages (the loop reads them). On failure
 * returns -errno and writes a one-line explanation to err (if given);
 * when the address is taken it names the process holding it where /proc
 * tells (a walk of /proc, so only when err is given).
 */
int rocemu_udp_port_open(uint32_t ipv4_be, uint16_t port, char *err, size_t errlen);

/*
 * Open the receiving sockets of a device at ipv4_be:4791, as
 * rocemu_udp_port_open() opens one, after making sure no other socket
 * holds the address. A UDP socket does not show a datagram's UDP checksum
 * field, which real RoCE NICs and rxe leave 0 and the daemon's sends fill
 * (UDP GSO needs one): fds[0] receives the datagrams with a checksum,
 * fds[1] those without (two sockets of one SO_REUSEPORT group, steered by
 * a BPF program), so a capture shows the field as it was. Where the kernel
 * cannot steer, fds[1] is -1 and fds[0] gets everything. Returns 0, or
 * -errno with a one-line explanation in err.
 */
int rocemu_udp_port_open_rx(uint32_t ipv4_be, int fds[2], char *err, size_t errlen);

/* The TTL the kernel writes in fd's unicast (or multicast) datagrams. */
uint8_t rocemu_udp_port_ttl(int fd, bool multicast);

/*
 * Open a socket receiving the IPv4 multicast group group_be on port 4791,
 * joined on the interface of ifaddr_be; SO_REUSEADDR lets every device of
 * the host join the same group. Returns the fd or -errno.
 */
int rocemu_udp_group_open(uint32_t group_be, uint32_t ifaddr_be);

#endif /* ROCEMU_NET_UDP_PORT_H */
