/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/sport.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

#define FLOW_LABEL_MASK 0xfffffu
#define SPORT_MIN 0xc000u
#define SPORT_LOW_BITS 14

/* A flow label from the QPN pair, folded to 20 bits (the Linux RoCE rule). */
static uint32_t flow_label_of(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)v & FLOW_LABEL_MASK;
}

uint16_t rocemu_sport_of(uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = flow_label_of(lqpn, rqpn);
	uint32_t low = fl & ((1u << SPORT_LOW_BITS) - 1);

	low ^= fl >> SPORT_LOW_BITS;	/* the 6 high bits fold into the low 14 */
	return (uint16_t)(SPORT_MIN | (low & ((1u << SPORT_LOW_BITS) - 1)));
}

static struct rocemu_sport *sport_find(struct rocemu_device *dev, uint16_t port)
{
	for (unsigned int i = 0; i < dev->num_sports; i++)
		if (dev->sports[i].port == port)
			return &dev->sports[i];
	return NULL;
}

bool rocemu_sport_held(struct rocemu_device *dev, uint16_t port)
{
	return dev->wire.send || (port == ROCEMU_ROCEV2_PORT && dev->udp_fd >= 0) ||
	       sport_find(dev, port) != NULL;
}

/* The loop the device sends through; none for a device outside an emulator (unit tests). */
static struct rocemu_loop *loop_of(const struct rocemu_device *dev)
{
	return dev->emu ? dev->emu->loop : NULL;
}

static void sport_close(struct rocemu_device *dev, int fd)
{
	if (loop_of(dev))
		rocemu_loop_remove_source(loop_of(dev), fd);
	close(fd);
}

/* A slot for a new port: a free one, else one no QP uses (its socket closes). */
static struct rocemu_sport *slot_for_new(struct rocemu_device *dev)
{
	if (dev->num_sports < ROCEMU_SPORT_MAX)
		return &dev->sports[dev->num_sports];
	for (unsigned int i = 0; i < dev->num_sports; i++) {
		if (!dev->sports[i].users) {
			sport_close(dev, dev->sports[i].fd);
			dev->sports[i] = dev->sports[--dev->num_sports];
			return &dev->sports[dev->num_sports];
		}
	}
	return NULL;
}

int rocemu_sport_get(struct rocemu_device *dev, uint32_t lqpn, uint32_t rqpn, uint16_t *sport)
{
	return rocemu_sport_get_port(dev, rocemu_sport_of(lqpn, rqpn), lqpn, sport);
}

int rocemu_sport_get_port(struct rocemu_device *dev, uint16_t port, uint32_t lqpn,
			  uint16_t *sport)
{
	struct rocemu_sport *s;
	int fd;

	/* The fake wire of a unit test takes the packets: nothing to send them from. */
	if (dev->wire.send) {
		*sport = port;
		return -1;
	}
	s = sport_find(dev, port);
	if (!s) {
		s = slot_for_new(dev);
		fd = s ? rocemu_udp_port_open(dev->ipv4, port, NULL, 0) : -EMFILE;
		if (fd < 0) {
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x: source port %u unavailable (%s), using %u",
				   dev->name, lqpn, port, strerror(-fd), ROCEMU_ROCEV2_PORT);
			*sport = ROCEMU_ROCEV2_PORT;
			return dev->udp_fd;
		}
		/* Unknown to the loop, it still sends, only through the kernel. */
		if (loop_of(dev) && rocemu_loop_add_source(loop_of(dev), fd))
			rocemu_log(ROCEMU_LOG_DEBUG, "%s: source port %u goes through the kernel",
				   dev->name, port);
		*s = (struct rocemu_sport){ .port = port, .fd = fd };
		dev->num_sports++;
	}
	s->users++;
	*sport = port;
	return s->fd;
}

/* The socket stays open when the last QP goes: what it queued may still be due (delay faults). */
void rocemu_sport_put(struct rocemu_device *dev, uint16_t sport)
{
	struct rocemu_sport *s = sport_find(dev, sport);

	if (s && s->users)
		s->users--;
}

void rocemu_sport_close_all(struct rocemu_device *dev)
{
	while (dev->num_sports)
		sport_close(dev, dev->sports[--dev->num_sports].fd);
}
