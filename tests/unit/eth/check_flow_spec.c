/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Steering rules' specs (emulator/eth/flow_spec.c, flow_match.c): each
 * spec type matching what it names and missing what it does not, and
 * what uverbs and mlx5 refuse, with their errnos.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emulator/eth/eth.h"
#include "emulator/eth/flow.h"
#include "emulator/obj/qp.h"
#include "tests/unit/eth/eth_fx.h"
#include "tests/unit/net/eth_build.h"

static uint32_t qp;

static void setup(void)
{
	efx_setup();
	qp = efx_qp(1);
}

static struct rocemu_device *dev(unsigned int i)
{
	return &efx.emu.devices[i];
}

static int create(const struct rocemu_create_flow_req *req)
{
	uint32_t handle;

	return rocemu_flow_create(efx.client[1], req, &handle);
}

/* A rule of spec alone, to qp. */
static void rule_of(const void *spec, uint16_t size)
{
	struct rocemu_create_flow_req req;

	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, spec, size);
	efx_flow(1, &req);
}

static unsigned int udp_frame_gets(uint16_t dport)
{
	uint8_t frame[EFX_FRAME_MAX];

	rocemu_eth_tx(dev(0), frame, efx_udp_frame(frame, efx_mac(1), 0, 1000, dport));
	return efx_rx_of(qp);
}

START_TEST(eth_spec_matches_dmac_and_ethertype)
{
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };

	memcpy(eth.val.dst_mac, efx_mac(1), 6);
	memset(eth.mask.dst_mac, 0xff, 6);
	eth.val.ether_type = htons(0x0800);
	eth.mask.ether_type = 0xffff;
	rule_of(&eth, sizeof(eth));
	ck_assert_uint_eq(udp_frame_gets(7), 1);
	/* A frame of another EtherType is not taken. */
	{
		uint8_t frame[EFX_FRAME_MAX];
		uint32_t len = efx_udp_frame(frame, efx_mac(1), 0, 1, 2);

		frame[12] = 0x86;
		frame[13] = 0xdd;
		rocemu_eth_tx(dev(0), frame, len);
		ck_assert_uint_eq(efx_rx_of(qp), 0);
		ck_assert_uint_eq(dev(1)->rx_eth_dropped, 1);
	}
}
END_TEST

START_TEST(eth_spec_vlan_matches_tagged_frames_only)
{
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	uint8_t frame[EFX_FRAME_MAX];
	size_t n;

	eth.val.vlan_tag = htons(5);
	eth.mask.vlan_tag = htons(0x0fff);
	rule_of(&eth, sizeof(eth));
	ck_assert_uint_eq(udp_frame_gets(7), 0);
	memset(frame, 0, sizeof(frame));
	n = build_eth(frame, 5, 0x0800);
	memcpy(frame, efx_mac(1), 6);
	n += build_ipv4(frame + n, 5, IPPROTO_UDP, 28, 1, 0, "192.0.2.1", "192.0.2.2");
	n += build_udp(frame + n, 1, 2, 8);
	rocemu_eth_tx(dev(0), frame, (uint32_t)n);
	ck_assert_uint_eq(efx_rx_of(qp), 1);
}
END_TEST

START_TEST(ipv4_spec_matches_addresses)
{
	struct ibv_flow_spec_ipv4 ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip) };

	ip.val.dst_ip = inet_addr("198.51.100.9");
	ip.mask.dst_ip = 0xffffffff;
	rule_of(&ip, sizeof(ip));
	ck_assert_uint_eq(udp_frame_gets(7), 1);
}
END_TEST

START_TEST(ipv4_spec_misses_other_addresses)
{
	struct ibv_flow_spec_ipv4 ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip) };

	ip.val.src_ip = inet_addr("203.0.113.1");
	ip.mask.src_ip = 0xffffffff;
	rule_of(&ip, sizeof(ip));
	ck_assert_uint_eq(udp_frame_gets(7), 0);
}
END_TEST

START_TEST(ipv4_ext_spec_matches_protocol_and_tos)
{
	struct ibv_flow_spec_ipv4_ext ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(ip) };

	ip.val.proto = IPPROTO_UDP;
	ip.mask.proto = 0xff;
	ip.val.tos = 0;
	ip.mask.tos = 0xff;
	rule_of(&ip, sizeof(ip));
	ck_assert_uint_eq(udp_frame_gets(7), 1);
	ip.val.proto = IPPROTO_TCP;
	rule_of(&ip, sizeof(ip));
	ck_assert_uint_eq(udp_frame_gets(7), 1);	/* the first rule's only */
}
END_TEST

