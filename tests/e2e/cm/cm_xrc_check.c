/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cm_xrc_check FILE.pcap: the first XRC connection of a capture as the
 * kernel's ib_cm makes it, and what rdma_xclient sends over it:
 * - the REQ: transport service type 3 (extended) with extended transport
 *   type 1 (XRC), and none of what an XRC initiator has not (responder
 *   resources, retry and RNR retry counts, SRQ), as cm_format_req leaves
 *   them out;
 * - its REP: Local QPN 0, the target's QPN in Local EECN, SRQ 1, no
 *   initiator depth or end-to-end flow control (cm_format_rep); its
 *   private data starts with the SRQ number rdma_xserver sends, in
 *   network order;
 * - the initiator's XRC SEND Only to that QPN: the XRCETH names that SRQ,
 *   the PSN is the REP's Starting PSN, the payload rdma_xclient's 16 zero
 *   bytes;
 * - the target's XRC Acknowledge of it: an ACK of that PSN to the
 *   initiator's QPN.
 * Fields are read at IBTA's offsets, apart from the daemon's codec; the
 * copy of a frame a device captures both sending and receiving counts
 * once. The capture must hold whole frames (ROCEMU_PCAP_SNAPLEN=0).
 * Prints a line per check; exit 1 when one fails or a message is missing,
 * 2 on usage or an unreadable file.
 */
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"

#define ROCEV2_PORT 4791
#define HDR_BYTES (sizeof(struct ether_header) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define GSI_QPN 1
#define MAD_BYTES 256
#define MSG_BYTES 16		/* rdma_xclient's send_msg */
/* From the MAD's first byte: its header, then IBTA tables 106 and 110. */
#define MAD_CLASS 1
#define MAD_ATTR_ID 16
#define CLASS_CM 0x07
#define ATTR_REQ 0x0010
#define ATTR_REP 0x0013
#define CM_LOCAL_COMM_ID 24
#define CM_REMOTE_COMM_ID 28
#define REQ_LOCAL_QPN 56
#define REQ_RESPONDER_RESOURCES 59
#define REQ_TRANSPORT 67	/* remote CM response timeout:5, transport service type:2, flow control:1 */
#define REQ_RETRY 71		/* local CM response timeout:5, retry count:3 */
#define REQ_RNR 74		/* path MTU:4, RDC exists:1, RNR retry count:3 */
#define REQ_SRQ_EXT 75		/* max CM retries:4, SRQ:1, extended transport type:3 */
#define REP_LOCAL_QPN 36
#define REP_LOCAL_EECN 40
#define REP_STARTING_PSN 44
#define REP_INITIATOR_DEPTH 49
#define REP_FLOW_CONTROL 50	/* target ACK delay:5, failover:2, flow control:1 */
#define REP_SRQ 51		/* RNR retry count:3, SRQ:1 */
#define REP_PRIVATE_DATA 60

static unsigned int failures;
static bool have_req, have_rep, have_send, have_ack;
static uint32_t req_comm, ini_qpn, tgt_qpn, rep_psn, srqn, send_psn;

static void check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

static void req(const uint8_t *mad)
{
	if (have_req || (mad[REQ_TRANSPORT] >> 1 & 3) != 3)
		return;
	have_req = true;
	req_comm = rocemu_get_be32(&mad[CM_LOCAL_COMM_ID]);
	ini_qpn = rocemu_get_be24(&mad[REQ_LOCAL_QPN]);
	check((mad[REQ_SRQ_EXT] & 7) == 1, "the REQ's transport is extended, of type XRC (1)");
	check(!mad[REQ_RESPONDER_RESOURCES] && !(mad[REQ_RETRY] & 7) && !(mad[REQ_RNR] & 7) &&
	      !(mad[REQ_SRQ_EXT] & 8),
	      "the REQ has no responder resources, retry or RNR retry count or SRQ");
}

