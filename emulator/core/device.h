/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * An emulated adapter: one port, one RoCEv2 GID (::ffff:<ipv4>), the
 * identity and limits of a ConnectX-5, and the counts of objects held
 * against those limits.
 */
#ifndef ROCEMU_EMULATOR_DEVICE_H
#define ROCEMU_EMULATOR_DEVICE_H

#include <limits.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "emulator/base/list.h"
#include "emulator/core/limits.h"
#include "emulator/core/sport.h"
#include "emulator/core/vxlan_port.h"
#include "net/observe/fault.h"
#include "net/roce/icrc.h"
#include "rocemu/ctrl.h"
#include "rocemu/ring.h"

/* Limits enforced and reported (struct ibv_device_attr). */
#define ROCEMU_MAX_QP 16384
/* WQEs of one BB fill an SQ at the most its 16-bit counters allow (log_max_qp_sz 15). */
#define ROCEMU_MAX_QP_WR ROCEMU_SQ_MAX_BBS
#define ROCEMU_MAX_SGE 30
#define ROCEMU_MAX_CQ 16384
#define ROCEMU_MAX_CQE 4194303
#define ROCEMU_MAX_MR 65536
#define ROCEMU_MAX_MW 65536
#define ROCEMU_MAX_PD 65536
#define ROCEMU_MAX_RD_ATOM 16
#define ROCEMU_MAX_INLINE 512
#define ROCEMU_MAX_MSG_SZ 0x40000000u	/* a ConnectX-5's: 1 GiB */
#define ROCEMU_MAX_SRQ 16384
/* One entry of the ring stays free (ring.h), as mlx5's (1 << log_max_srq_sz) - 1. */
#define ROCEMU_MAX_SRQ_WR (ROCEMU_SRQ_MAX_WQES - 1)
#define ROCEMU_MAX_SRQ_SGE ROCEMU_MAX_SGE
/* Multicast (max_mcast_grp, max_mcast_qp_attach): groups a device joins, QPs in each. */
#define ROCEMU_MAX_MCAST_GRP 32
#define ROCEMU_MAX_MCAST_QP_ATTACH 16
#define ROCEMU_PORT_NUM 1
#define ROCEMU_DEFAULT_NETDEV_MTU 9000

struct rocemu_emu;
struct rocemu_pcap;
struct rocemu_ring_format;

/* IB counts port data (port_xmit_data, port_rcv_data) in 4-byte words. */
#define ROCEMU_PORT_DATA_WORD 4

/* Named like the hardware counters `rdma statistic` shows; each kept where it happens. */
struct rocemu_device_counters {
	uint64_t port_xmit_packets, port_xmit_data, port_rcv_packets, port_rcv_data;
	uint64_t port_xmit_discards;	/* packets not sent: the port was down */
	uint64_t out_of_sequence;	/* responder: requests past the expected PSN */
	uint64_t duplicate_request;	/* responder: requests before the expected PSN */
	uint64_t packet_seq_err;	/* requester: PSN sequence NAKs received */
	uint64_t local_ack_timeout_err;	/* requester: local ACK timeouts */
	uint64_t rnr_nak_retry_err;	/* requester: RNR NAKs received */
	uint64_t retransmitted_packets;	/* requester: packets sent again */
	uint64_t rx_ghost_acks;		/* requester: ACKs, NAKs, responses outside the window */
	uint64_t rx_bad_responses;	/* requester: responses that fit no request in flight */
	uint64_t rx_bad_duplicates;	/* responder: duplicates failing a new request's checks */
	uint64_t rx_stale_atomics;	/* responder: duplicate atomics no longer in the replay cache */
	uint64_t rx_busy_rd_atomics;	/* responder: READs, atomics with every resource owed */
	uint64_t rx_qkey_violations;	/* UD: datagrams dropped on a Q_Key mismatch */
	uint64_t rx_ud_dropped;		/* UD: datagrams dropped: QP not receiving */
	uint64_t out_of_buffer;		/* UD, RAW_PACKET: datagrams, frames dropped: no receive WQE in the RQ or SRQ */
	uint64_t rx_uc_dropped;		/* UC responder: packets of messages lost or refused */
	uint64_t rx_cm_dropped;		/* CM: MADs on QP1 malformed, stale or in the wrong state */
	uint64_t rx_dct_connect;	/* DCT: connections of a DCI taken (mlx5's counter) */
	uint64_t rx_dc_key_violations;	/* DCT: requests dropped on a DC access key mismatch */
	uint64_t raw_tx_frames;		/* RAW_PACKET: Ethernet frames sent (each of a TSO's) */
	uint64_t raw_rx_frames;		/* RAW_PACKET: frames a receive WQE took */
	uint64_t raw_rx_dropped;	/* RAW_PACKET: frames steered to a QP not receiving */
};

/*
 * Where a device's datagrams go at the end of egress (egress.h). The
 * daemon leaves send NULL: they leave through the UDP sockets of the event
 * loop. A unit test sets a fake wire instead, which gets every datagram
 * after capture (faults are not injected on it) and may hand it to
 * rocemu_rx_datagram; a device on a fake wire opens no socket (sport.c).
 */
struct rocemu_wire {
	/* buf[0, len) along flow: one datagram, or with gso > 0 a run of gso-byte packets. */
	int (*send)(void *arg, const struct rocemu_ipv4_udp *flow, const void *buf, size_t len,
		    uint16_t gso);
	void *arg;
};

