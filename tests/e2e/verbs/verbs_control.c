/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control path of an emulated device through the public verbs API
 * only, as any application sees it: device and port queries, the device
 * files programs probe, PD, MR, CQ and completion channel, an RC QP walked
 * through every legal transition, and the errno of every illegal
 * transition and bad argument (a failed call must leave the object as it
 * was).
 *
 *   verbs_control DEVICE          run the checks: one line each, exit 0 / 1
 *   verbs_control --hold DEVICE   make PD, MR, CQ, QP (INIT), print "ready", sleep
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#define NSTATES 7		/* RESET .. ERR */
#define HOLD_SECONDS 120	/* the test kills us long before */

static int failures;

static void __attribute__((format(printf, 3, 4)))
check(bool ok, int err, const char *fmt, ...)
{
	va_list ap;

	printf(ok ? "ok: " : "FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok) {
		printf(" errno=%d (%s)", err, strerror(err));
		failures++;
	}
	putchar('\n');
}

/* A constructor that must fail: NULL with errno want. */
#define check_null_errno(obj, want, ...) \
	do { \
		errno = 0; \
		void *obj_ = (obj); \
		int err_ = errno; \
		check(!obj_ && err_ == (want), err_, __VA_ARGS__); \
	} while (0)

static const char *const state_names[NSTATES] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

/* IBTA 10.3.1 as the kernel's qp_state_table has it (RESET -> ERR is not a transition). */
static const bool legal[NSTATES][NSTATES] = {
	/*                   RESET  INIT   RTR    RTS    SQD    SQE    ERR */
	[IBV_QPS_RESET] = { true,  true,  false, false, false, false, false },
	[IBV_QPS_INIT]  = { true,  true,  true,  false, false, false, true  },
	[IBV_QPS_RTR]   = { true,  false, false, true,  false, false, true  },
	[IBV_QPS_RTS]   = { true,  false, false, true,  true,  false, true  },
	[IBV_QPS_SQD]   = { true,  false, false, true,  true,  false, true  },
	[IBV_QPS_SQE]   = { true,  false, false, true,  false, false, true  },
	[IBV_QPS_ERR]   = { true,  false, false, false, false, false, true  },
};

struct dev {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

/* ---- QP helpers ---- */

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_UNKNOWN;
	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return IBV_QPS_UNKNOWN;
	return attr.qp_state;
}

static const char *state_name(enum ibv_qp_state s)
{
	return (unsigned)s < NSTATES ? state_names[s] : "UNKNOWN";
}

/*
 * Attributes that take an RC QP from cur to next: everything required,
 * nothing forbidden, values valid. Returns the mask.
 */
static int transition_attrs(const struct dev *d, struct ibv_qp *qp, enum ibv_qp_state cur,
			    enum ibv_qp_state next, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = next;
	switch (next) {
	case IBV_QPS_INIT:
		if (cur == IBV_QPS_INIT) {
			a->qp_access_flags = IBV_ACCESS_REMOTE_READ;
			return IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
		}
		a->pkey_index = 0;
		a->port_num = 1;
		a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ;
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		a->path_mtu = IBV_MTU_1024;
		a->dest_qp_num = qp->qp_num;	/* connected to itself */
		a->rq_psn = 0x123;
		a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = 12;
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = d->gid;
		a->ah_attr.grh.sgid_index = 0;
		a->ah_attr.grh.hop_limit = 64;
		a->ah_attr.port_num = 1;
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	case IBV_QPS_RTS:
		if (cur == IBV_QPS_RTS || cur == IBV_QPS_SQD) {
			a->min_rnr_timer = 14;
			return IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER;
		}
		a->sq_psn = 0x456;
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->max_rd_atomic = 1;
		return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	case IBV_QPS_SQD:
		if (cur == IBV_QPS_SQD) {
			a->timeout = 15;
			return IBV_QP_STATE | IBV_QP_TIMEOUT;
		}
		return IBV_QP_STATE;
	default:		/* RESET, ERR, SQE: the state alone */
		return IBV_QP_STATE;
	}
}

/* The way from RESET to each state. */
static const enum ibv_qp_state path_to[NSTATES][5] = {
	[IBV_QPS_RESET] = { IBV_QPS_RESET },
	[IBV_QPS_INIT] = { IBV_QPS_RESET, IBV_QPS_INIT },
	[IBV_QPS_RTR] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR },
	[IBV_QPS_RTS] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS },
	[IBV_QPS_SQD] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD },
	[IBV_QPS_ERR] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_ERR },
};
static const int path_len[NSTATES] = {
	[IBV_QPS_RESET] = 1, [IBV_QPS_INIT] = 2, [IBV_QPS_RTR] = 3, [IBV_QPS_RTS] = 4,
	[IBV_QPS_SQD] = 5, [IBV_QPS_ERR] = 3,
};

