/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/limits.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <linux/capability.h>

#include "emulator/core/client.h"
#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "rocemu/log.h"

#define GIB (1ull << 30)

/* Each kind's ROCEMU_LIMITS key, default per client and device limit (0: none). */
static const struct {
	const char *key;
	uint64_t def;
	uint32_t device_max;
} kinds[ROCEMU_RES_KINDS] = {
	[ROCEMU_RES_CONN] = { "conn", 256, 0 },
	[ROCEMU_RES_CTX] = { "ctx", 256, 0 },
	[ROCEMU_RES_MM] = { "mm", 16, 0 },
	[ROCEMU_RES_PD] = { "pd", ROCEMU_MAX_PD / 2, ROCEMU_MAX_PD },
	[ROCEMU_RES_MR] = { "mr", ROCEMU_MAX_MR / 2, ROCEMU_MAX_MR },
	[ROCEMU_RES_MW] = { "mw", ROCEMU_MAX_MW / 2, 0 },
	[ROCEMU_RES_CQ] = { "cq", ROCEMU_MAX_CQ / 2, ROCEMU_MAX_CQ },
	[ROCEMU_RES_QP] = { "qp", ROCEMU_MAX_QP / 2, ROCEMU_MAX_QP },
	[ROCEMU_RES_SRQ] = { "srq", ROCEMU_MAX_SRQ / 2, ROCEMU_MAX_SRQ },
	[ROCEMU_RES_DM] = { "dm", 256, 0 },
	[ROCEMU_RES_XRCD] = { "xrcd", 4096, 0 },
	[ROCEMU_RES_CHANNEL] = { "channel", 4096, 0 },
	[ROCEMU_RES_CM_ID] = { "cm_id", 16384, 0 },
};

void rocemu_limits_default(struct rocemu_limits *l)
{
	for (unsigned int k = 0; k < ROCEMU_RES_KINDS; k++)
		l->objs[k] = kinds[k].def;
	l->fds = 0;
	l->mem = GIB;
}

/* A number, `max`, or for mem one with a K, M or G suffix. */
static int parse_value(const char *s, bool bytes, uint64_t *v)
{
	unsigned int shift = 0;
	char *end;

	if (!strcmp(s, "max")) {
		*v = ROCEMU_LIMIT_NONE;
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (bytes && *end)
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 64;
	if (errno || (shift && end[1]) || (!shift && *end) || shift == 64 ||
	    *v > ROCEMU_LIMIT_NONE >> shift)
		return -EINVAL;
	*v <<= shift;
	return 0;
}

/* The limit key names in l, or NULL. */
static uint64_t *limit_of(struct rocemu_limits *l, const char *key)
{
	if (!strcmp(key, "fds"))
		return &l->fds;
	if (!strcmp(key, "mem"))
		return &l->mem;
	for (unsigned int k = 0; k < ROCEMU_RES_KINDS; k++)
		if (!strcmp(key, kinds[k].key))
			return &l->objs[k];
	return NULL;
}

int rocemu_limits_parse(const char *spec, struct rocemu_limits *l, char *err, size_t errlen)
{
	char *copy, *entry, *save, *eq;
	uint64_t *limit;
	int ret = 0;

	if (!spec || !*spec)
		return 0;
	copy = strdup(spec);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (entry = strtok_r(copy, ",", &save); entry && !ret; entry = strtok_r(NULL, ",", &save)) {
		eq = strchr(entry, '=');
		if (eq)
			*eq = '\0';
		limit = limit_of(l, entry);
		if (!limit)
			snprintf(err, errlen, "\"%s\" is no limit (%s)", entry,
				 "conn ctx mm pd mr mw cq qp srq dm xrcd channel cm_id fds mem");
		else if (!eq || parse_value(eq + 1, limit == &l->mem, limit))
			snprintf(err, errlen, "%s: not a number%s or max", entry,
				 limit == &l->mem ? " of bytes (K, M, G)" : "");
		else
			continue;
		ret = -EINVAL;
	}
	free(copy);
	return ret;
}

uint64_t rocemu_limits_fds_setup(struct rocemu_limits *l)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		r.rlim_cur = r.rlim_max = 1024;
	/* A daemon serving every program of its user takes all the descriptors it may. */
	if (r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &r))
			getrlimit(RLIMIT_NOFILE, &r);
	}
	if (!l->fds)
		l->fds = r.rlim_cur / 4;
	return r.rlim_cur;
}