START_TEST(ipv6_spec_matches_ipv6_frames)
{
	struct ibv_flow_spec_ipv6 ip = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(ip) };
	uint8_t frame[EFX_FRAME_MAX];
	size_t n;

	inet_pton(AF_INET6, "2001:db8::2", ip.val.dst_ip);
	memset(ip.mask.dst_ip, 0xff, 16);
	ip.val.flow_label = htonl(0x12345);
	ip.mask.flow_label = htonl(0xfffff);
	rule_of(&ip, sizeof(ip));
	memset(frame, 0, sizeof(frame));
	n = build_eth(frame, BUILD_NO_VLAN, 0x86dd);
	memcpy(frame, efx_mac(1), 6);
	n += build_ipv6(frame + n, IPPROTO_UDP, 8, 0, 0x12345, "2001:db8::1", "2001:db8::2");
	n += build_udp(frame + n, 1, 2, 8);
	rocemu_eth_tx(dev(0), frame, (uint32_t)n);
	ck_assert_uint_eq(efx_rx_of(qp), 1);
	/* IPv4 is not IPv6; another flow label is not this one. */
	ck_assert_uint_eq(udp_frame_gets(7), 0);
	frame[ROCEMU_ETH_HLEN + 3] ^= 1;
	rocemu_eth_tx(dev(0), frame, (uint32_t)n);
	ck_assert_uint_eq(efx_rx_of(qp), 0);
}
END_TEST

START_TEST(udp_spec_matches_ports_and_protocol)
{
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(udp) };

	udp.val.dst_port = htons(4000);
	udp.mask.dst_port = 0xffff;
	rule_of(&udp, sizeof(udp));
	ck_assert_uint_eq(udp_frame_gets(4000), 1);
	ck_assert_uint_eq(udp_frame_gets(4001), 0);
}
END_TEST

START_TEST(tcp_spec_misses_udp)
{
	struct ibv_flow_spec_tcp_udp tcp = { .type = IBV_FLOW_SPEC_TCP, .size = sizeof(tcp) };
	uint8_t frame[EFX_FRAME_MAX];
	size_t n;

	tcp.val.dst_port = htons(4000);
	tcp.mask.dst_port = 0xffff;
	rule_of(&tcp, sizeof(tcp));
	ck_assert_uint_eq(udp_frame_gets(4000), 0);
	memset(frame, 0, sizeof(frame));
	n = build_eth(frame, BUILD_NO_VLAN, 0x0800);
	memcpy(frame, efx_mac(1), 6);
	n += build_ipv4(frame + n, 5, IPPROTO_TCP, 40, 1, 0, "192.0.2.1", "192.0.2.2");
	n += build_tcp(frame + n, 1, 4000, 1, 0x02, 5);
	rocemu_eth_tx(dev(0), frame, (uint32_t)n);
	ck_assert_uint_eq(efx_rx_of(qp), 1);
}
END_TEST

/* A VXLAN frame of vni whose inner frame is UDP to inner_dport. */
static uint32_t vxlan_frame(uint8_t *frame, uint32_t vni, uint16_t inner_dport)
{
	size_t n;

	memset(frame, 0, EFX_FRAME_MAX);
	n = build_eth(frame, BUILD_NO_VLAN, 0x0800);
	memcpy(frame, efx_mac(1), 6);
	n += build_ipv4(frame + n, 5, IPPROTO_UDP, 20 + 8 + 8 + 14 + 20 + 8, 1, 0, "192.0.2.1",
			"192.0.2.2");
	n += build_udp(frame + n, 5000, 4789, 8 + 8 + 14 + 20 + 8);
	frame[n] = 0x08;	/* I flag */
	frame[n + 4] = (uint8_t)(vni >> 16);
	frame[n + 5] = (uint8_t)(vni >> 8);
	frame[n + 6] = (uint8_t)vni;
	n += 8;
	n += build_eth(frame + n, BUILD_NO_VLAN, 0x0800);
	n += build_ipv4(frame + n, 5, IPPROTO_UDP, 28, 2, 0, "10.0.0.1", "10.0.0.2");
	n += build_udp(frame + n, 7, inner_dport, 8);
	return (uint32_t)n;
}

