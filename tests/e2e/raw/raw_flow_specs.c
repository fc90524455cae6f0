/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Flow steering through ibv_create_flow: DEVICE_A's RAW_PACKET QP sends,
 * two QPs of DEVICE_B (q1, q2) receive. Each spec type (ETH, IPV4,
 * IPV4_EXT, IPV6, TCP, UDP, VXLAN_TUNNEL, ACTION_TAG, ACTION_DROP),
 * priorities and each attribute type (NORMAL, ALL_DEFAULT, MC_DEFAULT,
 * SNIFFER): a matching frame arrives at the rule's QP (with its flow tag),
 * a frame that does not match does not. "Does not" is told without
 * waiting: the frames that must not arrive go first and a frame that must
 * arrive last; the port handles one sender's frames in order, so a frame
 * of the first kind, had it been steered there, would come first.
 * Malformed rules are refused with the errno libibverbs and the kernel's
 * mlx5 give. Arguments: DEVICE_A DEVICE_B.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/ip6.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"
#include "tests/e2e/raw/raw_frame.h"
#include "tests/e2e/raw/raw_port.h"

#define VXLAN_PORT 4789
#define TAG 0x12345

static struct raw_port a, q1, q2;
static const uint8_t other_mac[ETH_ALEN] = { 0x02, 0x00, 0xde, 0xad, 0xbe, 0xef };
static const uint8_t mcast_mac[ETH_ALEN] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };

/* ---- frames from a to DEVICE_B's MAC ---- */

struct frame {
	uint8_t b[RAW_SLOT];
	size_t len;
};

static struct frame_desc desc_to_b(uint8_t proto, uint16_t dport)
{
	struct frame_desc d = { .saddr = a.addr, .daddr = q1.addr, .proto = proto, .sport = 50000,
				.dport = dport, .ip_id = dport, .tcp_flags = TH_ACK, .payload = 64,
				.seed = dport };

	memcpy(d.dst, q1.mac, ETH_ALEN);
	memcpy(d.src, a.mac, ETH_ALEN);
	return d;
}

static struct frame ipv4(uint8_t proto, uint16_t dport)
{
	struct frame_desc d = desc_to_b(proto, dport);
	struct frame f;

	f.len = frame_build(f.b, &d);
	return f;
}

static struct frame built(const struct frame_desc *d)
{
	struct frame f;

	f.len = frame_build(f.b, d);
	return f;
}

/* A frame of another ethertype (0x88b5, local experimental) to DEVICE_B. */
static struct frame other_ethertype(void)
{
	struct frame f = ipv4(IPPROTO_UDP, 1);

	((struct ethhdr *)f.b)->h_proto = htons(0x88b5);
	return f;
}

/* IPv6/UDP to DEVICE_B from 2001:db8::a to 2001:db8::<last>. */
static struct frame ipv6(uint8_t last, uint16_t dport)
{
	struct frame f;
	struct ethhdr *eth = (struct ethhdr *)f.b;
	frame_ip6_hdr *ip6 = (frame_ip6_hdr *)(f.b + ETH_HLEN);
	frame_udphdr *uh = (frame_udphdr *)(ip6 + 1);
	size_t l4_len = sizeof(*uh) + 32;
	uint32_t sum;

	memcpy(eth->h_dest, q1.mac, ETH_ALEN);
	memcpy(eth->h_source, a.mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IPV6);
	memset(ip6, 0, sizeof(*ip6));
	ip6->ip6_flow = htonl(6u << 28);
	ip6->ip6_plen = htons((uint16_t)l4_len);
	ip6->ip6_nxt = IPPROTO_UDP;
	ip6->ip6_hlim = 64;
	inet_pton(AF_INET6, "2001:db8::a", &ip6->ip6_src);
	inet_pton(AF_INET6, "2001:db8::", &ip6->ip6_dst);
	ip6->ip6_dst.s6_addr[15] = last;
	uh->uh_sport = htons(50000);
	uh->uh_dport = htons(dport);
	uh->uh_ulen = htons((uint16_t)l4_len);
	uh->uh_sum = 0;
	fill_pattern((uint8_t *)(uh + 1), 32, last, 0);
	sum = csum_add(0, &ip6->ip6_src, 32) + (uint32_t)l4_len + IPPROTO_UDP;
	uh->uh_sum = csum_fold(csum_add(sum, uh, l4_len));
	f.len = ETH_HLEN + sizeof(*ip6) + l4_len;
	return f;
}

