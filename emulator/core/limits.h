/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Per-client limits. Each process connected to the daemon has an account
 * (every connection of it, every device) that each object it creates is
 * charged to, as the kernel charges a uverbs object to the rdma cgroup of
 * its creator and pinned pages to its mm:
 *
 * - objects of each kind, counted against ROCEMU_LIMITS (EAGAIN past it,
 *   the rdma cgroup's errno) and, for PDs, MRs, CQs, QPs and SRQs, against
 *   the device's limits too (ENOMEM, a ConnectX's quota);
 * - the daemon's descriptors it holds (EMFILE past its share);
 * - the daemon's memory in its rings and device memory (ENOMEM past mem);
 * - pinned bytes, its rings and non-ODP MRs, against the RLIMIT_MEMLOCK it
 *   had when it connected, unless it has CAP_IPC_LOCK (ENOMEM past it, as
 *   ib_umem_get).
 *
 * An object keeps its charge (struct rocemu_charge) and gives it back when
 * freed, so an account outlives the connection whose objects another
 * context of the same ufile still holds.
 */
#ifndef ROCEMU_EMULATOR_LIMITS_H
#define ROCEMU_EMULATOR_LIMITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emulator/base/list.h"

struct rocemu_emu;
struct rocemu_device;
struct rocemu_client;

enum rocemu_res {
	ROCEMU_RES_CONN,	/* control connections, anonymous or bound to a device */
	ROCEMU_RES_CTX,		/* device opens (their ufiles) */
	ROCEMU_RES_MM,		/* address spaces opened (/proc/PID/mem, a userfaultfd) */
	ROCEMU_RES_PD,
	ROCEMU_RES_MR,		/* MRs and indirect mkeys */
	ROCEMU_RES_MW,
	ROCEMU_RES_CQ,
	ROCEMU_RES_QP,
	ROCEMU_RES_SRQ,
	ROCEMU_RES_DM,
	ROCEMU_RES_XRCD,	/* opens of XRC domains */
	ROCEMU_RES_CHANNEL,	/* completion channels */
	ROCEMU_RES_CM_ID,
	ROCEMU_RES_KINDS
};

/* What an object costs beyond being one. */
struct rocemu_amount {
	uint32_t fds;		/* descriptors the daemon holds for it */
	uint64_t mem;		/* bytes of the daemon's memory (rings, device memory) */
	uint64_t pinned;	/* bytes pinned for it (rings, non-ODP MRs) */
};

/* A CQ's, QP's or SRQ's ring: the daemon's memory, and pinned, as the kernel pins a ring the provider allocates. */
static inline struct rocemu_amount rocemu_ring_amount(uint64_t bytes)
{
	return (struct rocemu_amount){ .mem = bytes, .pinned = bytes };
}

/* An object that costs nothing but itself. */
#define ROCEMU_OBJ_ONLY ((struct rocemu_amount){ 0 })

#define ROCEMU_LIMIT_NONE UINT64_MAX

struct rocemu_limits {
	uint64_t objs[ROCEMU_RES_KINDS];
	uint64_t fds;		/* 0 until the daemon knows its own descriptor limit */
	uint64_t mem;
};

struct rocemu_account {
	struct rocemu_list node;	/* in emu->accounts */
	struct rocemu_emu *emu;
	pid_t pid;
	char comm[17];
	unsigned int charges;		/* it goes with the last */
	uint64_t objs[ROCEMU_RES_KINDS];
	struct rocemu_amount used;
	uint64_t memlock;		/* RLIMIT_MEMLOCK at connect; ROCEMU_LIMIT_NONE: exempt */
};

struct rocemu_charge {
	struct rocemu_account *acct;	/* NULL: nothing charged */
	struct rocemu_device *dev;	/* whose count holds it, or NULL */
	struct rocemu_amount amt;
	enum rocemu_res kind;
};

/*
 * The defaults: a share of each device limit, 1 GiB of memory, and a
 * descriptor share set once the daemon knows its limit.
 */
void rocemu_limits_default(struct rocemu_limits *l);
/*
 * Parse ROCEMU_LIMITS (`key=value,...`, keys as rocemu(7) lists, values a
 * number, with K, M or G for mem, or `max`) over l. Returns 0, or -EINVAL
 * with a one-line reason in err.
 */
int rocemu_limits_parse(const char *spec, struct rocemu_limits *l, char *err, size_t errlen);
/*
 * Raise the daemon's RLIMIT_NOFILE to its hard limit and, unless set,
 * give each client a quarter of it. Returns the daemon's limit.
 */
uint64_t rocemu_limits_fds_setup(struct rocemu_limits *l);

/* The account of process pid (comm for logs), made when it has none. NULL when out of memory. */
struct rocemu_account *rocemu_account_of(struct rocemu_emu *emu, pid_t pid, const char *comm);

/*
 * Charge one object of kind with amt to a (and dev's count when dev is
 * not NULL) into ch. Returns 0, or -ENOMEM (device limit, memory,
 * memlock), -EAGAIN (objects) or -EMFILE (descriptors) and nothing
 * charged; an account left with no charge goes.
 */
int rocemu_charge_account(struct rocemu_account *a, struct rocemu_device *dev,
			  struct rocemu_charge *ch, enum rocemu_res kind, struct rocemu_amount amt);
/* rocemu_charge_account to c's account and device. */
int rocemu_charge(const struct rocemu_client *c, struct rocemu_charge *ch, enum rocemu_res kind,
		  struct rocemu_amount amt);
/* Make ch's amount amt (a resize, a new translation): as rocemu_charge, unchanged on failure. */
int rocemu_charge_change(struct rocemu_charge *ch, struct rocemu_amount amt);
/* Give back what ch holds (nothing when it holds nothing). */
void rocemu_uncharge(struct rocemu_charge *ch);

/* What a holds, for `rocemu status`: "fds N mem N pinned N of MEMLOCK conn N ctx N pd N ...". */
void rocemu_account_describe(const struct rocemu_account *a, char *buf, size_t len);

#endif /* ROCEMU_EMULATOR_LIMITS_H */
