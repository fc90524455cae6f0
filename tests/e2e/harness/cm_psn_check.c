/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cm_psn_check FILE.pcap MIN_REQ MIN_REP: the Starting PSNs of the
 * connections in a capture mean what the kernel's ib_cm makes them mean,
 * where the SENDER's receive queue starts:
 * - ib_send_cm_req sets the active side's rq_psn from its REQ's Starting
 *   PSN, cm_req_handler the passive side's sq_psn: the first request
 *   packet the passive side sends on the connection carries the REQ's;
 * - ib_send_cm_rep sets the passive side's rq_psn from its REP's Starting
 *   PSN, cm_rep_handler the active side's sq_psn: the first request packet
 *   the active side sends carries the REP's.
 * A side that puts its own send PSN there instead has the peer take its
 * first packets as duplicates. Each REQ is paired with its REP by
 * communication ID; an XRC target's QPN is the REP's Local EECN. The
 * fields are read at the offsets of IBTA tables 106 and 110, apart from
 * the daemon's codec. Prints a line per PSN checked; exit 1 when one
 * differs or fewer than MIN_REQ REQ PSNs or MIN_REP REP PSNs were seen in
 * use, 2 on usage or an unreadable file.
 */
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"

#define ROCEV2_PORT 4791
#define HDR_BYTES (sizeof(struct ether_header) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define GSI_QPN 1
#define MAD_BYTES 256
/* MAD header and CM fields, from the MAD's first byte (IBTA 13.4.3, tables 106 and 110). */
#define MAD_CLASS 1
#define MAD_ATTR_ID 16
#define CLASS_CM 0x07
#define ATTR_REQ 0x0010
#define ATTR_REP 0x0013
#define CM_LOCAL_COMM_ID 24
#define CM_REMOTE_COMM_ID 28
#define REQ_LOCAL_QPN 56
#define REQ_TRANSPORT 67	/* bits 2:1; 3 is extended, then XRC is byte 75's low 3 bits = 1 */
#define REQ_STARTING_PSN 68
#define REQ_EXTENDED 75
#define REP_LOCAL_QPN 36
#define REP_LOCAL_EECN 40
#define REP_STARTING_PSN 44
#define MAX_CONNS 4096

struct conn {
	uint32_t active_ip, passive_ip;	/* network order */
	uint32_t active_comm, passive_comm;
	uint32_t active_qpn, passive_qpn;
	uint32_t req_psn, rep_psn;
	bool xrc, have_rep, req_checked, rep_checked;
};

static struct conn conns[MAX_CONNS];
static unsigned int n_conns, req_checked, rep_checked, failures;

static struct conn *conn_of_req(uint32_t active_ip, uint32_t comm)
{
	for (unsigned int i = n_conns; i-- > 0;)
		if (conns[i].active_ip == active_ip && conns[i].active_comm == comm)
			return &conns[i];
	return NULL;
}

static void cm_mad(uint32_t saddr, uint32_t daddr, const uint8_t *mad)
{
	uint16_t attr = rocemu_get_be16(&mad[MAD_ATTR_ID]);
	struct conn *c;

	if (mad[MAD_CLASS] != CLASS_CM)
		return;
	if (attr == ATTR_REQ) {
		/* A resent REQ, or the receiver's copy of one captured on the same device. */
		if (conn_of_req(saddr, rocemu_get_be32(&mad[CM_LOCAL_COMM_ID])) ||
		    n_conns == MAX_CONNS)
			return;
		c = &conns[n_conns++];
		memset(c, 0, sizeof(*c));
		c->active_ip = saddr;
		c->passive_ip = daddr;
		c->active_comm = rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]);
		c->active_qpn = rocemu_get_be24(&mad[REQ_LOCAL_QPN]);
		c->req_psn = rocemu_get_be24(&mad[REQ_STARTING_PSN]);
		c->xrc = (mad[REQ_TRANSPORT] >> 1 & 3) == 3 && (mad[REQ_EXTENDED] & 7) == 1;
	} else if (attr == ATTR_REP) {
		c = conn_of_req(daddr, rocemu_get_be32(&mad[CM_REMOTE_COMM_ID]));
		if (!c || c->have_rep || c->passive_ip != saddr)
			return;
		c->have_rep = true;
		c->passive_comm = rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]);
		c->passive_qpn = rocemu_get_be24(&mad[c->xrc ? REP_LOCAL_EECN : REP_LOCAL_QPN]);
		c->rep_psn = rocemu_get_be24(&mad[REP_STARTING_PSN]);
	}
}