/* VXLAN (UDP 4789, no checksum) of VNI vni around a small inner Ethernet frame. */
static struct frame vxlan(uint32_t vni)
{
	struct frame_desc d = desc_to_b(IPPROTO_UDP, VXLAN_PORT);
	struct frame f;
	uint8_t *vx;

	d.payload = 8 + ETH_HLEN + 46;
	f = built(&d);
	vx = (uint8_t *)frame_l4(f.b, f.len) + sizeof(frame_udphdr);
	memset(vx, 0, 8);
	vx[0] = 0x08;			/* I: the VNI is valid */
	vx[4] = (uint8_t)(vni >> 16);
	vx[5] = (uint8_t)(vni >> 8);
	vx[6] = (uint8_t)vni;
	memcpy(vx + 8, other_mac, ETH_ALEN);
	memcpy(vx + 8 + ETH_ALEN, a.mac, ETH_ALEN);
	((frame_udphdr *)frame_l4(f.b, f.len))->uh_sum = 0;
	return f;
}

/* ---- rules ---- */

struct rule {
	struct ibv_flow_attr attr;
	uint8_t specs[1024];
};

static void rule_init(struct rule *r, enum ibv_flow_attr_type type, uint16_t priority)
{
	memset(r, 0, sizeof(*r));
	r->attr.type = type;
	r->attr.priority = priority;
	r->attr.port = 1;
	r->attr.size = sizeof(r->attr);
}

static void rule_add(struct rule *r, const void *spec, size_t size)
{
	memcpy((uint8_t *)r + r->attr.size, spec, size);
	r->attr.size += (uint16_t)size;
	r->attr.num_of_specs++;
}

static void rule_eth(struct rule *r, const uint8_t *dst, uint16_t ether_type)
{
	struct ibv_flow_spec_eth s = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(s) };

	memcpy(s.val.dst_mac, dst, ETH_ALEN);
	memset(s.mask.dst_mac, 0xff, ETH_ALEN);
	s.val.ether_type = htons(ether_type);
	s.mask.ether_type = ether_type ? 0xffff : 0;
	rule_add(r, &s, sizeof(s));
}

static void rule_ipv4(struct rule *r, uint32_t src, uint32_t dst)
{
	struct ibv_flow_spec_ipv4 s = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(s),
					.val = { .src_ip = src, .dst_ip = dst },
					.mask = { .src_ip = 0xffffffff, .dst_ip = 0xffffffff } };

	rule_add(r, &s, sizeof(s));
}

/* IPV4_EXT on proto and tos; a ttl (which mlx5 cannot match) when ttl_mask is set. */
static void rule_ipv4_ext(struct rule *r, uint8_t proto, uint8_t tos, uint8_t ttl_mask)
{
	struct ibv_flow_spec_ipv4_ext s = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(s),
					    .val = { .proto = proto, .tos = tos, .ttl = 64 },
					    .mask = { .proto = 0xff, .tos = 0xff, .ttl = ttl_mask } };

	rule_add(r, &s, sizeof(s));
}

static void rule_ipv6(struct rule *r, uint8_t last)
{
	struct ibv_flow_spec_ipv6 s = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(s) };

	inet_pton(AF_INET6, "2001:db8::", s.val.dst_ip);
	s.val.dst_ip[15] = last;
	memset(s.mask.dst_ip, 0xff, sizeof(s.mask.dst_ip));
	s.val.next_hdr = IPPROTO_UDP;
	s.mask.next_hdr = 0xff;
	rule_add(r, &s, sizeof(s));
}