static int modify(const struct dev *d, struct ibv_qp *qp, enum ibv_qp_state cur,
		  enum ibv_qp_state next)
{
	struct ibv_qp_attr a;
	int mask = transition_attrs(d, qp, cur, next, &a);

	return ibv_modify_qp(qp, &a, mask);
}

/* Bring qp to state (through RESET); true on success. */
static bool move_to(const struct dev *d, struct ibv_qp *qp, enum ibv_qp_state state)
{
	enum ibv_qp_state cur = qp_state(qp);
	int i;

	for (i = 0; i < path_len[state]; i++) {
		if (modify(d, qp, cur, path_to[state][i]))
			return false;
		cur = path_to[state][i];
	}
	return qp_state(qp) == state;
}

/* ---- device, port ---- */

static void check_device(struct dev *d)
{
	union ibv_gid gid;
	uint16_t pkey = 0;
	int rc;

	rc = ibv_query_device(d->ctx, &d->attr);
	check(rc == 0, rc, "query_device");
	check(d->attr.phys_port_cnt == 1, 0, "phys_port_cnt 1 (%u)", d->attr.phys_port_cnt);
	check(d->attr.vendor_id == 0x02c9 && d->attr.vendor_part_id == 4119, 0,
	      "ConnectX-5 identity (vendor 0x%x part %u)", d->attr.vendor_id,
	      d->attr.vendor_part_id);
	check(d->attr.max_qp_wr > 0 && d->attr.max_sge > 0 && d->attr.max_cqe > 0, 0,
	      "limits max_qp_wr %d max_sge %d max_cqe %d", d->attr.max_qp_wr, d->attr.max_sge,
	      d->attr.max_cqe);
	/* What it claims it has, it must be able to give: windows, atomics. */
	check((d->attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && d->attr.max_mw > 0 &&
	      d->attr.atomic_cap == IBV_ATOMIC_HCA, 0,
	      "memory windows (type 2B, max_mw %d) and atomics offered", d->attr.max_mw);

	rc = ibv_query_port(d->ctx, 1, &d->port);
	check(rc == 0, rc, "query_port 1");
	check(d->port.state == IBV_PORT_ACTIVE, 0, "port ACTIVE (%d)", d->port.state);
	check(d->port.link_layer == IBV_LINK_LAYER_ETHERNET, 0, "link layer Ethernet");
	check(d->port.gid_tbl_len == 256 && d->port.pkey_tbl_len == 1, 0,
	      "gid_tbl_len 256 pkey_tbl_len 1 (%d, %u)", d->port.gid_tbl_len,
	      d->port.pkey_tbl_len);
	rc = ibv_query_port(d->ctx, 2, &d->port);
	check(rc == EINVAL, rc, "query_port 2 -> EINVAL");
	ibv_query_port(d->ctx, 1, &d->port);

	rc = ibv_query_gid(d->ctx, 1, 0, &d->gid);
	check(rc == 0 && d->gid.raw[10] == 0xff && d->gid.raw[11] == 0xff, errno,
	      "query_gid 0 is ::ffff:%u.%u.%u.%u", d->gid.raw[12], d->gid.raw[13],
	      d->gid.raw[14], d->gid.raw[15]);
	rc = ibv_query_gid(d->ctx, 1, 256, &gid);
	check(rc == -1, errno, "query_gid 256 -> -1");
	rc = ibv_query_pkey(d->ctx, 1, 0, &pkey);
	check(rc == 0 && pkey == 0xffff, errno, "query_pkey 0 -> 0xffff (0x%x)", pkey);
	rc = ibv_query_pkey(d->ctx, 1, 1, &pkey);
	check(rc == -1, errno, "query_pkey 1 -> -1");
}

/* The first line of dir/name into buf ("" when unreadable), by open() as UCX reads it. */
static void read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * The PCI function UCX finds two levels above the real path of ibdev_path
 * (.../<bdf>/infiniband/<dev>) has a ConnectX-5's ids, so that UCX takes its
 * mlx5 transports; /sys/class/infiniband/<dev>/device is the same function.
 */
static void check_pci_identity(struct dev *d)
{
	char real[PATH_MAX], class_dir[PATH_MAX], vendor[32], device[32], speed[32];
	char *slash;
	bool ok;

	if (!realpath(d->ctx->device->ibdev_path, real)) {
		check(false, errno, "realpath %s", d->ctx->device->ibdev_path);
		return;
	}
	slash = strrchr(real, '/');
	ok = slash && slash - real > 11 && !strncmp(slash - 11, "/infiniband", 11);
	check(ok, 0, "ibdev_path resolves to <pci function>/infiniband/<dev> (%s)", real);
	if (!ok)
		return;
	slash[-11] = '\0';
	read_line(real, "vendor", vendor, sizeof(vendor));
	read_line(real, "device", device, sizeof(device));
	read_line(real, "current_link_speed", speed, sizeof(speed));
	check(!strcmp(vendor, "0x15b3") && !strcmp(device, "0x1017") && speed[0], 0,
	      "PCI function %s: vendor %s device %s (ConnectX-5), link %s", strrchr(real, '/') + 1,
	      vendor, device, speed);
	snprintf(class_dir, sizeof(class_dir), "/sys/class/infiniband/%s/device",
		 ibv_get_device_name(d->ctx->device));
	read_line(class_dir, "device", device, sizeof(device));
	check(!strcmp(device, "0x1017"), 0, "%s/device reads 0x1017 (%s)", class_dir, device);
}

/* The files programs probe: Open MPI reads the driver behind a device, as on a ConnectX. */
static void check_device_files(struct dev *d)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *driver;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/driver",
		 ibv_get_device_name(d->ctx->device));
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	driver = strrchr(link, '/');
	check(n > 0 && driver && !strcmp(driver, "/mlx5_core"), errno,
	      "readlink %s -> .../mlx5_core (%s)", path, link);
	snprintf(path, sizeof(path), "/dev/infiniband/%s", d->ctx->device->dev_name);
	n = readlink(path, link, sizeof(link));
	check(n == -1 && errno == EINVAL, errno, "readlink %s -> EINVAL (a device node, not a link)",
	      path);
}

