/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The soft NIC as a whole: its devices, the event loop that drives it,
 * its client connections and the daemon-wide handle tables (handles are
 * unique per daemon; each object records its owner, object.h).
 * emu_life.h brings it up and takes it down.
 */
#ifndef ROCEMU_EMULATOR_EMU_H
#define ROCEMU_EMULATOR_EMU_H

#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "emulator/base/idtable.h"
#include "emulator/base/list.h"
#include "emulator/core/device.h"
#include "net/loop/loop.h"

#define ROCEMU_FIRST_QPN 0x000100
#define ROCEMU_MAX_CM_IDS (1u << 20)

struct rocemu_ipv4_fields;
struct rocemu_ipv4_udp;
struct rocemu_pkt;
struct rocemu_transport_ops;

struct rocemu_emu {
	struct rocemu_loop *loop;
	char runtime_dir[PATH_MAX];
	char sysfs_root[PATH_MAX];	/* <runtime_dir>/sys, the ibdev_path root */
	struct rocemu_device devices[ROCEMU_MAX_DEVICES];
	unsigned int num_devices;
	struct rocemu_list clients;	/* struct rocemu_client.node */
	struct rocemu_list accounts;	/* limits.c: struct rocemu_account.node, a process each */
	struct rocemu_limits limits;	/* limits.c: what each account may hold */
	unsigned int num_connections;
	struct rocemu_idtable pds, mrs, channels, cqs, qps;
	struct rocemu_idtable mws;	/* memory windows (emulator/mem/mw.c) */
	struct rocemu_idtable srqs;	/* shared receive queues (emulator/obj/srq.c) */
	struct rocemu_idtable wqs;	/* receive work queues (emulator/wq/wq.c) */
	struct rocemu_idtable rwq_ind_tables;	/* their RSS indirection tables (rwq_ind_table.c) */
	struct rocemu_idtable xrcd_opens;	/* each context's opens of XRC domains (xrcd.c) */
	struct rocemu_list xrcds;	/* XRC domains, shared by contexts (xrcd.c) */
	struct rocemu_list ufiles;	/* object spaces of contexts and their imports (ufile.c) */
	struct rocemu_list mms;		/* address spaces of clients and MRs (mm.c) */
	struct rocemu_idtable dms;	/* device memory (dm.c) */
	struct rocemu_idtable cm_ids;	/* RDMA CM ids by handle = local communication ID (cm/) */
	struct rocemu_idtable reserved_qpns;	/* QPNs no QP gets (reserved_qpn.c) */
	struct rocemu_idtable flows;	/* steering rules (eth/flow.c) */
	struct rocemu_list cm_ids_all;	/* the same ids, for listener and duplicate look-ups */
	/* rx.c: datagrams for QP1, the CM's MADs; the CM sets it at start (NULL: dropped) */
	void (*qp1_rx)(struct rocemu_device *dev, const struct rocemu_pkt *pkt);
	/* eth/: a frame for the wire between hosts (the VXLAN wire sets it; NULL: none leaves) */
	void (*eth_wire_tx)(struct rocemu_device *dev, const uint8_t *frame, uint32_t len);
	/*
	 * egress.c, tap.c: a RoCE datagram dev sends or receives, buf[0, len) in
	 * seg-byte packets (0: one) along flow, while dev has sniffer rules (eth/ sets it)
	 */
	void (*roce_sniff)(struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
			   const struct rocemu_ipv4_fields *ip, const uint8_t *buf, size_t len,
			   size_t seg);
	/* qp.c: the transport of a QP type, or NULL (engine/transport.h's lookup, set at setup) */
	const struct rocemu_transport_ops *(*transport_of_qp_type)(enum ibv_qp_type type);
	uint32_t xrcd_seq;		/* number of the last XRC domain made */
	uint8_t mr_key_variant;		/* low byte of the next MR key */
	int listen_fd;
	uint64_t idle_exit_ns;		/* 0: never exit when idle */
	uint64_t idle_timer;
	bool stop_requested;		/* SHUTDOWN received */
	bool sleeping;			/* daemon_sleeping published to the clients */
	uint64_t last_work_ns;		/* idle.c: spin a little after work */
	bool busy_poll;			/* idle.c: never sleep while a client is connected */
	bool dma_by_mem;		/* ROCEMU_DMA=mem: no copy by pid (mm_guard.h) */
	unsigned int qps_in_error;	/* client.c: receive doorbells wake the daemon while > 0 */
	unsigned int direct_objs;	/* client.c: QPs and CQs watched for direct doorbells */
	unsigned int direct_polled;	/* of those, the ones not write-protected: the poll timer's */
	uint64_t direct_timer;		/* direct.c: the poll timer while asleep, 0 when none */
	uint64_t direct_deadline;	/* direct.c: when it fires */
	uint64_t direct_poll_ns;	/* direct.c: its period, backing off while nothing rings */
	uint64_t direct_work_ns;	/* direct.c: when a scan last found work, which keeps it short */
	void *reply_buf;		/* ROCEMU_CTRL_MSG_MAX bytes for response bodies */
	struct rocemu_list tracers;	/* trace.c: struct rocemu_tracer.node */
	unsigned int ntracers;
	uint32_t pcap_snaplen;		/* capture.c: bytes kept of a captured frame, 0: all */
};

struct rocemu_device *rocemu_emu_device_by_name(struct rocemu_emu *emu, const char *name);
/* The device of IPv4 address addr (network order), or NULL. */
struct rocemu_device *rocemu_emu_device_by_ipv4(struct rocemu_emu *emu, uint32_t addr);

#endif /* ROCEMU_EMULATOR_EMU_H */