static void rule_l4(struct rule *r, enum ibv_flow_spec_type type, uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp s = { .type = type, .size = sizeof(s),
					   .val = { .dst_port = htons(dport) }, .mask = { .dst_port = 0xffff } };

	rule_add(r, &s, sizeof(s));
}

static void rule_vxlan(struct rule *r, uint32_t vni)
{
	struct ibv_flow_spec_tunnel s = { .type = IBV_FLOW_SPEC_VXLAN_TUNNEL, .size = sizeof(s),
					  .val = { .tunnel_id = htonl(vni) },
					  .mask = { .tunnel_id = htonl(0xffffff) } };

	rule_add(r, &s, sizeof(s));
}

static void rule_tag(struct rule *r, uint32_t tag)
{
	struct ibv_flow_spec_action_tag s = { .type = IBV_FLOW_SPEC_ACTION_TAG, .size = sizeof(s),
					      .tag_id = tag };

	rule_add(r, &s, sizeof(s));
}

static void rule_drop(struct rule *r)
{
	struct ibv_flow_spec_action_drop s = { .type = IBV_FLOW_SPEC_ACTION_DROP, .size = sizeof(s) };

	rule_add(r, &s, sizeof(s));
}

static struct ibv_flow *install(struct raw_port *q, struct rule *r, const char *what)
{
	struct ibv_flow *flow = ibv_create_flow(q->qp, &r->attr);

	check(flow != NULL, "%s: ibv_create_flow%s%s", what, flow ? "" : ": ", flow ? "" : strerror(errno));
	return flow;
}

static void uninstall(struct ibv_flow *flow, const char *what)
{
	if (flow)
		check(ibv_destroy_flow(flow) == 0, "%s: ibv_destroy_flow", what);
}

/* ---- sending and what arrives ---- */

static void send_from(struct raw_port *p, const struct frame *f, const char *what)
{
	int status = raw_send(p, f->b, f->len, 0);

	check(status == IBV_WC_SUCCESS, "%s: sent (status %d)", what, status);
}

/* The next frame q receives is f, with flow tag tag. */
static void expect_frame(struct raw_port *q, const struct frame *f, uint32_t tag, const char *what)
{
	static uint8_t got[RAW_SLOT];
	struct ibv_wc wc;
	uint32_t got_tag = 0;

	if (raw_recv(q, &wc, &got_tag, got, RAW_WAIT_MS) != 1) {
		check(false, "%s: nothing arrived", what);
		return;
	}
	check(wc.status == IBV_WC_SUCCESS && wc.byte_len == f->len && !memcmp(got, f->b, f->len),
	      "%s: arrives, this frame and no other before it (status %d, %u bytes)", what, wc.status,
	      wc.byte_len);
	check(got_tag == tag, "%s: flow tag 0x%x (got 0x%x)", what, tag, got_tag);
}

/* Nothing more is waiting at q. */
static void expect_nothing(struct raw_port *q, const char *what)
{
	static uint8_t got[RAW_SLOT];
	struct ibv_wc wc;

	check(raw_recv(q, &wc, NULL, got, 0) == 0, "%s: nothing more at %s's q%d", what, q->dev->name,
	      q == &q1 ? 1 : 2);
}

/* Frames in miss[] (which no rule of q may take) then hit, which arrives at q alone, tagged tag. */
static void steer(struct raw_port *q, const struct frame *miss, size_t n_miss, const struct frame *hit,
		  uint32_t tag, const char *what)
{
	for (size_t i = 0; i < n_miss; i++)
		send_from(&a, &miss[i], what);
	send_from(&a, hit, what);
	expect_frame(q, hit, tag, what);
	expect_nothing(&q1, what);
	expect_nothing(&q2, what);
}