START_TEST(vxlan_and_inner_specs)
{
	struct ibv_flow_spec_tunnel vx = { .type = IBV_FLOW_SPEC_VXLAN_TUNNEL, .size = sizeof(vx) };
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP | IBV_FLOW_SPEC_INNER,
					     .size = sizeof(udp) };
	struct rocemu_create_flow_req req;
	uint8_t frame[EFX_FRAME_MAX];

	vx.val.tunnel_id = htonl(42);
	vx.mask.tunnel_id = htonl(0xffffff);
	udp.val.dst_port = htons(9000);
	udp.mask.dst_port = 0xffff;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &vx, sizeof(vx));
	efx_spec(&req, &udp, sizeof(udp));
	efx_flow(1, &req);
	rocemu_eth_tx(dev(0), frame, vxlan_frame(frame, 42, 9000));
	ck_assert_uint_eq(efx_rx_of(qp), 1);
	rocemu_eth_tx(dev(0), frame, vxlan_frame(frame, 43, 9000));
	ck_assert_uint_eq(efx_rx_of(qp), 0);
	rocemu_eth_tx(dev(0), frame, vxlan_frame(frame, 42, 9001));
	ck_assert_uint_eq(efx_rx_of(qp), 0);
	/* The outer UDP port is not the inner one. */
	ck_assert_uint_eq(udp_frame_gets(9000), 0);
}
END_TEST

START_TEST(inner_spec_needs_a_tunnel)
{
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP | IBV_FLOW_SPEC_INNER,
					     .size = sizeof(udp) };

	udp.val.dst_port = htons(4000);
	udp.mask.dst_port = 0xffff;
	rule_of(&udp, sizeof(udp));
	ck_assert_uint_eq(udp_frame_gets(4000), 0);
}
END_TEST

START_TEST(tag_and_drop)
{
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(udp) };
	struct ibv_flow_spec_action_tag tag = { .type = IBV_FLOW_SPEC_ACTION_TAG,
						.size = sizeof(tag), .tag_id = 0xabcdef };
	struct ibv_flow_spec_action_drop drop = { .type = IBV_FLOW_SPEC_ACTION_DROP,
						  .size = sizeof(drop) };
	struct rocemu_create_flow_req req;

	udp.val.dst_port = htons(4000);
	udp.mask.dst_port = 0xffff;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 1);
	efx_spec(&req, &udp, sizeof(udp));
	efx_spec(&req, &tag, sizeof(tag));
	efx_flow(1, &req);
	{
		uint8_t frame[EFX_FRAME_MAX];

		rocemu_eth_tx(dev(0), frame, efx_udp_frame(frame, efx_mac(1), 0, 1, 4000));
		ck_assert_uint_eq(efx.nrx, 1);
		ck_assert_uint_eq(efx.rx[0].tag, 0xabcdef);
		ck_assert_uint_eq(efx_rx_of(qp), 1);
	}
	/* A drop rule before it (priority 0) takes the frame: nobody gets it, it is counted. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &udp, sizeof(udp));
	efx_spec(&req, &drop, sizeof(drop));
	efx_flow(1, &req);
	ck_assert_uint_eq(udp_frame_gets(4000), 0);
	ck_assert_uint_eq(dev(1)->rx_eth_dropped, 1);
}
END_TEST

/* ---- what is refused ---- */

