/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One control connection. After OPEN_DEVICE (or IMPORT_DEVICE) it is one
 * ibv_context: it owns the CQs, QPs, SRQs, channels, windows and XRC opens
 * it creates and they die with it (as with the kernel's uverbs release),
 * whether the client closed, exited or was killed. PDs, MRs and device
 * memory belong to its ufile, which imported contexts share (ufile.h).
 * Here the record each object names as its owner; client_life.h makes,
 * binds and frees it.
 */
#ifndef ROCEMU_EMULATOR_CLIENT_H
#define ROCEMU_EMULATOR_CLIENT_H

#include <stdbool.h>
#include <sys/types.h>

#include "emulator/base/shm.h"
#include "emulator/base/text_pages.h"
#include "emulator/core/emu.h"

struct rocemu_context_page;
struct rocemu_mm;
struct rocemu_client;

/*
 * A QP's or CQ's doorbells as a program rings them itself, once
 * mlx5dv_init_obj handed them out (sched/direct.h). With a userfaultfd of
 * the program over its doorbell pages, an idle daemon write-protects them
 * and sleeps without polling: the program's next doorbell faults and wakes it.
 */
struct rocemu_direct {
	bool watched;
	bool has_uffd;			/* uffd is the program's userfaultfd over [addr, addr + len) */
	bool armed;			/* write-protected: the next doorbell faults into uffd */
	int uffd;
	uint64_t addr, len;		/* the doorbell pages in the program's address space */
	struct rocemu_client *owner;
};

struct rocemu_client {
	struct rocemu_emu *emu;
	struct rocemu_list node;	/* in emu->clients */
	int sock;
	pid_t pid;			/* SO_PEERCRED at accept: for logs; memory is reached through mm */
	uid_t uid;
	char comm[17];
	struct rocemu_charge charge;	/* limits.h: the connection and the descriptors it holds */
	struct rocemu_device *dev;	/* NULL until OPEN_DEVICE */
	struct rocemu_mm *mm;		/* its address space (mm.h); NULL until OPEN_DEVICE */
	int pidfd;			/* readable once the process exits; -1 if none */
	bool gone;			/* the process exited: its QPs answer and send nothing */
	int async_fd;			/* write end of the async event pipe */
	int kick_fd;			/* eventfd the client writes to wake the daemon */
	struct rocemu_shm context_page;
	uint32_t doorbell_seq_seen;	/* context_page->doorbell_seq at the last scan */
	unsigned int direct_objs;	/* its QPs and CQs watched for direct doorbells (direct.c) */
	struct rocemu_ufile *ufile;	/* its PDs, MRs and DMs; NULL until OPEN_DEVICE */
	struct rocemu_list channels, cqs, qps;
	struct rocemu_list mws;		/* memory windows */
	struct rocemu_list srqs;	/* shared receive queues */
	struct rocemu_list wqs;		/* receive work queues */
	struct rocemu_list rwq_ind_tables;	/* their RSS indirection tables */
	struct rocemu_list xrcd_opens;	/* opens of XRC domains */
	struct rocemu_list xrc_refs;	/* ibv_open_qp references to XRC targets */
	struct rocemu_list reserved_qpns;	/* QPNs it reserved (reserved_qpn.c) */
	struct rocemu_list flows;	/* steering rules it made (eth/flow.c) */
	struct rocemu_text_pages report;	/* the STATUS/STATS snapshot being read */
	struct rocemu_cm_file *ucma;	/* after UCMA_OPEN: the rdma_cm file it is (cm/ucma.c) */
	int req_fd;			/* the fd sent with the request being served, else -1 */
};

/*
 * The process of c is gone (its pidfd said so, or the DMA engine found it
 * gone): its QPs stop sending, as on a host that lost its process; its
 * objects go when the connection closes. Logged once.
 */
void rocemu_client_gone(struct rocemu_client *c);

/* Name for logs: the device name, or "-" before OPEN_DEVICE. */
const char *rocemu_client_dev_name(const struct rocemu_client *c);

/* The context page c shares with its shim (rocemu/ctrl.h). */
static inline struct rocemu_context_page *rocemu_client_page(const struct rocemu_client *c)
{
	return c->context_page.addr;
}

/*
 * A QP entered ERR (+1) or left it or went (-1), counted on emu. Receives
 * need the daemon only to be flushed in ERR, so while no QP is there a
 * receive doorbell does not wake a sleeping daemon (context page recv_kick).
 */
void rocemu_emu_qp_errors(struct rocemu_emu *emu, int delta);

/*
 * A QP or CQ of c, handed out by mlx5dv_init_obj, has its doorbells
 * watched from now on (sched/direct.h), or no more (it goes): *watched is
 * the object's own mark, counted on c and its emu. Either is a no-op twice.
 */
void rocemu_client_watch_direct(struct rocemu_client *c, struct rocemu_direct *d);
void rocemu_client_unwatch_direct(struct rocemu_client *c, struct rocemu_direct *d);
/* d's userfaultfd, if any, closed: the object is polled from now on. */
void rocemu_client_direct_uffd_close(struct rocemu_client *c, struct rocemu_direct *d);

/*
 * Whether c's process has capability cap (<linux/capability.h>) in its
 * effective set, read from /proc/PID/status; false without a pidfd or once
 * it exited, so that a PID reused by another process never answers for it.
 */
bool rocemu_client_capable(const struct rocemu_client *c, unsigned int cap);

/* Learn at once when c's process exits, even while a child it forked holds the connection. */
void rocemu_client_watch_pid(struct rocemu_client *c);
void rocemu_client_unwatch_pid(struct rocemu_client *c);

#endif /* ROCEMU_EMULATOR_CLIENT_H */