/* The number after `key` in /proc/PID/FILE, UINT64_MAX for "unlimited"; -1 when none. */
static int proc_field(pid_t pid, const char *file, const char *key, int base, uint64_t *v)
{
	char path[64], line[256];
	size_t n = strlen(key);
	int ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		char *p = line + n;

		if (strncmp(line, key, n))
			continue;
		p += strspn(p, " \t");
		if (!strncmp(p, "unlimited", 9)) {
			*v = UINT64_MAX;
			ret = 0;
		} else if (isxdigit((unsigned char)*p)) {
			*v = strtoull(p, NULL, base);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/*
 * What pid may pin: its RLIMIT_MEMLOCK, none with CAP_IPC_LOCK (as
 * ib_umem_get). A process whose /proc cannot be read (another PID
 * namespace) is held to the daemon's limits only.
 */
static uint64_t memlock_of(pid_t pid)
{
	uint64_t caps, limit;

	if (proc_field(pid, "status", "CapEff:", 16, &caps) ||
	    proc_field(pid, "limits", "Max locked memory", 10, &limit))
		return ROCEMU_LIMIT_NONE;
	return caps & (1ull << CAP_IPC_LOCK) ? ROCEMU_LIMIT_NONE : limit;
}

struct rocemu_account *rocemu_account_of(struct rocemu_emu *emu, pid_t pid, const char *comm)
{
	struct rocemu_account *a;

	rocemu_list_for_each(a, &emu->accounts, struct rocemu_account, node)
		if (a->pid == pid)
			return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->emu = emu;
	a->pid = pid;
	snprintf(a->comm, sizeof(a->comm), "%s", comm);
	a->memlock = memlock_of(pid);
	rocemu_list_add_tail(&emu->accounts, &a->node);
	return a;
}

static void account_put_if_unused(struct rocemu_account *a)
{
	if (a->charges)
		return;
	rocemu_list_del(&a->node);
	free(a);
}

/* used + more - less within limit (every figure at most ROCEMU_LIMIT_NONE). */
static bool fits(uint64_t used, uint64_t more, uint64_t less, uint64_t limit)
{
	uint64_t rest = used - less;

	return more <= limit && rest <= limit - more;
}

/* Would a hold amt in place of old? 0 or the errno the kernel gives. */
static int amount_check(const struct rocemu_account *a, const struct rocemu_amount *amt,
			const struct rocemu_amount *old, const char **what)
{
	const struct rocemu_limits *l = &a->emu->limits;

	if (!fits(a->used.fds, amt->fds, old->fds, l->fds)) {
		*what = "fds";
		return -EMFILE;
	}
	if (!fits(a->used.mem, amt->mem, old->mem, l->mem)) {
		*what = "mem";
		return -ENOMEM;
	}
	if (!fits(a->used.pinned, amt->pinned, old->pinned, a->memlock)) {
		*what = "RLIMIT_MEMLOCK";
		return -ENOMEM;
	}
	return 0;
}

static void amount_move(struct rocemu_account *a, const struct rocemu_amount *add,
			const struct rocemu_amount *sub)
{
	a->used.fds = a->used.fds - sub->fds + add->fds;
	a->used.mem = a->used.mem - sub->mem + add->mem;
	a->used.pinned = a->used.pinned - sub->pinned + add->pinned;
}

static int refused(const struct rocemu_account *a, enum rocemu_res kind, const char *what,
		   int err)
{
	rocemu_log(ROCEMU_LOG_INFO, "pid %d (%s): %s refused: %s limit (%s)", (int)a->pid, a->comm,
		   kinds[kind].key, what, strerror(-err));
	return err;
}

int rocemu_charge_account(struct rocemu_account *a, struct rocemu_device *dev,
			  struct rocemu_charge *ch, enum rocemu_res kind, struct rocemu_amount amt)
{
	static const struct rocemu_amount none;
	const char *what = NULL;
	int err = 0;

	if (dev && kinds[kind].device_max && dev->objs[kind] >= kinds[kind].device_max) {
		what = "device";
		err = -ENOMEM;
	} else if (a->objs[kind] >= a->emu->limits.objs[kind]) {
		what = kinds[kind].key;
		err = -EAGAIN;
	} else {
		err = amount_check(a, &amt, &none, &what);
	}
	if (err) {
		refused(a, kind, what, err);
		account_put_if_unused(a);
		return err;
	}
	*ch = (struct rocemu_charge){ .acct = a, .dev = dev, .amt = amt, .kind = kind };
	a->charges++;
	a->objs[kind]++;
	amount_move(a, &amt, &none);
	if (dev)
		dev->objs[kind]++;
	return 0;
}

int rocemu_charge(const struct rocemu_client *c, struct rocemu_charge *ch, enum rocemu_res kind,
		  struct rocemu_amount amt)
{
	return rocemu_charge_account(c->charge.acct, c->dev, ch, kind, amt);
}

int rocemu_charge_change(struct rocemu_charge *ch, struct rocemu_amount amt)
{
	const char *what;
	int err = amount_check(ch->acct, &amt, &ch->amt, &what);

	if (err)
		return refused(ch->acct, ch->kind, what, err);
	amount_move(ch->acct, &amt, &ch->amt);
	ch->amt = amt;
	return 0;
}

void rocemu_uncharge(struct rocemu_charge *ch)
{
	static const struct rocemu_amount none;
	struct rocemu_account *a = ch->acct;

	if (!a)
		return;
	a->objs[ch->kind]--;
	amount_move(a, &none, &ch->amt);
	if (ch->dev)
		ch->dev->objs[ch->kind]--;
	ch->acct = NULL;
	a->charges--;
	account_put_if_unused(a);
}

void rocemu_account_describe(const struct rocemu_account *a, char *buf, size_t len)
{
	char memlock[24] = "no limit";
	size_t n;

	if (a->memlock != ROCEMU_LIMIT_NONE)
		snprintf(memlock, sizeof(memlock), "%" PRIu64, a->memlock);
	n = (size_t)snprintf(buf, len, "fds %u mem %" PRIu64 " pinned %" PRIu64 " of %s",
			     a->used.fds, a->used.mem, a->used.pinned, memlock);
	for (unsigned int k = 0; k < ROCEMU_RES_KINDS && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, " %s %" PRIu64, kinds[k].key, a->objs[k]);
}
