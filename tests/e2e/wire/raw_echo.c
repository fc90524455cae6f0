/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * raw_echo DEV MAC IPV4 COUNT SECONDS: a host of one RAW_PACKET QP. Flow
 * rules take the frames for MAC and broadcast; it answers ARP requests
 * for IPV4 and ICMP echo requests to it (addresses swapped, checksums
 * made again), and exits 0 once it has answered COUNT echo requests, 1 if
 * SECONDS pass first. Exit 77 when the device has no RAW_PACKET QPs or flows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <netinet/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/frame_headers.h"

#define SLOTS 64
#define SLOT_BYTES 2048
#define SEND_SLOT SLOTS		/* the slot replies are built in */

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;		/* sends */
	struct ibv_cq *rcq;		/* receives */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint8_t mac[ETH_ALEN];
	struct in_addr ip;
};

static void die(int code, const char *what)
{
	fprintf(stderr, "raw_echo: %s: %s\n", what, strerror(errno));
	exit(code);
}

static uint16_t csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static void post_recv(struct host *h, unsigned int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(h->buf + slot * SLOT_BYTES),
			       .length = SLOT_BYTES, .lkey = h->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(h->qp, &wr, &bad))
		die(1, "ibv_post_recv");
}

static void send_frame(struct host *h, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(h->buf + SEND_SLOT * SLOT_BYTES),
			       .length = len, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = SEND_SLOT, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(h->qp, &wr, &bad))
		die(1, "ibv_post_send");
	do
		n = ibv_poll_cq(h->cq, 1, &wc);
	while (n == 0);
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "raw_echo: send completion %s\n",
			n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		exit(1);
	}
}

/* An ARP request for our address: the reply into out. */
static uint32_t arp_reply(struct host *h, const uint8_t *in, uint32_t len, uint8_t *out)
{
	const frame_ether_arp *req = (const void *)(in + ETH_HLEN);
	frame_ether_arp *rep = (void *)(out + ETH_HLEN);
	struct in_addr asker;

	if (len < ETH_HLEN + sizeof(*req) || ntohs(req->arp_op) != ARPOP_REQUEST ||
	    memcmp(req->arp_tpa, &h->ip, 4))
		return 0;
	memcpy(out, req->arp_sha, ETH_ALEN);
	memcpy(out + ETH_ALEN, h->mac, ETH_ALEN);
	out[12] = ETHERTYPE_ARP >> 8;
	out[13] = ETHERTYPE_ARP & 0xff;
	*rep = *req;
	rep->arp_op = htons(ARPOP_REPLY);
	memcpy(rep->arp_sha, h->mac, ETH_ALEN);
	memcpy(rep->arp_spa, &h->ip, 4);
	memcpy(rep->arp_tha, req->arp_sha, ETH_ALEN);
	memcpy(rep->arp_tpa, req->arp_spa, 4);
	memcpy(&asker, req->arp_spa, sizeof(asker));
	printf("arp reply to %s\n", inet_ntoa(asker));
	return ETH_HLEN + sizeof(*rep);
}

/* An ICMP echo request to our address: the echo reply into out. */
static uint32_t echo_reply(struct host *h, const uint8_t *in, uint32_t len, uint8_t *out)
{
	const frame_iphdr *ip = (const void *)(in + ETH_HLEN);
	frame_iphdr *rip = (void *)(out + ETH_HLEN);
	frame_icmphdr *icmp;
	struct in_addr asker;
	uint32_t ihl, tot;

	if (len < ETH_HLEN + sizeof(*ip) || ip->version != 4 || ip->protocol != IPPROTO_ICMP ||
	    ip->daddr != h->ip.s_addr)
		return 0;
	ihl = ip->ihl * 4u;
	tot = ntohs(ip->tot_len);
	if (ihl < sizeof(*ip) || tot < ihl + sizeof(*icmp) || ETH_HLEN + tot > len)
		return 0;
	if (((const frame_icmphdr *)((const uint8_t *)ip + ihl))->type != ICMP_ECHO)
		return 0;
	memcpy(out, in, ETH_HLEN + tot);
	memcpy(out, in + ETH_ALEN, ETH_ALEN);
	memcpy(out + ETH_ALEN, h->mac, ETH_ALEN);
	rip->saddr = ip->daddr;
	rip->daddr = ip->saddr;
	rip->ttl = 64;
	rip->check = 0;
	rip->check = csum(rip, ihl);
	icmp = (void *)((uint8_t *)rip + ihl);
	icmp->type = ICMP_ECHOREPLY;
	icmp->checksum = 0;
	icmp->checksum = csum(icmp, tot - ihl);
	asker.s_addr = ip->saddr;
	printf("echo reply to %s seq %u\n", inet_ntoa(asker), ntohs(icmp->un.echo.sequence));
	return ETH_HLEN + tot;
}