/* ---- PD, MR ---- */

static void check_mr(struct dev *d)
{
	const size_t len = 2 * 4096;
	struct ibv_mr *mr;
	void *buf, *ro, *gone;
	int rc;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* A read-only buffer followed by an inaccessible one. */
	ro = mmap(NULL, 2 * len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || ro == MAP_FAILED || gone == MAP_FAILED ||
	    mprotect((char *)ro + len, len, PROT_NONE)) {
		check(false, errno, "mmap test buffers");
		return;
	}
	munmap(gone, len);

	mr = ibv_reg_mr(d->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	check(mr && mr->lkey && mr->lkey == mr->rkey && mr->addr == buf && mr->length == len,
	      errno, "reg_mr all access (lkey 0x%x rkey 0x%x)", mr ? mr->lkey : 0,
	      mr ? mr->rkey : 0);

	rc = mr ? ibv_dealloc_pd(d->pd) : 0;
	check(rc == EBUSY, rc, "dealloc_pd with an MR -> EBUSY");

	check_null_errno(ibv_reg_mr(d->pd, buf, len, IBV_ACCESS_REMOTE_WRITE), EINVAL,
			 "reg_mr REMOTE_WRITE without LOCAL_WRITE -> EINVAL");
	check_null_errno(ibv_reg_mr(d->pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC), EINVAL,
			 "reg_mr REMOTE_ATOMIC without LOCAL_WRITE -> EINVAL");
	check_null_errno(ibv_reg_mr(d->pd, buf, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL,
			 "reg_mr length 0 -> EINVAL");
	check_null_errno(ibv_reg_mr(d->pd, gone, len, 0), EFAULT,
			 "reg_mr unmapped memory -> EFAULT");
	check_null_errno(ibv_reg_mr(d->pd, ro, 2 * len, 0), EFAULT,
			 "reg_mr running into a PROT_NONE page -> EFAULT");
	check_null_errno(ibv_reg_mr(d->pd, ro, len, IBV_ACCESS_LOCAL_WRITE), EFAULT,
			 "reg_mr read-only mapping with LOCAL_WRITE -> EFAULT");
	{
		struct ibv_mr *ro_mr = ibv_reg_mr(d->pd, ro, len, IBV_ACCESS_REMOTE_READ);

		check(ro_mr != NULL, errno, "reg_mr read-only mapping, REMOTE_READ");
		if (ro_mr) {
			rc = ibv_dereg_mr(ro_mr);
			check(rc == 0, rc, "dereg_mr read-only MR");
		}
	}
	if (mr) {
		rc = ibv_dereg_mr(mr);
		check(rc == 0, rc, "dereg_mr");
	}
	munmap(buf, len);
	munmap(ro, 2 * len);
}

/* ---- CQ, completion channel ---- */

static void check_cq(struct dev *d)
{
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 32 };
	struct ibv_comp_channel *ch;
	struct ibv_cq_ex *cq_ex;
	struct ibv_cq *cq;
	int rc;

	cq = ibv_create_cq(d->ctx, 1, NULL, NULL, 0);
	check(cq && cq->cqe >= 1, errno, "create_cq 1 (cqe %d)", cq ? cq->cqe : -1);
	if (cq) {
		rc = ibv_resize_cq(cq, 100);
		check(rc == 0 && cq->cqe >= 100, rc, "resize_cq 100 (cqe %d)", cq->cqe);
		rc = ibv_destroy_cq(cq);
		check(rc == 0, rc, "destroy_cq");
	}

	ch = ibv_create_comp_channel(d->ctx);
	check(ch && ch->fd >= 0, errno, "create_comp_channel");
	if (ch) {
		cq = ibv_create_cq(d->ctx, 16, NULL, ch, 0);
		check(cq && cq->channel == ch && cq->cqe >= 16, errno, "create_cq with channel");
		rc = ibv_destroy_comp_channel(ch);
		check(rc == EBUSY, rc, "destroy_comp_channel with a CQ -> EBUSY");
		if (cq) {
			rc = ibv_req_notify_cq(cq, 0);
			check(rc == 0, rc, "req_notify_cq");
			rc = ibv_destroy_cq(cq);
			check(rc == 0, rc, "destroy_cq with channel");
		}
		rc = ibv_destroy_comp_channel(ch);
		check(rc == 0, rc, "destroy_comp_channel");
	}

	cq_ex = ibv_create_cq_ex(d->ctx, &cq_attr);
	check(cq_ex && ibv_cq_ex_to_cq(cq_ex)->cqe >= 32, errno, "create_cq_ex 32");
	if (cq_ex) {
		rc = ibv_destroy_cq(ibv_cq_ex_to_cq(cq_ex));
		check(rc == 0, rc, "destroy_cq of create_cq_ex");
	}

	check_null_errno(ibv_create_cq(d->ctx, 0, NULL, NULL, 0), EINVAL, "create_cq 0 -> EINVAL");
	check_null_errno(ibv_create_cq(d->ctx, d->attr.max_cqe + 1, NULL, NULL, 0), EINVAL,
			 "create_cq max_cqe + 1 -> EINVAL");
	check_null_errno(ibv_create_cq(d->ctx, 16, NULL, NULL, d->ctx->num_comp_vectors), EINVAL,
			 "create_cq comp_vector num_comp_vectors -> EINVAL");
	check_null_errno(ibv_create_cq(d->ctx, 16, NULL, NULL, -1), EINVAL,
			 "create_cq comp_vector -1 -> EINVAL");
}

/* ---- QP creation ---- */

static void rc_qp_init_attr(struct dev *d, struct ibv_qp_init_attr *init)
{
	memset(init, 0, sizeof(*init));
	init->send_cq = d->cq;
	init->recv_cq = d->cq;
	init->qp_type = IBV_QPT_RC;
	init->cap.max_send_wr = 10;
	init->cap.max_recv_wr = 10;
	init->cap.max_send_sge = 2;
	init->cap.max_recv_sge = 3;
	init->cap.max_inline_data = 60;
}

static struct ibv_qp *create_rc_qp(struct dev *d, struct ibv_qp_init_attr *init)
{
	rc_qp_init_attr(d, init);
	return ibv_create_qp(d->pd, init);
}

static const struct bad_create {
	const char *what;
	enum ibv_qp_type type;
	int field;		/* which cap to spoil */
	int want;
} bad_creates[] = {
	{ "max_send_wr > max_qp_wr", IBV_QPT_RC, 0, EINVAL },
	{ "max_recv_wr > max_qp_wr", IBV_QPT_RC, 1, EINVAL },
	{ "max_send_sge > max_sge", IBV_QPT_RC, 2, EINVAL },
	{ "max_recv_sge > max_sge", IBV_QPT_RC, 3, EINVAL },
	{ "max_inline_data 4096", IBV_QPT_RC, 4, EINVAL },
};

static void check_qp_create(struct dev *d)
{
	struct ibv_qp_init_attr init, asked;
	struct ibv_qp *qp;
	size_t i;
	int rc;

	qp = create_rc_qp(d, &init);
	asked = init;
	check(qp != NULL, errno, "create_qp RC");
	if (!qp)
		return;
	check(qp->qp_num > 0 && qp->qp_num < (1u << 24), 0, "qp_num 0x%06x", qp->qp_num);
	check(init.cap.max_send_wr >= asked.cap.max_send_wr &&
	      init.cap.max_recv_wr >= asked.cap.max_recv_wr &&
	      init.cap.max_send_sge >= asked.cap.max_send_sge &&
	      init.cap.max_recv_sge >= asked.cap.max_recv_sge &&
	      init.cap.max_inline_data >= asked.cap.max_inline_data, 0,
	      "caps written back >= asked (wr %u/%u sge %u/%u inline %u)",
	      init.cap.max_send_wr, init.cap.max_recv_wr, init.cap.max_send_sge,
	      init.cap.max_recv_sge, init.cap.max_inline_data);
	check(init.cap.max_send_wr <= (uint32_t)d->attr.max_qp_wr &&
	      init.cap.max_recv_wr <= (uint32_t)d->attr.max_qp_wr &&
	      init.cap.max_send_sge <= (uint32_t)d->attr.max_sge &&
	      init.cap.max_recv_sge <= (uint32_t)d->attr.max_sge &&
	      init.cap.max_inline_data <= 512, 0, "caps within device limits");
	check(qp_state(qp) == IBV_QPS_RESET, 0, "new QP in RESET");
	rc = ibv_destroy_cq(d->cq);
	check(rc == EBUSY, rc, "destroy_cq used by a QP -> EBUSY");
	rc = ibv_destroy_qp(qp);
	check(rc == 0, rc, "destroy_qp");

	for (i = 0; i < sizeof(bad_creates) / sizeof(bad_creates[0]); i++) {
		const struct bad_create *b = &bad_creates[i];

		rc_qp_init_attr(d, &init);
		init.qp_type = b->type;
		switch (b->field) {
		case 0: init.cap.max_send_wr = d->attr.max_qp_wr + 1; break;
		case 1: init.cap.max_recv_wr = d->attr.max_qp_wr + 1; break;
		case 2: init.cap.max_send_sge = d->attr.max_sge + 1; break;
		case 3: init.cap.max_recv_sge = d->attr.max_sge + 1; break;
		case 4: init.cap.max_inline_data = 4096; break;
		}
		errno = 0;
		qp = ibv_create_qp(d->pd, &init);
		check(!qp && errno == b->want, errno, "create_qp %s -> %s", b->what,
		      strerror(b->want));
		if (qp)
			ibv_destroy_qp(qp);
	}
}

/* ---- QP state machine ---- */

static void check_transition(const struct dev *d, struct ibv_qp *qp, enum ibv_qp_state cur,
			     enum ibv_qp_state next)
{
	enum ibv_qp_state now;
	int rc;

	if (!move_to(d, qp, cur)) {
		check(false, errno, "reach %s for %s -> %s", state_name(cur), state_name(cur),
		      state_name(next));
		return;
	}
	rc = modify(d, qp, cur, next);
	now = qp_state(qp);
	if (legal[cur][next])
		check(rc == 0 && now == next, rc, "%s -> %s (now %s)", state_name(cur),
		      state_name(next), state_name(now));
	else
		check(rc == EINVAL && now == cur, rc, "%s -> %s refused with EINVAL, still %s",
		      state_name(cur), state_name(next), state_name(now));
}

/* Every (cur, next) pair an RC QP can be asked for; SQE is never entered by an RC QP. */
static void check_state_machine(const struct dev *d, struct ibv_qp *qp)
{
	int cur, next;

	for (cur = IBV_QPS_RESET; cur <= IBV_QPS_ERR; cur++)
		for (next = IBV_QPS_RESET; next <= IBV_QPS_ERR; next++)
			if (cur != IBV_QPS_SQE)
				check_transition(d, qp, cur, next);
}

/* The same state, asked without IBV_QP_STATE. */
static void check_mask_without_state(const struct dev *d, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .min_rnr_timer = 20 };
	struct ibv_qp_init_attr init;
	int rc;

	if (!move_to(d, qp, IBV_QPS_RTS)) {
		check(false, errno, "reach RTS");
		return;
	}
	rc = ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER);
	check(rc == 0 && qp_state(qp) == IBV_QPS_RTS, rc, "RTS modify without IBV_QP_STATE");
	memset(&a, 0, sizeof(a));
	rc = ibv_query_qp(qp, &a, IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_DEST_QPN, &init);
	check(rc == 0 && a.min_rnr_timer == 20 && a.sq_psn == 0x456 && a.dest_qp_num == qp->qp_num,
	      rc, "query_qp returns the attributes set (min_rnr_timer %u sq_psn 0x%x)",
	      a.min_rnr_timer, a.sq_psn);
}

