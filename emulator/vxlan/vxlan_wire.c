/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/vxlan/vxlan_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "emulator/eth/eth.h"
#include "emulator/vxlan/vxlan_fdb.h"
#include "net/eth/eth_frame.h"
#include "net/udp/udp_port.h"
#include "net/vxlan/vxlan_hdr.h"
#include "rocemu/log.h"

static void wire_rx(void *arg, int fd, const struct rocemu_dgram *d)
{
	(void)fd;
	rocemu_vxlan_rx(arg, d->data, d->len, d->src.sin_addr.s_addr);
}

int rocemu_vxlan_open(struct rocemu_device *dev, char *err, size_t errlen)
{
	struct rocemu_vxlan_port *v = &dev->vxlan;
	struct rocemu_loop *loop = dev->emu->loop;
	char why[256] = "";
	int fd, ret;

	if (!v->on)
		return 0;
	fd = rocemu_udp_port_open(dev->ipv4, ROCEMU_VXLAN_PORT, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, errlen, "%s: VXLAN: %s", dev->name, why);
		return fd;
	}
	ret = rocemu_loop_add_udp(loop, fd, wire_rx, dev);
	if (ret) {
		snprintf(err, errlen, "%s: cannot receive on its VXLAN port: %s", dev->name,
			 strerror(-ret));
		close(fd);
		return ret;
	}
	v->fd = fd;
	/* A source port that cannot be had leaves its flows on 4789's socket. */
	for (unsigned int i = 0; i < ROCEMU_VXLAN_SPORTS; i++) {
		fd = rocemu_udp_port_open(dev->ipv4, (uint16_t)(ROCEMU_VXLAN_SPORT_MIN + i), NULL, 0);
		if (fd >= 0 && rocemu_loop_add_source(loop, fd))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s vxlan: source port %u goes through the kernel",
				   dev->name, ROCEMU_VXLAN_SPORT_MIN + i);
		v->sport_fds[i] = fd < 0 ? -1 : fd;
	}
	rocemu_log(ROCEMU_LOG_INFO, "%s vxlan vni %u on port %u, %u remotes", dev->name, v->vni,
		   ROCEMU_VXLAN_PORT, v->num_remotes);
	return 0;
}

void rocemu_vxlan_close(struct rocemu_device *dev)
{
	struct rocemu_vxlan_port *v = &dev->vxlan;
	struct rocemu_loop *loop = dev->emu->loop;

	for (unsigned int i = 0; i < ROCEMU_VXLAN_SPORTS; i++) {
		if (v->sport_fds[i] < 0)
			continue;
		rocemu_loop_remove_source(loop, v->sport_fds[i]);
		close(v->sport_fds[i]);
		v->sport_fds[i] = -1;
	}
	if (v->fd < 0)
		return;
	rocemu_loop_remove_udp(loop, v->fd);
	close(v->fd);
	v->fd = -1;
}

static void send_to(struct rocemu_device *dev, int fd, uint32_t remote, const struct iovec *iov)
{
	struct rocemu_vxlan_port *v = &dev->vxlan;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(ROCEMU_VXLAN_PORT),
				   .sin_addr.s_addr = remote };

	if (rocemu_loop_send(dev->emu->loop, fd, &dst, iov, 2, 0))
		v->counters.tx_dropped++;
	else
		v->counters.tx_frames++;
}

void rocemu_vxlan_wire_tx(struct rocemu_device *dev, const uint8_t *frame, uint32_t len)
{
	struct rocemu_vxlan_port *v = &dev->vxlan;
	struct rocemu_vxlan_hdr hdr;
	struct iovec iov[2] = { { &hdr, sizeof(hdr) }, { (void *)frame, len } };
	uint32_t remote;
	int fd;

	if (v->fd < 0)
		return;
	if (len < ETH_HLEN || len > ROCEMU_LOOP_MAX_DGRAM - ROCEMU_VXLAN_HLEN) {
		v->counters.tx_dropped++;
		return;
	}
	rocemu_vxlan_hdr_build(&hdr, v->vni);
	fd = v->sport_fds[rocemu_vxlan_sport_index(frame, len, ROCEMU_VXLAN_SPORTS)];
	if (fd < 0)
		fd = v->fd;
	/* A group or unknown destination floods, as a switch does. */
	remote = rocemu_eth_mac_group(frame) ? 0 :
		 rocemu_vxlan_fdb_lookup(v, frame, rocemu_now_ns());
	if (remote) {
		send_to(dev, fd, remote, iov);
		return;
	}
	for (unsigned int i = 0; i < v->num_remotes; i++)
		send_to(dev, fd, v->remotes[i], iov);
}

void rocemu_vxlan_rx(struct rocemu_device *dev, const uint8_t *data, size_t len, uint32_t src)
{
	struct rocemu_vxlan_counters *c = &dev->vxlan.counters;
	const uint8_t *frame = data + ROCEMU_VXLAN_HLEN;
	size_t frame_len = len - ROCEMU_VXLAN_HLEN;
	uint64_t *dropped = &c->rx_malformed;
	const char *why = NULL;
	char ip[INET_ADDRSTRLEN];
	uint32_t vni;

	if (rocemu_vxlan_hdr_parse(data, len, &vni)) {
		why = "short, or no I flag";
	} else if (vni != dev->vxlan.vni) {
		why = "another VNI";
		dropped = &c->rx_other_vni;
	} else if (frame_len < ETH_HLEN ||
		   frame_len > dev->netdev_mtu + ETH_HLEN + ROCEMU_VLAN_HLEN) {
		why = "an inner frame too short or over the MTU";
	} else if (rocemu_eth_mac_group(frame + ETH_ALEN)) {
		why = "a group source MAC";
	} else if (!memcmp(frame + ETH_ALEN, dev->mac, ETH_ALEN)) {
		why = "the device's own source MAC";
		dropped = &c->rx_looped;
	}
	if (why) {
		(*dropped)++;
		if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s vxlan: dropped a datagram from %s: %s",
				   dev->name, inet_ntop(AF_INET, &src, ip, sizeof(ip)), why);
		return;
	}
	rocemu_vxlan_fdb_learn(&dev->vxlan, frame + ETH_ALEN, src, rocemu_now_ns());
	c->rx_frames++;
	rocemu_eth_rx(dev, frame, (uint32_t)frame_len);
}