/* ---- the spec types ---- */

static void spec_eth(void)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame miss[] = { other_ethertype() }, hit = ipv4(IPPROTO_UDP, 1000);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, ETH_P_IP);
	f = install(&q1, &r, "ETH dst_mac and ether_type");
	steer(&q1, miss, 1, &hit, 0, "ETH dst_mac and ether_type");
	uninstall(f, "ETH");
}

static void spec_ipv4(void)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame_desc d = desc_to_b(IPPROTO_UDP, 1001);
	struct frame hit = built(&d), miss[1];

	d.saddr ^= htonl(1);
	miss[0] = built(&d);
	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	f = install(&q1, &r, "IPV4 src and dst");
	steer(&q1, miss, 1, &hit, 0, "IPV4 src and dst");
	uninstall(f, "IPV4");
}

static void spec_ipv4_ext(void)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame miss[] = { ipv4(IPPROTO_TCP, 1002) }, hit = ipv4(IPPROTO_UDP, 1002);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4_ext(&r, IPPROTO_UDP, 0, 0);
	f = install(&q1, &r, "IPV4_EXT proto and tos");
	steer(&q1, miss, 1, &hit, 0, "IPV4_EXT proto and tos");
	uninstall(f, "IPV4_EXT");
}

static void spec_ipv6(void)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame miss[] = { ipv6(0xc, 1003), ipv4(IPPROTO_UDP, 1003) }, hit = ipv6(0xb, 1003);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv6(&r, 0xb);
	f = install(&q1, &r, "IPV6 dst and next header");
	steer(&q1, miss, 2, &hit, 0, "IPV6 dst and next header");
	uninstall(f, "IPV6");
}

static void spec_l4(enum ibv_flow_spec_type type, uint8_t proto, uint8_t other, const char *what)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame miss[] = { ipv4(proto, 2001), ipv4(other, 2000) }, hit = ipv4(proto, 2000);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	rule_l4(&r, type, 2000);
	f = install(&q1, &r, what);
	steer(&q1, miss, 2, &hit, 0, what);
	uninstall(f, what);
}

static void spec_tcp(void)
{
	spec_l4(IBV_FLOW_SPEC_TCP, IPPROTO_TCP, IPPROTO_UDP, "TCP dst_port");
}

static void spec_udp(void)
{
	spec_l4(IBV_FLOW_SPEC_UDP, IPPROTO_UDP, IPPROTO_TCP, "UDP dst_port");
}

static void spec_vxlan(void)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame miss[] = { vxlan(43) }, hit = vxlan(42);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	rule_l4(&r, IBV_FLOW_SPEC_UDP, VXLAN_PORT);
	rule_vxlan(&r, 42);
	f = install(&q1, &r, "VXLAN_TUNNEL VNI 42");
	steer(&q1, miss, 1, &hit, 0, "VXLAN_TUNNEL VNI 42");
	uninstall(f, "VXLAN_TUNNEL");
}

static void spec_tag(void)
{
	struct rule r;
	struct ibv_flow *f;
	struct frame hit = ipv4(IPPROTO_UDP, 3000);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_tag(&r, TAG);
	f = install(&q1, &r, "ACTION_TAG");
	steer(&q1, NULL, 0, &hit, TAG, "ACTION_TAG");
	uninstall(f, "ACTION_TAG");
}

/* DROP at priority 0 wins over a rule to q2 at priority 1; the rest goes to q2. */
static void spec_drop(void)
{
	struct rule r;
	struct ibv_flow *drop, *rest;
	struct frame miss[] = { ipv4(IPPROTO_UDP, 4000) }, hit = ipv4(IPPROTO_UDP, 4001);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	rule_l4(&r, IBV_FLOW_SPEC_UDP, 4000);
	rule_drop(&r);
	drop = install(&q1, &r, "ACTION_DROP of UDP 4000, priority 0");
	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
	rule_eth(&r, q1.mac, 0);
	rest = install(&q2, &r, "ETH to q2, priority 1");
	steer(&q2, miss, 1, &hit, 0, "ACTION_DROP: UDP 4000 dropped, 4001 to q2");
	uninstall(drop, "ACTION_DROP");
	uninstall(rest, "ETH, priority 1");
}