/* A modify of cur -> next whose mask gains or loses one attribute. */
static const struct mask_case {
	const char *what;
	enum ibv_qp_state cur, next;
	int add, remove;
} mask_cases[] = {
	{ "RESET -> INIT without ACCESS_FLAGS", IBV_QPS_RESET, IBV_QPS_INIT, 0, IBV_QP_ACCESS_FLAGS },
	{ "RESET -> INIT without PORT", IBV_QPS_RESET, IBV_QPS_INIT, 0, IBV_QP_PORT },
	{ "INIT -> RTR without AV", IBV_QPS_INIT, IBV_QPS_RTR, 0, IBV_QP_AV },
	{ "INIT -> RTR without DEST_QPN", IBV_QPS_INIT, IBV_QPS_RTR, 0, IBV_QP_DEST_QPN },
	{ "RTR -> RTS without SQ_PSN", IBV_QPS_RTR, IBV_QPS_RTS, 0, IBV_QP_SQ_PSN },
	{ "RTR -> RTS without TIMEOUT", IBV_QPS_RTR, IBV_QPS_RTS, 0, IBV_QP_TIMEOUT },
	{ "RESET -> INIT with SQ_PSN", IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_SQ_PSN, 0 },
	{ "INIT -> RTR with TIMEOUT", IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_TIMEOUT, 0 },
	{ "RTR -> RTS with PATH_MTU", IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_PATH_MTU, 0 },
	{ "RTS -> SQD with ACCESS_FLAGS", IBV_QPS_RTS, IBV_QPS_SQD, IBV_QP_ACCESS_FLAGS, 0 },
	{ "INIT -> ERR with PORT", IBV_QPS_INIT, IBV_QPS_ERR, IBV_QP_PORT, 0 },
};

