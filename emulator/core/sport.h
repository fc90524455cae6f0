/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UDP source ports of a device's flows. A ConnectX sends each QP's
 * packets from a source port in 0xC000-0xFFFF derived from the flow label
 * of its (local, remote) QPN pair, so that ECMP spreads flows and a capture
 * tells them apart; the destination is always 4791. Each port in use is a
 * send-only socket bound to it, shared by the QPs that hash to it and kept
 * for reuse. When the port cannot be had (taken, or too many open), the
 * flow uses 4791.
 */
#ifndef ROCEMU_EMULATOR_SPORT_H
#define ROCEMU_EMULATOR_SPORT_H

#include <stdbool.h>
#include <stdint.h>

struct rocemu_device;

/* Source ports a device keeps open at most; past that, idle ones close or flows use 4791. */
#define ROCEMU_SPORT_MAX 64

struct rocemu_sport {
	uint16_t port;			/* host order */
	uint32_t users;			/* QPs sending from it */
	int fd;
};

/* The port a ConnectX picks for lqpn talking to rqpn (host order, 0xC000-0xFFFF). */
uint16_t rocemu_sport_of(uint32_t lqpn, uint32_t rqpn);

/*
 * Take a reference on dev's socket for the flow lqpn -> rqpn: returns its
 * fd and writes its port (host order) to *sport; 4791's socket when the
 * flow's own port cannot be had. A device on a fake wire (device.h) gets
 * the flow's port and no socket (-1).
 */
int rocemu_sport_get(struct rocemu_device *dev, uint32_t lqpn, uint32_t rqpn, uint16_t *sport);

/* The same for a port chosen elsewhere (UD: the AV's, as mlx5 draws it per AH) for lqpn's packets. */
int rocemu_sport_get_port(struct rocemu_device *dev, uint16_t port, uint32_t lqpn,
			  uint16_t *sport);

/* Drop the reference rocemu_sport_get gave for sport (the socket stays open for reuse). */
void rocemu_sport_put(struct rocemu_device *dev, uint16_t sport);

/*
 * dev holds a socket bound to port (host order): 4791 or a flow's own. No
 * other process can send from that address and port, so a datagram from
 * dev's address and another port is not dev's. A fake wire holds every port.
 */
bool rocemu_sport_held(struct rocemu_device *dev, uint16_t port);

/* Close every source port of dev (device teardown). */
void rocemu_sport_close_all(struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_SPORT_H */
