/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The harness of the e2e verbs programs: a connected RC QP pair between
 * device A and device B, made and checked through the public verbs API
 * only, and the "ok: "/"FAIL: " check lines they print.
 *
 * QP "a" lives on dev_a, QP "b" on dev_b; a sends from PSN_A, b from
 * PSN_B. A check prints one line and counts as passed or failed;
 * checks_finish() prints "N passed" and "N failed" and gives the exit
 * status. A helper giving bool or a pointer prints a FAIL line when it
 * fails; one giving int returns the errno value and prints nothing.
 */
#ifndef ROCEMU_TESTS_E2E_VERBS_PAIR_H
#define ROCEMU_TESTS_E2E_VERBS_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>

#define PSN_A 0x001000
#define PSN_B 0x002000
#define CQ_DEPTH 64		/* CQ size of side_default */
#define UNTOUCHED 0x5a		/* fill of memory nothing may write */

struct dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
};

struct side {
	struct dev *dev;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;		/* as granted by ibv_create_qp */
	bool qp_ex;			/* created with every ibv_qp_ex send op */
};

struct pair {
	struct side a, b;
};

struct buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;		/* over the first bytes of p, or NULL */
};

/* What one completion must carry; opcode and byte_len -1 when not checked. */
struct want {
	uint64_t wr_id;
	enum ibv_wc_status status;
	int opcode;
	long byte_len;
};

/* How qp_connect takes a QP through INIT and RTR to RTS; a check changes the knob it tests. */
struct qp_knobs {
	uint8_t max_rd_atomic;		/* READs and atomics in flight as requester */
	uint8_t max_dest_rd_atomic;	/* as responder; 0 refuses them */
	uint8_t min_rnr_timer;
	uint8_t timeout, retry_cnt, rnr_retry;
	enum ibv_mtu path_mtu;		/* 0: IBV_MTU_1024 */
	bool stop_at_rtr;		/* leave it in RTR: the first packet raises COMM_EST */
};

/* One side of a pair: its QP's capabilities and CQ sizes, and how it is connected. */
struct side_spec {
	struct ibv_qp_cap cap;
	int send_cqe, recv_cqe;
	bool qp_ex;			/* created with every ibv_qp_ex send op */
	struct ibv_comp_channel *send_channel;	/* of the send CQ, or NULL */
	struct ibv_comp_channel *recv_channel;	/* of the receive CQ, or NULL */
	struct qp_knobs knobs;
};

#define QP_KNOBS_DEFAULT { .max_rd_atomic = 4, .max_dest_rd_atomic = 4, .min_rnr_timer = 12, \
			   .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 }

extern const struct side_spec side_default;
extern struct dev dev_a, dev_b;
extern unsigned int completion_wait_ms;	/* a completion later than this counts as missing */

void __attribute__((format(printf, 2, 3))) check(bool ok, const char *fmt, ...);
int checks_finish(void);

/* A check table run between two devices, each check headed by "== name". */
struct named_check {
	const char *name;
	void (*run)(void);
};
int run_checks(const char *name_a, const char *name_b, const struct named_check *checks, size_t n);
/* main() of a program whose arguments are DEVICE_A DEVICE_B: run_checks over them. */
int run_checks_main(int argc, char **argv, const struct named_check *checks, size_t n);

/* Data patterns: byte i of message seed, so that any byte out of place shows. */
uint8_t pattern_byte(unsigned int seed, size_t i);
void fill_pattern(uint8_t *p, size_t len, unsigned int seed, size_t msg_offset);
size_t pattern_mismatch(const uint8_t *p, size_t len, unsigned int seed, size_t msg_offset);
bool all_bytes(const uint8_t *p, size_t len, uint8_t value);
void check_pattern(const uint8_t *p, size_t len, unsigned int seed, size_t msg_offset, const char *what);
void check_untouched(const uint8_t *p, size_t len, uint8_t fill, const char *what);

bool dev_open(struct dev *d, const char *name);
/* ibv_open_xrcd of the domain of file fd (-1: a new one of ctx's own), as oflags say. */
struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags);
void dev_close(struct dev *d);
struct buf *buf_new(struct dev *d, size_t len, size_t mr_len, int access, uint8_t fill);
void bufs_free(void);
struct ibv_sge sge_of(const struct buf *b, size_t offset, size_t len);
uint64_t raddr_of(const struct buf *b, size_t offset);

struct ibv_qp *qp_create(struct dev *d, struct ibv_cq *send_cq, struct ibv_cq *recv_cq, bool qp_ex,
			 struct ibv_qp_cap *cap);
bool side_open(struct side *s, struct dev *d, const struct side_spec *spec);
void side_close(struct side *s);
int qp_to_rts(struct ibv_qp *qp, uint32_t sq_psn, const struct qp_knobs *k);
int ud_to_rts(struct ibv_qp *qp, uint32_t qkey, uint32_t sq_psn);
int qp_connect(struct ibv_qp *qp, uint32_t remote_qpn, const union ibv_gid *remote_gid,
	       uint32_t sq_psn, uint32_t rq_psn, const struct qp_knobs *k);
bool pair_open(struct pair *p, const struct side_spec *a, const struct side_spec *b);
void pair_close(struct pair *p);
int qp_state(struct ibv_qp *qp, enum ibv_qp_state *state, int *sq_draining);
void expect_state(struct ibv_qp *qp, enum ibv_qp_state want, const char *what);

bool post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what);
bool post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, const char *what);
long elapsed_ms(const struct timespec *since);
int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, unsigned int ms);
int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc);
bool expect_wc(struct ibv_cq *cq, const char *what, struct want w, struct ibv_wc *out);
bool wait_event(struct ibv_context *ctx, enum ibv_event_type type, const void *element,
		unsigned int ms);

/*
 * Bind mw as info says through s's QP (ibv_bind_mw for type 1, else
 * ibv_wr_bind_mw when s has ibv_qp_ex, IBV_WR_BIND_MW otherwise), signaled
 * as wr_id; mw->rkey is its new rkey once the bind is posted. True when
 * the bind completes successfully.
 */
bool bind_window(struct side *s, struct ibv_mw *mw, const struct ibv_mw_bind_info *info, uint64_t wr_id,
		 const char *what);

#endif /* ROCEMU_TESTS_E2E_VERBS_PAIR_H */
