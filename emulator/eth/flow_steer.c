/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/eth/flow_steer.h"

#include <string.h>

#include "emulator/core/device.h"
#include "emulator/eth/flow.h"
#include "emulator/obj/qp.h"
#include "net/loop/loop.h"
#include "net/observe/pcap.h"

/* A frame being steered: its fields, and those of its tunnel's frame once a rule asks. */
struct steered {
	const struct rocemu_eth_frame *f;
	struct rocemu_flow_fields fields[ROCEMU_FLOW_LEVELS];
	int inner;			/* 0: not parsed yet, 1: parsed, -1: none */
};

static bool inner_fields(struct steered *s)
{
	struct rocemu_eth_frame in;

	if (!s->inner) {
		s->inner = -1;
		if (s->f->vxlan && s->f->inner_off < s->f->len &&
		    rocemu_eth_parse(&in, s->f->data + s->f->inner_off, s->f->len - s->f->inner_off)) {
			rocemu_flow_fields_of(&in, &s->fields[ROCEMU_FLOW_INNER]);
			s->inner = 1;
		}
	}
	return s->inner > 0;
}

static bool flow_matches(const struct rocemu_flow *r, struct steered *s)
{
	const struct rocemu_flow_match *m = &r->match;

	if (!rocemu_flow_fields_match(&m->val[ROCEMU_FLOW_OUTER], &m->mask[ROCEMU_FLOW_OUTER],
				      &s->fields[ROCEMU_FLOW_OUTER]))
		return false;
	return !m->inner || (inner_fields(s) &&
			     rocemu_flow_fields_match(&m->val[ROCEMU_FLOW_INNER],
						      &m->mask[ROCEMU_FLOW_INNER],
						      &s->fields[ROCEMU_FLOW_INNER]));
}

static void flow_give(const struct rocemu_flow *r, const struct rocemu_eth_frame *f, uint32_t tag)
{
	if (r->qp->ops->rx_frame)
		r->qp->ops->rx_frame(r->qp, f, tag);
}

/*
 * The NORMAL rules, table by table: a table's first matching rule takes the
 * frame and rules of identical specs (one entry of mlx5's, many
 * destinations) get it too; a DONT_TRAP table lets it go on. Returns
 * whether a trapping rule took it; *given says whether a QP got it.
 */
static bool steer_normal(struct rocemu_device *dev, struct steered *s, bool *given)
{
	const struct rocemu_flow *r, *won = NULL;

	rocemu_list_for_each(r, &dev->flows, struct rocemu_flow, dev_node) {
		if (r->type != IBV_FLOW_ATTR_NORMAL)
			break;
		if (won && r->table != won->table) {
			if (!won->dont_trap)
				return true;
			won = NULL;
		}
		if (won ? memcmp(&r->match, &won->match, sizeof(r->match)) : !flow_matches(r, s))
			continue;
		if (!won)
			won = r;
		if (r->match.drop) {
			dev->rx_eth_dropped++;
			return true;
		}
		flow_give(r, s->f, r->match.tag);
		*given = true;
	}
	return won && !won->dont_trap;
}

bool rocemu_flow_steer(struct rocemu_device *dev, const struct rocemu_eth_frame *f)
{
	struct steered s = { .f = f };
	const struct rocemu_flow *r;
	bool group = rocemu_eth_mac_group(f->dmac), given = false;

	rocemu_flow_fields_of(f, &s.fields[ROCEMU_FLOW_OUTER]);
	if (steer_normal(dev, &s, &given))
		return true;
	/* mlx5's leftovers: ALL_DEFAULT takes unicast and group frames, MC_DEFAULT group ones. */
	rocemu_list_for_each(r, &dev->flows, struct rocemu_flow, dev_node) {
		if (r->type == IBV_FLOW_ATTR_ALL_DEFAULT ||
		    (r->type == IBV_FLOW_ATTR_MC_DEFAULT && group)) {
			flow_give(r, f, 0);
			given = true;
		}
	}
	return given;
}

void rocemu_flow_sniff(struct rocemu_device *dev, const struct rocemu_eth_frame *f)
{
	const struct rocemu_flow *r;

	rocemu_list_for_each(r, &dev->flows, struct rocemu_flow, dev_node)
		if (r->type == IBV_FLOW_ATTR_SNIFFER)
			flow_give(r, f, 0);
}

void rocemu_flow_sniff_roce(struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
			    const struct rocemu_ipv4_fields *ip, const uint8_t *buf, size_t len,
			    size_t seg)
{
	static uint8_t frame[ROCEMU_PCAP_FRAME_HDR_BYTES + ROCEMU_LOOP_MAX_DGRAM];
	struct rocemu_ipv4_fields each = *ip;
	struct rocemu_eth_frame f;
	size_t off = 0, n;

	if (!seg || seg > len)
		seg = len;
	do {
		n = len - off < seg ? len - off : seg;
		if (n > ROCEMU_LOOP_MAX_DGRAM)
			return;
		/* RoCE NICs send UDP checksum 0; the capture frames them alike. */
		rocemu_pcap_frame_headers(frame, flow, &each, NULL, n);
		memcpy(frame + ROCEMU_PCAP_FRAME_HDR_BYTES, buf + off, n);
		if (rocemu_eth_parse(&f, frame, (uint32_t)(ROCEMU_PCAP_FRAME_HDR_BYTES + n)))
			rocemu_flow_sniff(dev, &f);
		each.id++;
		off += n;
	} while (off < len);
}