/* The rule of the lower priority number takes the frames both match. */
static void priorities(void)
{
	struct rule r;
	struct ibv_flow *high, *low;
	struct frame first = ipv4(IPPROTO_UDP, 5000), second = ipv4(IPPROTO_UDP, 5001);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 2);
	rule_eth(&r, q1.mac, 0);
	low = install(&q2, &r, "ETH to q2, priority 2");
	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 1);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	rule_l4(&r, IBV_FLOW_SPEC_UDP, 5000);
	high = install(&q1, &r, "UDP 5000 to q1, priority 1");
	steer(&q1, NULL, 0, &first, 0, "priority 1 before 2: UDP 5000 to q1");
	steer(&q2, NULL, 0, &second, 0, "priority 2: UDP 5001 to q2");
	uninstall(high, "priority 1");
	uninstall(low, "priority 2");
}

/* ---- the attribute types ---- */

static struct ibv_flow *install_bare(struct raw_port *q, enum ibv_flow_attr_type type, const char *what)
{
	struct rule r;

	rule_init(&r, type, 0);
	return install(q, &r, what);
}

static void attr_all_default(void)
{
	struct rule r;
	struct ibv_flow *normal, *all;
	struct frame unmatched = ipv4(IPPROTO_UDP, 6001), matched = ipv4(IPPROTO_UDP, 6000);

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	rule_l4(&r, IBV_FLOW_SPEC_UDP, 6000);
	normal = install(&q2, &r, "UDP 6000 to q2");
	all = install_bare(&q1, IBV_FLOW_ATTR_ALL_DEFAULT, "ALL_DEFAULT on q1");
	steer(&q2, NULL, 0, &matched, 0, "ALL_DEFAULT: a frame a NORMAL rule takes is not its");
	steer(&q1, NULL, 0, &unmatched, 0, "ALL_DEFAULT: a frame no rule takes goes to it");
	uninstall(all, "ALL_DEFAULT");
	uninstall(normal, "UDP 6000");
}

static void attr_mc_default(void)
{
	struct ibv_flow *mc;
	struct frame_desc d = desc_to_b(IPPROTO_UDP, 5353);
	struct frame unicast[] = { ipv4(IPPROTO_UDP, 7000) }, multicast;

	memcpy(d.dst, mcast_mac, ETH_ALEN);
	d.daddr = htonl(0xe00000fb);
	multicast = built(&d);
	mc = install_bare(&q1, IBV_FLOW_ATTR_MC_DEFAULT, "MC_DEFAULT on q1");
	steer(&q1, unicast, 1, &multicast, 0, "MC_DEFAULT: multicast in, unicast not");
	uninstall(mc, "MC_DEFAULT");
}

static void attr_sniffer(void)
{
	struct rule r;
	struct ibv_flow *normal, *sniffer;
	struct frame in = ipv4(IPPROTO_UDP, 8000), out;
	struct frame_desc d = desc_to_b(IPPROTO_UDP, 8001);

	memcpy(d.dst, a.mac, ETH_ALEN);
	memcpy(d.src, q2.mac, ETH_ALEN);
	d.saddr = q2.addr;
	d.daddr = a.addr;
	out = built(&d);
	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	normal = install(&q2, &r, "ETH to q2");
	sniffer = install_bare(&q1, IBV_FLOW_ATTR_SNIFFER, "SNIFFER on q1");
	send_from(&a, &in, "SNIFFER");
	expect_frame(&q2, &in, 0, "SNIFFER: the rule's QP still gets its frame");
	expect_frame(&q1, &in, 0, "SNIFFER: sees the received frame");
	send_from(&q2, &out, "SNIFFER");
	expect_frame(&q1, &out, 0, "SNIFFER: sees the sent frame");
	expect_nothing(&q1, "SNIFFER");
	expect_nothing(&q2, "SNIFFER");
	uninstall(sniffer, "SNIFFER");
	uninstall(normal, "ETH to q2");
}