static void rep(const uint8_t *mad)
{
	if (!have_req || have_rep || rocemu_get_be32(&mad[CM_REMOTE_COMM_ID]) != req_comm)
		return;
	have_rep = true;
	tgt_qpn = rocemu_get_be24(&mad[REP_LOCAL_EECN]);
	rep_psn = rocemu_get_be24(&mad[REP_STARTING_PSN]);
	srqn = rocemu_get_be32(&mad[REP_PRIVATE_DATA]);
	check(!rocemu_get_be24(&mad[REP_LOCAL_QPN]) && tgt_qpn,
	      "the REP names the target's QPN in Local EECN, none in Local QPN");
	check(mad[REP_SRQ] >> 4 & 1, "the REP's SRQ bit is set");
	check(!mad[REP_INITIATOR_DEPTH] && !(mad[REP_FLOW_CONTROL] & 1),
	      "the REP has no initiator depth or flow control");
	printf("XRC target QPN 0x%06x, SRQ 0x%06x, REP Starting PSN 0x%06x\n", tgt_qpn, srqn,
	       rep_psn);
}

/* A packet of len bytes (BTH to ICRC) at bth. */
static void packet(uint8_t *bth, size_t len)
{
	uint8_t op = rocemu_bth_opcode(bth), *payload;
	ssize_t paylen = rocemu_pkt_payload_len(bth, len);
	static const uint8_t zeros[MSG_BYTES];

	if (op == ROCEMU_OP_UD_SEND_ONLY && rocemu_bth_destqp(bth) == GSI_QPN && paylen >= MAD_BYTES) {
		payload = rocemu_pkt_payload(bth);
		if (payload[MAD_CLASS] != CLASS_CM)
			return;
		if (rocemu_get_be16(&payload[MAD_ATTR_ID]) == ATTR_REQ)
			req(payload);
		else if (rocemu_get_be16(&payload[MAD_ATTR_ID]) == ATTR_REP)
			rep(payload);
		return;
	}
	if (op == ROCEMU_OP_XRC_SEND_ONLY && have_rep && !have_send &&
	    rocemu_bth_destqp(bth) == tgt_qpn) {
		have_send = true;
		send_psn = rocemu_bth_psn(bth);
		check(rocemu_xrceth_srqn(rocemu_pkt_xrceth(bth)) == srqn,
		      "the XRC SEND's XRCETH names the SRQ of the REP's private data");
		check(send_psn == rep_psn, "the XRC SEND's PSN is the REP's Starting PSN");
		check(paylen == MSG_BYTES && !memcmp(rocemu_pkt_payload(bth), zeros, MSG_BYTES),
		      "the XRC SEND carries rdma_xclient's 16 zero bytes");
	} else if (op == ROCEMU_OP_XRC_ACKNOWLEDGE && have_send && !have_ack &&
		   rocemu_bth_destqp(bth) == ini_qpn) {
		have_ack = true;
		check(rocemu_bth_psn(bth) == send_psn &&
		      rocemu_aeth_syndrome_type(rocemu_aeth_syndrome(rocemu_pkt_aeth(bth))) ==
			      ROCEMU_AETH_ACK,
		      "the target acknowledges the SEND's PSN to the initiator's QPN");
	}
}

int main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	uint8_t copy[2048];
	struct pcap_pkthdr *h;
	const u_char *f;
	pcap_t *in;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: cm_xrc_check FILE.pcap\n");
		return 2;
	}
	in = pcap_open_offline(argv[1], errbuf);
	if (!in) {
		fprintf(stderr, "cm_xrc_check: %s\n", errbuf);
		return 2;
	}
	while ((rc = pcap_next_ex(in, &h, &f)) == 1) {
		const uint8_t *udp = f + sizeof(struct ether_header) + sizeof(struct iphdr);
		size_t len;

		if (h->caplen < HDR_BYTES + ROCEMU_BTH_BYTES || h->caplen != h->len ||
		    h->len > sizeof(copy) || rocemu_get_be16(&udp[2]) != ROCEV2_PORT)
			continue;
		len = rocemu_get_be16(&udp[4]) - sizeof(struct udphdr);
		if (HDR_BYTES + len > h->caplen)
			continue;
		memcpy(copy, f + HDR_BYTES, len);
		packet(copy, len);
	}
	pcap_close(in);
	check(rc == PCAP_ERROR_BREAK, "the capture reads to its end");
	check(have_req && have_rep, "an XRC REQ and its REP");
	check(have_send && have_ack, "rdma_xclient's XRC SEND and its acknowledge");
	printf("%u failed\n", failures);
	return failures ? 1 : 0;
}