#define QP_FIELD(f) offsetof(struct ibv_qp_attr, f), sizeof(((struct ibv_qp_attr *)0)->f)

/* A valid transition with one attribute value out of range. */
static const struct value_case {
	const char *what;
	enum ibv_qp_state cur, next;
	size_t off, size;
	uint32_t value;
} value_cases[] = {
	{ "RESET -> INIT with port_num 2", IBV_QPS_RESET, IBV_QPS_INIT, QP_FIELD(port_num), 2 },
	{ "RESET -> INIT with pkey_index 1", IBV_QPS_RESET, IBV_QPS_INIT, QP_FIELD(pkey_index), 1 },
	{ "RESET -> INIT with an access flag no verbs header names", IBV_QPS_RESET, IBV_QPS_INIT,
	  QP_FIELD(qp_access_flags), IBV_ACCESS_LOCAL_WRITE | (1u << 12) },
	{ "INIT -> RTR with an AH without GRH", IBV_QPS_INIT, IBV_QPS_RTR, QP_FIELD(ah_attr.is_global), 0 },
	{ "INIT -> RTR with sgid_index 5", IBV_QPS_INIT, IBV_QPS_RTR, QP_FIELD(ah_attr.grh.sgid_index), 5 },
	{ "INIT -> RTR with dest_qp_num 2^24", IBV_QPS_INIT, IBV_QPS_RTR, QP_FIELD(dest_qp_num), 1u << 24 },
	{ "INIT -> RTR with min_rnr_timer 32", IBV_QPS_INIT, IBV_QPS_RTR, QP_FIELD(min_rnr_timer), 32 },
	{ "INIT -> RTR with max_dest_rd_atomic 17", IBV_QPS_INIT, IBV_QPS_RTR, QP_FIELD(max_dest_rd_atomic), 17 },
	{ "INIT -> RTR with path_mtu beyond 4096", IBV_QPS_INIT, IBV_QPS_RTR, QP_FIELD(path_mtu), IBV_MTU_4096 + 1 },
	{ "RTR -> RTS with timeout 32", IBV_QPS_RTR, IBV_QPS_RTS, QP_FIELD(timeout), 32 },
	{ "RTR -> RTS with retry_cnt 8", IBV_QPS_RTR, IBV_QPS_RTS, QP_FIELD(retry_cnt), 8 },
	{ "RTR -> RTS with rnr_retry 8", IBV_QPS_RTR, IBV_QPS_RTS, QP_FIELD(rnr_retry), 8 },
	{ "RTR -> RTS with max_rd_atomic 17", IBV_QPS_RTR, IBV_QPS_RTS, QP_FIELD(max_rd_atomic), 17 },
};