/* ---- what is refused ---- */

static void refused(struct ibv_qp *qp, struct rule *r, int want, const char *what)
{
	struct ibv_flow *f;

	errno = 0;
	f = ibv_create_flow(qp, &r->attr);
	check(!f && errno == want, "%s: refused with %s (got %s)", what, strerror(want),
	      f ? "a flow" : strerror(errno));
	if (f)
		ibv_destroy_flow(f);
}

static void refusals(void)
{
	struct ibv_cq *cq = ibv_create_cq(dev_b.ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr rc_attr = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					    .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
						     .max_recv_sge = 1 } };
	struct ibv_qp *rc = cq ? ibv_create_qp(dev_b.pd, &rc_attr) : NULL;
	struct ibv_flow_spec_eth *eth;
	struct rule r;

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	((struct ibv_flow_spec_eth *)r.specs)->type = 0x77;
	refused(q1.qp, &r, EINVAL, "a spec of unknown type 0x77");

	/* A size 8 bytes too long: the next spec is read from the middle of an IPV4 spec. */
	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4(&r, a.addr, q1.addr);
	eth = (struct ibv_flow_spec_eth *)r.specs;
	eth->size += 8;
	r.attr.num_of_specs = 2;
	refused(q1.qp, &r, EINVAL, "an ETH spec whose size is 8 bytes too long");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_ipv4_ext(&r, IPPROTO_UDP, 0, 0xff);
	refused(q1.qp, &r, EOPNOTSUPP, "IPV4_EXT matching ttl (past mlx5's last IPv4 field, tos)");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	rule_tag(&r, 1u << 24);
	refused(q1.qp, &r, EINVAL, "ACTION_TAG of a tag past 24 bits");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	for (int i = 0; i < 11; i++)
		rule_eth(&r, q1.mac, 0);
	refused(q1.qp, &r, EINVAL, "11 specs (more than the 10 layers verbs allow)");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	r.attr.port = 2;
	refused(q1.qp, &r, EINVAL, "port 2 of a one-port device");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	r.attr.flags = 1u << 4;
	refused(q1.qp, &r, EINVAL, "an unknown flag");

	rule_init(&r, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	r.attr.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	refused(q1.qp, &r, EINVAL, "ALL_DEFAULT with DONT_TRAP");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 16);
	rule_eth(&r, q1.mac, 0);
	refused(q1.qp, &r, ENOMEM, "priority 16 (past mlx5's last, 15)");

	rule_init(&r, IBV_FLOW_ATTR_NORMAL, 0);
	rule_eth(&r, q1.mac, 0);
	if (rc)
		refused(rc, &r, EINVAL, "a flow on an RC QP");
	else
		check(false, "an RC QP to refuse a flow on: %s", strerror(errno));
	if (rc)
		ibv_destroy_qp(rc);
	if (cq)
		ibv_destroy_cq(cq);
}

static void run(void)
{
	static void (*const cases[])(void) = {
		spec_eth, spec_ipv4, spec_ipv4_ext, spec_ipv6, spec_tcp, spec_udp, spec_vxlan, spec_tag,
		spec_drop, priorities, attr_all_default, attr_mc_default, attr_sniffer, refusals,
	};

	if (raw_port_open(&a, &dev_a, 0) && raw_port_open(&q1, &dev_b, 0) && raw_port_open(&q2, &dev_b, 0))
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			cases[i]();
	raw_port_close(&q2);
	raw_port_close(&q1);
	raw_port_close(&a);
	bufs_free();
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = { { "flow specs and attribute types", run } };

	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
