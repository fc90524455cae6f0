/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Checksum offload between two ports' RAW_PACKET QPs: IPv4/UDP and
 * IPv4/TCP frames sent with zeroed checksums and IBV_SEND_IP_CSUM arrive
 * with the checksums the test's model computes, byte for byte; received
 * frames carry IBV_WC_IP_CSUM_OK when their IPv4 and L4 checksums are
 * right, and not when either is broken. Arguments: DEVICE_A DEVICE_B.
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"
#include "tests/e2e/raw/raw_frame.h"
#include "tests/e2e/raw/raw_port.h"

static struct raw_port a, b;
static struct ibv_flow *to_b;

/* A frame from a to b of proto with payload bytes, checksums right. */
static size_t frame_a_to_b(uint8_t *f, uint8_t proto, size_t payload, unsigned int seed)
{
	struct frame_desc d = { .saddr = a.addr, .daddr = b.addr, .proto = proto, .sport = 40000 + seed,
				.dport = 7000, .ip_id = (uint16_t)seed, .seq = 1000 * seed,
				.tcp_flags = TH_ACK | TH_PUSH, .payload = payload, .seed = seed };

	memcpy(d.dst, b.mac, ETH_ALEN);
	memcpy(d.src, a.mac, ETH_ALEN);
	return frame_build(f, &d);
}

static const char *proto_name(uint8_t proto)
{
	return proto == IPPROTO_TCP ? "TCP" : "UDP";
}

/*
 * Frame sent from a (send_flags) arrives at b as want, CSUM_OK as csum_ok
 * says; one shorter than Ethernet's minimum padded with zeros to it, as a
 * NIC sends it.
 */
static void send_expect(const uint8_t *sent, const uint8_t *want, size_t len, unsigned int send_flags,
			bool csum_ok, const char *what)
{
	static uint8_t got[RAW_SLOT], padded[RAW_SLOT];
	size_t wire = len < ETH_ZLEN ? ETH_ZLEN : len, i = 0;
	struct ibv_wc wc;
	int status = raw_send(&a, sent, len, send_flags);

	check(status == IBV_WC_SUCCESS, "%s: send completes (status %d)", what, status);
	if (raw_recv(&b, &wc, NULL, got, RAW_WAIT_MS) != 1) {
		check(false, "%s: no frame arrived", what);
		return;
	}
	check(wc.status == IBV_WC_SUCCESS && wc.byte_len == wire, "%s: arrives whole (status %d, %u of %zu bytes)",
	      what, wc.status, wc.byte_len, wire);
	memset(padded, 0, wire);
	memcpy(padded, want, len);
	if (wc.byte_len == wire) {
		while (i < wire && got[i] == padded[i])
			i++;
		check(i == wire, "%s: the frame is the model's byte for byte", what);
		if (i < wire)
			printf("  byte %zu: 0x%02x, model 0x%02x\n", i, got[i], padded[i]);
	}
	check(!!(wc.wc_flags & IBV_WC_IP_CSUM_OK) == csum_ok, "%s: IBV_WC_IP_CSUM_OK %s", what,
	      csum_ok ? "set" : "not set");
}

static void checksums(uint8_t proto)
{
	static uint8_t model[RAW_SLOT], sent[RAW_SLOT];
	const size_t sizes[] = { 0, 1, 17, 1000, 1400 };
	char what[128];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = frame_a_to_b(model, proto, sizes[i], (unsigned int)i + 1);
		uint16_t *l4_check;

		memcpy(sent, model, len);
		frame_ip(sent, len)->check = 0;
		l4_check = proto == IPPROTO_TCP ? &((frame_tcphdr *)frame_l4(sent, len))->check
						: &((frame_udphdr *)frame_l4(sent, len))->check;
		*l4_check = 0;
		snprintf(what, sizeof(what), "%s, %zu payload bytes, zeroed checksums, IBV_SEND_IP_CSUM",
			 proto_name(proto), sizes[i]);
		send_expect(sent, model, len, IBV_SEND_IP_CSUM, true, what);

		snprintf(what, sizeof(what), "%s, %zu payload bytes, right checksums", proto_name(proto), sizes[i]);
		send_expect(model, model, len, 0, true, what);

		memcpy(sent, model, len);
		frame_ip(sent, len)->check ^= htons(0x0101);
		snprintf(what, sizeof(what), "%s, %zu payload bytes, broken IPv4 checksum", proto_name(proto),
			 sizes[i]);
		send_expect(sent, sent, len, 0, false, what);

		memcpy(sent, model, len);
		/* Never to 0, which in UDP means "no checksum". */
		*l4_check ^= *l4_check == htons(0x8001) ? htons(0x4002) : htons(0x8001);
		snprintf(what, sizeof(what), "%s, %zu payload bytes, broken %s checksum", proto_name(proto), sizes[i],
			 proto_name(proto));
		send_expect(sent, sent, len, 0, false, what);
	}
}

static bool open_ports(void)
{
	struct ibv_device_attr_ex attr;
	int err = ibv_query_device_ex(dev_a.ctx, NULL, &attr);

	check(!err && (attr.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM),
	      "ibv_query_device_ex: raw_packet_caps has IBV_RAW_PACKET_CAP_IP_CSUM");
	if (!raw_port_open(&a, &dev_a, 0) || !raw_port_open(&b, &dev_b, 0))
		return false;
	to_b = raw_flow_to_mac(b.qp, b.mac);
	check(to_b != NULL, "a flow to %s's MAC on its QP", dev_b.name);
	return to_b != NULL;
}

static void run(void)
{
	if (open_ports()) {
		checksums(IPPROTO_UDP);
		checksums(IPPROTO_TCP);
	}
	if (to_b)
		check(ibv_destroy_flow(to_b) == 0, "ibv_destroy_flow");
	raw_port_close(&b);
	raw_port_close(&a);
	bufs_free();
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = { { "checksum offload and CSUM_OK", run } };

	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