/* A rule taking the frames for dmac to h's QP. */
static void flow_to(struct host *h, const uint8_t *dmac)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} rule = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth) },
	};

	_Static_assert(sizeof(rule) == sizeof(rule.attr) + sizeof(rule.eth), "specs follow the attr");
	memcpy(rule.eth.val.dst_mac, dmac, ETH_ALEN);
	memset(rule.eth.mask.dst_mac, 0xff, ETH_ALEN);
	if (!ibv_create_flow(h->qp, &rule.attr))
		die(errno == EOPNOTSUPP || errno == ENOSYS ? 77 : 1, "ibv_create_flow");
}

static void open_host(struct host *h, const char *name)
{
	static const uint8_t bcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET,
					 .cap = { .max_send_wr = 4, .max_recv_wr = SLOTS,
						  .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i] && strcmp(ibv_get_device_name(list[i]), name); i++)
		;
	if (!list || !list[i])
		die(1, "no such device");
	h->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!h->ctx)
		die(1, "ibv_open_device");
	h->pd = ibv_alloc_pd(h->ctx);
	h->cq = ibv_create_cq(h->ctx, 8, NULL, NULL, 0);
	h->rcq = ibv_create_cq(h->ctx, SLOTS, NULL, NULL, 0);
	if (!h->pd || !h->cq || !h->rcq)
		die(1, "ibv_alloc_pd/ibv_create_cq");
	init.send_cq = h->cq;
	init.recv_cq = h->rcq;
	h->qp = ibv_create_qp(h->pd, &init);
	if (!h->qp)
		die(errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS ? 77 : 1,
		    "ibv_create_qp RAW_PACKET");
	if (ibv_modify_qp(h->qp, &attr, IBV_QP_STATE | IBV_QP_PORT))
		die(1, "INIT");
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(h->qp, &attr, IBV_QP_STATE))
		die(1, "RTR");
	attr.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(h->qp, &attr, IBV_QP_STATE))
		die(1, "RTS");
	h->buf = calloc(SLOTS + 1, SLOT_BYTES);
	h->mr = h->buf ? ibv_reg_mr(h->pd, h->buf, (SLOTS + 1) * SLOT_BYTES, IBV_ACCESS_LOCAL_WRITE) :
			 NULL;
	if (!h->mr)
		die(1, "ibv_reg_mr");
	for (unsigned int s = 0; s < SLOTS; s++)
		post_recv(h, s);
	flow_to(h, h->mac);
	flow_to(h, bcast);
}

int main(int argc, char **argv)
{
	struct host h = { 0 };
	unsigned long count, seconds, answered = 0;
	struct timespec start, now;

	if (argc != 6 ||
	    sscanf(argv[2], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &h.mac[0], &h.mac[1], &h.mac[2],
		   &h.mac[3], &h.mac[4], &h.mac[5]) != 6 ||
	    inet_pton(AF_INET, argv[3], &h.ip) != 1) {
		fprintf(stderr, "usage: raw_echo DEV MAC IPV4 COUNT SECONDS\n");
		return 2;
	}
	count = strtoul(argv[4], NULL, 10);
	seconds = strtoul(argv[5], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	open_host(&h, argv[1]);
	printf("ready %s %s\n", argv[2], argv[3]);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (answered < count) {
		struct ibv_wc wc;
		uint32_t len = 0;
		bool echo = false;
		uint8_t *frame;
		int n = ibv_poll_cq(h.rcq, 1, &wc);

		if (n < 0)
			die(1, "ibv_poll_cq");
		if (n == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((unsigned long)(now.tv_sec - start.tv_sec) >= seconds) {
				fprintf(stderr, "raw_echo: %lu of %lu echo requests answered in %lu s\n",
					answered, count, seconds);
				return 1;
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "raw_echo: receive completion %s\n", ibv_wc_status_str(wc.status));
			return 1;
		}
		frame = h.buf + wc.wr_id * SLOT_BYTES;
		if (wc.byte_len >= ETH_HLEN && frame[12] == ETHERTYPE_ARP >> 8 &&
		    frame[13] == (ETHERTYPE_ARP & 0xff))
			len = arp_reply(&h, frame, wc.byte_len, h.buf + SEND_SLOT * SLOT_BYTES);
		else if (wc.byte_len >= ETH_HLEN && frame[12] == ETHERTYPE_IP >> 8 &&
			 frame[13] == (ETHERTYPE_IP & 0xff))
			echo = (len = echo_reply(&h, frame, wc.byte_len,
						 h.buf + SEND_SLOT * SLOT_BYTES)) != 0;
		if (len)
			send_frame(&h, len);
		answered += echo;
		post_recv(&h, (unsigned int)wc.wr_id);
	}
	printf("answered %lu echo requests\n", answered);
	return 0;
}