static void set_field(struct ibv_qp_attr *a, size_t off, size_t size, uint32_t value)
{
	unsigned char *p = (unsigned char *)a + off;

	switch (size) {
	case 1: *p = (uint8_t)value; break;
	case 2: { uint16_t v = (uint16_t)value; memcpy(p, &v, 2); break; }
	default: memcpy(p, &value, 4); break;
	}
}

static void check_refused(struct ibv_qp *qp, enum ibv_qp_state cur, struct ibv_qp_attr *a,
			  int mask, const char *what)
{
	enum ibv_qp_state now;
	int rc;

	rc = ibv_modify_qp(qp, a, mask);
	now = qp_state(qp);
	check(rc == EINVAL && now == cur, rc, "%s -> EINVAL, still %s", what, state_name(now));
}

static void check_bad_modifies(const struct dev *d, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	size_t i;
	int mask, rc;

	for (i = 0; i < sizeof(mask_cases) / sizeof(mask_cases[0]); i++) {
		const struct mask_case *c = &mask_cases[i];

		if (!move_to(d, qp, c->cur)) {
			check(false, errno, "reach %s for %s", state_name(c->cur), c->what);
			continue;
		}
		mask = transition_attrs(d, qp, c->cur, c->next, &a);
		check_refused(qp, c->cur, &a, (mask | c->add) & ~c->remove, c->what);
	}
	for (i = 0; i < sizeof(value_cases) / sizeof(value_cases[0]); i++) {
		const struct value_case *c = &value_cases[i];

		if (!move_to(d, qp, c->cur)) {
			check(false, errno, "reach %s for %s", state_name(c->cur), c->what);
			continue;
		}
		mask = transition_attrs(d, qp, c->cur, c->next, &a);
		set_field(&a, c->off, c->size, c->value);
		check_refused(qp, c->cur, &a, mask, c->what);
	}
	/* path_mtu above the port's active MTU, when there is an IB MTU above it. */
	if (d->port.active_mtu < IBV_MTU_4096 && move_to(d, qp, IBV_QPS_INIT)) {
		mask = transition_attrs(d, qp, IBV_QPS_INIT, IBV_QPS_RTR, &a);
		a.path_mtu = d->port.active_mtu + 1;
		check_refused(qp, IBV_QPS_INIT, &a, mask, "INIT -> RTR with path_mtu above active_mtu");
	}
	/* Flags that mean something only to MRs are taken, as mlx5 takes them. */
	if (move_to(d, qp, IBV_QPS_RESET)) {
		mask = transition_attrs(d, qp, IBV_QPS_RESET, IBV_QPS_INIT, &a);
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_ON_DEMAND | IBV_ACCESS_ZERO_BASED;
		rc = ibv_modify_qp(qp, &a, mask);
		check(rc == 0 && qp_state(qp) == IBV_QPS_INIT, rc,
		      "RESET -> INIT with IBV_ACCESS_ON_DEMAND and ZERO_BASED among the access flags");
	}
}