START_TEST(sizes_and_types_uverbs_refuses)
{
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	struct ibv_flow_spec_tunnel vx = { .type = IBV_FLOW_SPEC_VXLAN_TUNNEL, .size = sizeof(vx) };
	struct ibv_flow_spec_ipv6 ip6 = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(ip6) };
	struct ibv_flow_spec_action_handle h = { .type = IBV_FLOW_SPEC_ACTION_HANDLE,
						 .size = sizeof(h) };
	struct rocemu_create_flow_req req;
	unsigned int i;

	/* A size that is not its type's. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	eth.size = sizeof(eth) - 4;
	efx_spec(&req, &eth, sizeof(eth) - 4);
	ck_assert_int_eq(create(&req), -EINVAL);
	/* A size past the bytes given. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	eth.size = sizeof(eth);
	efx_spec(&req, &eth, sizeof(eth));
	req.specs_len -= 2;
	ck_assert_int_eq(create(&req), -EINVAL);
	/* Bytes left after the specs. */
	req.specs_len += 6;
	ck_assert_int_eq(create(&req), -EINVAL);
	/* More than ROCEMU_FLOW_SPECS_MAX bytes said. */
	req.specs_len = ROCEMU_FLOW_SPECS_MAX + 1;
	ck_assert_int_eq(create(&req), -EINVAL);
	/* An unknown type. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	eth.type = 0x21;
	efx_spec(&req, &eth, sizeof(eth));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* An inner tunnel. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	vx.type = IBV_FLOW_SPEC_VXLAN_TUNNEL | IBV_FLOW_SPEC_INNER;
	efx_spec(&req, &vx, sizeof(vx));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* A VNI past 24 bits. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	vx.type = IBV_FLOW_SPEC_VXLAN_TUNNEL;
	vx.val.tunnel_id = vx.mask.tunnel_id = htonl(1u << 24);
	efx_spec(&req, &vx, sizeof(vx));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* A flow label past 20 bits. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	ip6.val.flow_label = ip6.mask.flow_label = htonl(1u << 20);
	efx_spec(&req, &ip6, sizeof(ip6));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* A flow action handle: none exists. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &h, sizeof(h));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* More specs than IB_FLOW_SPEC_SUPPORT_LAYERS. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	eth.type = IBV_FLOW_SPEC_ETH;
	for (i = 0; i <= ROCEMU_FLOW_SPECS_LAYERS; i++)
		efx_spec(&req, &eth, sizeof(eth));
	ck_assert_int_eq(create(&req), -EINVAL);
	ck_assert(rocemu_list_empty(&dev(1)->flows));
}
END_TEST

START_TEST(masks_mlx5_cannot_match)
{
	struct ibv_flow_spec_ipv4_ext ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(ip) };
	struct ibv_flow_spec_ipv6 ip6 = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(ip6) };
	struct ibv_flow_spec_esp esp = { .type = IBV_FLOW_SPEC_ESP, .size = sizeof(esp) };
	struct ibv_flow_spec_gre gre = { .type = IBV_FLOW_SPEC_GRE, .size = sizeof(gre) };
	struct ibv_flow_spec_mpls mpls = { .type = IBV_FLOW_SPEC_MPLS, .size = sizeof(mpls) };
	struct rocemu_create_flow_req req;

	ip.mask.ttl = 0xff;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &ip, sizeof(ip));
	ck_assert_int_eq(create(&req), -EOPNOTSUPP);
	ip.mask.ttl = 0;
	ip.mask.flags = 0x2;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &ip, sizeof(ip));
	ck_assert_int_eq(create(&req), -EOPNOTSUPP);
	ip6.mask.hop_limit = 0xff;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &ip6, sizeof(ip6));
	ck_assert_int_eq(create(&req), -EOPNOTSUPP);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &esp, sizeof(esp));
	ck_assert_int_eq(create(&req), -EOPNOTSUPP);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &gre, sizeof(gre));
	ck_assert_int_eq(create(&req), -EOPNOTSUPP);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &mpls, sizeof(mpls));
	ck_assert_int_eq(create(&req), -EOPNOTSUPP);
}
END_TEST

START_TEST(clashing_specs_mlx5_refuses)
{
	struct ibv_flow_spec_ipv4_ext ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(ip) };
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(udp) };
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	struct ibv_flow_spec_action_tag tag = { .type = IBV_FLOW_SPEC_ACTION_TAG,
						.size = sizeof(tag), .tag_id = 1u << 24 };
	struct rocemu_create_flow_req req;

	/* IPv4 says TCP, the next spec UDP. */
	ip.val.proto = IPPROTO_TCP;
	ip.mask.proto = 0xff;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &ip, sizeof(ip));
	efx_spec(&req, &udp, sizeof(udp));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* An EtherType that is not the IP spec's, or not whole. */
	eth.val.ether_type = htons(0x86dd);
	eth.mask.ether_type = 0xffff;
	ip.mask.proto = 0;
	ip.val.proto = 0;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &eth, sizeof(eth));
	efx_spec(&req, &ip, sizeof(ip));
	ck_assert_int_eq(create(&req), -EINVAL);
	eth.val.ether_type = htons(0x0800);
	eth.mask.ether_type = htons(0xff00);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &eth, sizeof(eth));
	efx_spec(&req, &ip, sizeof(ip));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* A value bit outside its mask. */
	memset(&eth.mask, 0, sizeof(eth.mask));
	eth.val.ether_type = htons(0x0800);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &eth, sizeof(eth));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* A flow tag past 24 bits. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &tag, sizeof(tag));
	ck_assert_int_eq(create(&req), -EINVAL);
	/* An ETH spec with the right EtherType beside IPv4 is fine. */
	eth.mask.ether_type = 0xffff;
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	efx_spec(&req, &eth, sizeof(eth));
	efx_spec(&req, &ip, sizeof(ip));
	ck_assert_int_eq(create(&req), 0);
}
END_TEST