/* The first request packet a side sends on its connection: its PSN against the peer's message. */
static void request(uint32_t daddr, uint32_t destqp, uint32_t psn)
{
	for (unsigned int i = n_conns; i-- > 0;) {
		struct conn *c = &conns[i];

		if (daddr == c->active_ip && destqp == c->active_qpn && !c->req_checked) {
			c->req_checked = true;
			req_checked++;
			failures += psn != c->req_psn;
			printf("%s: REQ of comm 0x%08x: Starting PSN 0x%06x, first request of the passive side 0x%06x\n",
			       psn == c->req_psn ? "ok" : "FAIL", c->active_comm, c->req_psn, psn);
			return;
		}
		if (c->have_rep && daddr == c->passive_ip && destqp == c->passive_qpn &&
		    !c->rep_checked) {
			c->rep_checked = true;
			rep_checked++;
			failures += psn != c->rep_psn;
			printf("%s: REP of comm 0x%08x%s: Starting PSN 0x%06x, first request of the active side 0x%06x\n",
			       psn == c->rep_psn ? "ok" : "FAIL", c->passive_comm,
			       c->xrc ? " (XRC)" : "", c->rep_psn, psn);
			return;
		}
		if ((daddr == c->active_ip && destqp == c->active_qpn) ||
		    (daddr == c->passive_ip && destqp == c->passive_qpn))
			return;	/* the newest connection of that QP was checked already */
	}
}

static void frame(const uint8_t *f, size_t caplen)
{
	const uint8_t *ip = f + sizeof(struct ether_header), *udp = ip + sizeof(struct iphdr);
	const uint8_t *bth = f + HDR_BYTES;
	const struct rocemu_opcode_info *info;
	uint32_t saddr, daddr;

	if (caplen < HDR_BYTES + ROCEMU_BTH_BYTES || (ip[0] >> 4) != 4 ||
	    rocemu_get_be16(&udp[2]) != ROCEV2_PORT)
		return;
	memcpy(&saddr, ip + 12, 4);
	memcpy(&daddr, ip + 16, 4);
	info = rocemu_opcode_info(rocemu_bth_opcode(bth));
	if (!info)
		return;
	if (rocemu_bth_opcode(bth) == ROCEMU_OP_UD_SEND_ONLY && rocemu_bth_destqp(bth) == GSI_QPN) {
		if (caplen >= HDR_BYTES + info->length + MAD_BYTES)
			cm_mad(saddr, daddr, bth + info->length);
		return;
	}
	if ((info->flags & ROCEMU_OPF_REQ) && !(info->flags & ROCEMU_OPF_UD))
		request(daddr, rocemu_bth_destqp(bth), rocemu_bth_psn(bth));
}

int main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *f;
	pcap_t *in;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: cm_psn_check FILE.pcap MIN_REQ MIN_REP\n");
		return 2;
	}
	in = pcap_open_offline(argv[1], errbuf);
	if (!in) {
		fprintf(stderr, "cm_psn_check: %s\n", errbuf);
		return 2;
	}
	while ((rc = pcap_next_ex(in, &h, &f)) == 1)
		frame(f, h->caplen);
	pcap_close(in);
	if (rc != PCAP_ERROR_BREAK) {
		printf("FAIL: %s is cut short\n", argv[1]);
		return 1;
	}
	printf("%s: %u connections, %u REQ and %u REP Starting PSNs checked, %u wrong\n", argv[1],
	       n_conns, req_checked, rep_checked, failures);
	if (req_checked < strtoul(argv[2], NULL, 10) || rep_checked < strtoul(argv[3], NULL, 10)) {
		printf("FAIL: fewer than %s REQ and %s REP Starting PSNs were seen in use\n", argv[2],
		       argv[3]);
		return 1;
	}
	return failures ? 1 : 0;
}