/* post_send, the wr API and post_recv in each state, as mlx5 gates them (qp_state_max_gs). */
static void check_posting_in_state(struct ibv_qp *qp, enum ibv_qp_state state, struct ibv_sge *sge)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = sge, .num_sge = 1 }, *rbad = NULL;
	int rc;

	rc = ibv_post_send(qp, &swr, &sbad);
	check(rc == ENOMEM && sbad == &swr, rc, "post_send in %s -> ENOMEM at that WR",
	      state_name(state));
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, sge->lkey, sge->addr, sge->length);
	rc = ibv_wr_complete(qpx);
	check(rc == EINVAL, rc, "wr_complete in %s -> EINVAL", state_name(state));
	rc = ibv_post_recv(qp, &rwr, &rbad);
	if (state == IBV_QPS_RESET)
		check(rc == EINVAL && rbad == &rwr, rc, "post_recv in RESET -> EINVAL at that WR");
	else
		check(rc == 0, rc, "post_recv in %s", state_name(state));
}

static void check_posting_states(struct dev *d)
{
	static char buf[64];
	struct ibv_qp_init_attr init;
	struct ibv_qp_init_attr_ex attr = { .comp_mask = IBV_QP_INIT_ATTR_PD |
						       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					    .send_ops_flags = IBV_QP_EX_WITH_SEND, .pd = d->pd };
	struct ibv_mr *mr = ibv_reg_mr(d->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = sizeof(buf) };
	static const enum ibv_qp_state states[] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR };
	struct ibv_qp *qp;
	size_t i;

	rc_qp_init_attr(d, &init);
	attr.send_cq = init.send_cq;
	attr.recv_cq = init.recv_cq;
	attr.cap = init.cap;
	attr.qp_type = init.qp_type;
	qp = mr ? ibv_create_qp_ex(d->ctx, &attr) : NULL;
	check(qp != NULL, errno, "create_qp_ex (send ops: SEND) for posting in each state");
	if (!qp)
		goto out;
	sge.lkey = mr->lkey;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (move_to(d, qp, states[i]))
			check_posting_in_state(qp, states[i], &sge);
		else
			check(false, errno, "reach %s to post there", state_name(states[i]));
	check(ibv_destroy_qp(qp) == 0, errno, "destroy the QP posted to in each state");