/* A multicast group the device joined (mcast.h). */
struct rocemu_mcast_group {
	struct rocemu_device *dev;
	uint32_t addr;			/* IPv4 group, network order; 0: slot free */
	int fd;				/* joined on dev's address, port 4791 */
	unsigned int num_qps;
	uint32_t qpns[ROCEMU_MAX_MCAST_QP_ATTACH];
};

#define ROCEMU_PCI_VENDOR_ID 0x15b3	/* Mellanox */

/*
 * What tells the adapters apart to software: ibv_query_device's part id
 * is the PCI device id (ConnectX-5 0x1017, ConnectX-3 Pro 0x1007), and
 * the PCI function's driver is the one of that generation.
 */
struct rocemu_model_ids {
	const char *name;		/* "ConnectX-5", for logs and status */
	uint16_t part_id;
	uint16_t pci_subsys_device;	/* one of the boards */
	const char *fw_ver;
	const char *board_id;
	const char *driver;		/* mlx5_core, mlx4_core */
};

const struct rocemu_model_ids *rocemu_device_ids(const struct rocemu_device *dev);

struct rocemu_device {
	struct rocemu_emu *emu;
	enum rocemu_model model;	/* the adapter it plays: its caps, ids and ring format */
	const struct rocemu_ring_format *format;	/* ring/format.h: how its rings are read and written */
	char name[ROCEMU_DEV_NAME_MAX];
	uint32_t index;
	uint32_t ipv4;			/* network byte order */
	uint32_t netdev_mtu;
	enum ibv_mtu active_mtu;
	enum ibv_port_state port_state;
	uint8_t mac[6];
	uint64_t node_guid;		/* network byte order */
	int udp_fd;
	int udp_fd_unsummed;		/* receives what came with UDP checksum 0, or -1 */
	uint8_t wire_ttl, wire_mcast_ttl;	/* what the kernel writes in its datagrams */
	uint64_t rx_datagrams;
	uint64_t rx_dropped;		/* port down, malformed, bad ICRC, no such QP */
	uint64_t rx_icrc_errors;
	uint64_t rx_no_qp;		/* of rx_dropped: to a QPN no QP has (one destroyed, a stale peer) */
	uint64_t rx_forged_source;	/* of rx_dropped: from a device of this daemon, not through it */
	uint64_t rx_eth_dropped;	/* Ethernet frames: port down, malformed, no rule took, a drop rule */
	uint64_t direct_wakeups;	/* direct doorbells that woke an idle daemon by a write fault */
	uint64_t objs[ROCEMU_RES_KINDS];	/* limits.c: objects held, some against the limits above */
	uint64_t dm_used;		/* dm.c: bytes of ROCEMU_DM_MAX_SIZE allocated */
	struct rocemu_device_counters counters;
	struct rocemu_fault *fault;	/* fault_inject.c: NULL when no faults */
	struct rocemu_fault_counters fault_past;	/* of replaced injectors */
	struct rocemu_pcap *pcap;	/* capture.c: NULL when no capture */
	char pcap_path[PATH_MAX];	/* capture.c: the file of pcap */
	struct rocemu_wire wire;	/* a unit test's fake wire, else unset */
	struct rocemu_sport sports[ROCEMU_SPORT_MAX];	/* sport.c: RC source ports open */
	unsigned int num_sports;
	struct rocemu_mcast_group mcast[ROCEMU_MAX_MCAST_GRP];	/* mcast.c: groups joined */
	struct rocemu_vxlan_port vxlan;	/* emulator/vxlan/: the L2 wire between hosts */
	struct rocemu_list flows;	/* eth/flow.c: its steering rules, in the order they are tried */
	unsigned int sniffers;		/* eth/flow.c: of them SNIFFER rules, which RoCE traffic is framed for */
};

/* Fill identity (MAC, GUID) and port state from name, ipv4 and netdev_mtu. */
void rocemu_device_init(struct rocemu_device *dev, uint32_t index, const char *name,
			uint32_t ipv4_be, uint32_t netdev_mtu);
/* Give dev the MAC mac (a configured one), and the node GUID that follows from it. */
void rocemu_device_set_mac(struct rocemu_device *dev, const uint8_t mac[6]);

/* dev's multicast group of IPv4 address addr (network order), or NULL; addr 0 finds a free slot. */
struct rocemu_mcast_group *rocemu_device_mcast_group(struct rocemu_device *dev, uint32_t addr);
void rocemu_device_query(const struct rocemu_device *dev, struct ibv_device_attr *attr);
void rocemu_port_query(const struct rocemu_device *dev, struct ibv_port_attr *attr);
void rocemu_device_info(const struct rocemu_device *dev, struct rocemu_dev_info *info);

/* Bytes of an IB MTU (256 .. 4096), 0 for a value that is none. */
unsigned int rocemu_mtu_bytes(enum ibv_mtu mtu);
/* "ACTIVE", "DOWN"... */
const char *rocemu_port_state_name(enum ibv_port_state state);
/* "xx:xx:xx:xx:xx:xx" of dev's MAC into buf (ROCEMU_MAC_TEXT_LEN bytes). */
#define ROCEMU_MAC_TEXT_LEN 18
const char *rocemu_device_mac_text(const struct rocemu_device *dev, char *buf);
/* Dotted IPv4 text of dev into buf (16 bytes). */
const char *rocemu_device_ipv4_text(const struct rocemu_device *dev, char *buf);

#endif /* ROCEMU_EMULATOR_DEVICE_H */
