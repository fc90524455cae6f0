/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Forged RoCEv2 packets for the e2e tests: headers written with the
 * codecs of net/roce/roce_hdr.h, the ICRC of net/roce/icrc.h, sent from a UDP socket
 * of the test's own to a device's address, port 4791, as any host on the
 * network could; and the daemon's CLI asked from inside the test program
 * (`rocemu status` within a deadline, `rocemu stats` counters, `rocemu
 * fault`). A helper giving bool prints a FAIL line when it fails.
 */
#ifndef ROCEMU_TESTS_E2E_FORGE_H
#define ROCEMU_TESTS_E2E_FORGE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#include "net/roce/roce_hdr.h"

struct named_check;

/* Room for any packet a test forges: the largest UDP payload over IPv4. */
#define FORGE_MAX 65507

struct forge {
	int fd;
	struct sockaddr_in self;	/* where the packets come from (the ICRC covers it) */
	bool raw;			/* fd is a raw socket writing its own IPv4 and UDP headers */
};

/* The IPv4 address (network order) of a RoCEv2 GID ::ffff:a.b.c.d. */
uint32_t gid_ipv4(const union ibv_gid *gid);

/* A UDP socket bound to addr (network order) and port (0: any). */
bool forge_open(struct forge *f, uint32_t addr, uint16_t port);
/*
 * A raw socket (CAP_NET_RAW) sending as addr:port whoever holds that port:
 * the forger only a privileged process can be, which the daemon cannot
 * tell from a device of its own (it receives nothing: forge_recv fails).
 */
bool forge_open_raw(struct forge *f, uint32_t addr, uint16_t port);
void forge_close(struct forge *f);

/*
 * Start a packet at pkt: the BTH of opcode to dqpn at psn (P_Key default,
 * pad for paylen), the opcode's extension headers zeroed for the caller
 * to fill through rocemu_pkt_*(), paylen payload bytes of fill, the pad.
 * Returns its length without the ICRC, or 0 for an opcode the table lacks.
 */
size_t forge_build(uint8_t *pkt, uint8_t opcode, uint32_t dqpn, uint32_t psn, bool ackreq,
		   size_t paylen, uint8_t fill);
/* A request (AckReq set) whose RETH covers [va, va + dma_len) of rkey, else as forge_build. */
size_t forge_reth_request(uint8_t *pkt, uint8_t opcode, uint32_t dqpn, uint32_t psn, uint64_t va,
			  uint32_t rkey, uint32_t dma_len, size_t paylen, uint8_t fill);
/* An RC Acknowledge of psn with this AETH syndrome. Returns its length without the ICRC. */
size_t forge_ack(uint8_t *pkt, uint32_t dqpn, uint32_t psn, uint8_t syndrome);

/* Append the ICRC for f's address to dst (4 bytes past len) and send it to dst:4791. */
bool forge_send(struct forge *f, uint32_t dst, uint8_t *pkt, size_t len);

/* One datagram within ms into buf: its length, 0 when none came, -1 on error. */
ssize_t forge_recv(struct forge *f, uint8_t *buf, size_t cap, unsigned int ms);

/* ---- the daemon's CLI, path set by cli_use() ---- */

void cli_use(const char *rocemu);
/* `rocemu status` exits 0 (killed after CLI_WAIT_MS, a hang). */
bool cli_status_answers(const char *what);
/* The output of `rocemu CMD` (status, stats) into out (NUL-terminated); false when it fails. */
bool cli_output(const char *cmd, char *out, size_t cap);
/* Counter name of device dev in `rocemu stats`, or -1 (with a FAIL line) when absent. */
long long cli_stat(const char *dev, const char *name);
/* Wait (at most 5 s) until counter name of dev reaches at least want. */
bool cli_stat_reaches(const char *dev, const char *name, long long want, const char *what);
/*
 * Packets the two devices received from outside the daemon: their
 * port_rcv_packets less what they sent each other (port_xmit_packets);
 * -1 (with a FAIL line) when the counters cannot be read.
 */
long long cli_packets_from_outside(const char *first, const char *second);
/* `rocemu fault dev spec` succeeds. */
bool cli_fault(const char *dev, const char *spec);

/*
 * main() of a program whose arguments are DEVICE_A DEVICE_B ROCEMU PEER_ADDR
 * (the CLI, a free loopback address for a fake peer, into *peer_addr in
 * network order): run_checks over the devices.
 */
int forge_checks_main(int argc, char **argv, const struct named_check *checks, size_t n,
		      uint32_t *peer_addr);

#endif /* ROCEMU_TESTS_E2E_FORGE_H */