out:
	if (mr)
		ibv_dereg_mr(mr);
}

static void check_qp_states(struct dev *d)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp = create_rc_qp(d, &init);

	check(qp != NULL, errno, "create_qp for the state machine");
	if (!qp)
		return;
	check_state_machine(d, qp);
	check_mask_without_state(d, qp);
	check_bad_modifies(d, qp);
	check(ibv_destroy_qp(qp) == 0, errno, "destroy_qp");
}

/* ---- what the device does not offer: refused, never a crash ---- */

static void check_not_offered(struct dev *d)
{
	struct ibv_srq_init_attr_ex xrc_srq = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.pd = d->pd,
	};
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp = create_rc_qp(d, &init);
	struct ibv_ece ece;
	union ibv_gid mgid = { .raw = { 0xff, 0x0e } };
	int rc;

	check_null_errno(ibv_create_srq_ex(d->ctx, &xrc_srq), EINVAL,
			 "create_srq_ex XRC without its domain and CQ -> EINVAL");
	check_null_errno(ibv_create_ah(d->pd, &ah_attr), EINVAL, "create_ah, no RoCE GID -> EINVAL");
	check_null_errno(ibv_import_pd(d->ctx, 0xfffffff0), ENOENT, "import_pd of no PD -> ENOENT");
	check_null_errno(ibv_reg_dmabuf_mr(d->pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE),
			 EOPNOTSUPP, "reg_dmabuf_mr -> EOPNOTSUPP");
	check(qp != NULL, errno, "create_qp for the QP verbs not offered");
	if (!qp)
		return;
	rc = ibv_attach_mcast(qp, &mgid, 0);
	check(rc == EINVAL, rc, "attach_mcast on an RC QP -> EINVAL (the kernel: UD only)");
	rc = ibv_query_ece(qp, &ece);
	check(rc == EOPNOTSUPP, rc, "query_ece -> EOPNOTSUPP");
	rc = ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0);
	check(rc == 0, 0, "query_qp_data_in_order -> 0 (no promise), got %d", rc);
	check(ibv_destroy_qp(qp) == 0, errno, "destroy_qp");
}

/* ---- main ---- */

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* Hold one object of each kind until killed, so the daemon has something to clean up. */
static int hold(struct dev *d)
{
	static char buf[4096];
	struct ibv_qp_init_attr init;
	struct ibv_mr *mr;
	struct ibv_qp *qp;

	mr = ibv_reg_mr(d->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	qp = mr ? create_rc_qp(d, &init) : NULL;
	if (!qp || !move_to(d, qp, IBV_QPS_INIT)) {
		fprintf(stderr, "hold: %s\n", strerror(errno));
		return 1;
	}
	printf("ready qpn 0x%06x\n", qp->qp_num);
	fflush(stdout);
	sleep(HOLD_SECONDS);
	return 0;
}

int main(int argc, char **argv)
{
	bool hold_mode = argc == 3 && !strcmp(argv[1], "--hold");
	struct dev d = { 0 };
	int rc;

	if (argc != 2 && !hold_mode) {
		fprintf(stderr, "usage: %s [--hold] DEVICE\n", argv[0]);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	d.ctx = open_by_name(argv[argc - 1]);
	if (!d.ctx) {
		printf("FAIL: open %s errno=%d (%s)\n", argv[argc - 1], errno, strerror(errno));
		return 1;
	}
	d.pd = ibv_alloc_pd(d.ctx);
	d.cq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	if (!d.pd || !d.cq) {
		printf("FAIL: alloc_pd / create_cq errno=%d (%s)\n", errno, strerror(errno));
		return 1;
	}
	if (hold_mode)
		return hold(&d);

	check_device(&d);
	check_device_files(&d);
	check_pci_identity(&d);
	check_mr(&d);
	check_cq(&d);
	check_qp_create(&d);
	check_qp_states(&d);
	check_posting_states(&d);
	check_not_offered(&d);

	rc = ibv_destroy_cq(d.cq);
	check(rc == 0, rc, "destroy_cq");
	rc = ibv_dealloc_pd(d.pd);
	check(rc == 0, rc, "dealloc_pd");
	rc = ibv_close_device(d.ctx);
	check(rc == 0, rc, "close_device");
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