START_TEST(attributes_refused)
{
	struct rocemu_create_flow_req req;
	uint32_t rc_qp, handle;

	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, ROCEMU_FLOW_LAST_PRIO + 1);
	ck_assert_int_eq(create(&req), -ENOMEM);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, ROCEMU_FLOW_LAST_PRIO);
	ck_assert_int_eq(create(&req), 0);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	req.flags = 1;
	ck_assert_int_eq(create(&req), -EINVAL);
	req.flags = 1u << 3;
	ck_assert_int_eq(create(&req), -EINVAL);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	req.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	ck_assert_int_eq(create(&req), -EINVAL);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	req.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	ck_assert_int_eq(create(&req), -EINVAL);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_SNIFFER + 1, 0);
	ck_assert_int_eq(create(&req), -EINVAL);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	req.port = 2;
	ck_assert_int_eq(create(&req), -EINVAL);
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	req.reserved = 1;
	ck_assert_int_eq(create(&req), -EINVAL);
	/* No such QP, another context's QP, a QP that is not RAW_PACKET. */
	efx_flow_req(&req, 0xfffff, IBV_FLOW_ATTR_NORMAL, 0);
	ck_assert_int_eq(create(&req), -EINVAL);
	efx_flow_req(&req, efx_qp(0), IBV_FLOW_ATTR_NORMAL, 0);
	ck_assert_int_eq(create(&req), -EINVAL);
	{
		struct rocemu_create_qp_req qreq = {
			.pdn = efx.pdn[1], .qp_type = IBV_QPT_RC, .send_cqn = efx.cqn[1],
			.recv_cqn = efx.cqn[1], .srqn = ROCEMU_NO_HANDLE,
			.rwq_ind_tbl = ROCEMU_NO_HANDLE,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct rocemu_create_qp_resp resp;
		int fd;

		ck_assert_int_eq(rocemu_qp_create(efx.client[1], &qreq, &resp, &fd), 0);
		close(fd);
		rc_qp = resp.layout.qpn;
		efx_flow_req(&req, rc_qp, IBV_FLOW_ATTR_NORMAL, 0);
		ck_assert_int_eq(create(&req), -EINVAL);
		qreq.qp_type = IBV_QPT_UD;
		ck_assert_int_eq(rocemu_qp_create(efx.client[1], &qreq, &resp, &fd), 0);
		close(fd);
		efx_flow_req(&req, resp.layout.qpn, IBV_FLOW_ATTR_NORMAL, 0);
		ck_assert_int_eq(create(&req), -EOPNOTSUPP);
	}
	/* An egress rule is held, and acts on nothing received. */
	efx_flow_req(&req, qp, IBV_FLOW_ATTR_NORMAL, 0);
	req.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	ck_assert_int_eq(rocemu_flow_create(efx.client[1], &req, &handle), 0);
	ck_assert_uint_eq(udp_frame_gets(7), 1);	/* the priority 15 rule's */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("flow_spec");
	TCase *match = tcase_create("match"), *refuse = tcase_create("refuse");

	tcase_add_checked_fixture(match, setup, efx_teardown);
	tcase_add_test(match, eth_spec_matches_dmac_and_ethertype);
	tcase_add_test(match, eth_spec_vlan_matches_tagged_frames_only);
	tcase_add_test(match, ipv4_spec_matches_addresses);
	tcase_add_test(match, ipv4_spec_misses_other_addresses);
	tcase_add_test(match, ipv4_ext_spec_matches_protocol_and_tos);
	tcase_add_test(match, ipv6_spec_matches_ipv6_frames);
	tcase_add_test(match, udp_spec_matches_ports_and_protocol);
	tcase_add_test(match, tcp_spec_misses_udp);
	tcase_add_test(match, vxlan_and_inner_specs);
	tcase_add_test(match, inner_spec_needs_a_tunnel);
	tcase_add_test(match, tag_and_drop);
	suite_add_tcase(s, match);
	tcase_add_checked_fixture(refuse, setup, efx_teardown);
	tcase_add_test(refuse, sizes_and_types_uverbs_refuses);
	tcase_add_test(refuse, masks_mlx5_cannot_match);
	tcase_add_test(refuse, clashing_specs_mlx5_refuses);
	tcase_add_test(refuse, attributes_refused);
	suite_add_tcase(s, refuse);
	return efx_suite_run(s);
}
