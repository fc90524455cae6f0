/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Every mlx5dv_* and mlx4dv_* function libmlx5 and libmlx4 export, called
 * once on objects of an emulated device: each works, or fails as mlx5
 * fails on a device without the capability, and none reaches the real
 * provider (which would take the objects for its own and crash). Functions
 * whose every argument is an object only the provider makes are listed as
 * "provider-only NAME"; tests/e2e/dv/mlx5dv_exports.sh checks that each
 * export of the installed libraries is either called here or so listed.
 *
 *   mlx5dv_exports DEVICE
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx4dv.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

/* An int direct verb refused: the errno value EOPNOTSUPP. */
#define REFUSED_INT(fn, ...)                                                              \
	do {                                                                              \
		int ret_ = fn(__VA_ARGS__);                                               \
		check(ret_ == EOPNOTSUPP, "%s: EOPNOTSUPP (got %d)", #fn, ret_);          \
	} while (0)
/* A constructor refused: NULL with errno EOPNOTSUPP. */
#define REFUSED_PTR(fn, ...)                                                              \
	do {                                                                              \
		errno = 0;                                                                \
		void *ret_ = (void *)fn(__VA_ARGS__);                                     \
		int err_ = errno;                                                         \
		check(!ret_ && err_ == EOPNOTSUPP, "%s: NULL, EOPNOTSUPP (errno %d)", #fn, err_); \
	} while (0)
#define NULL_ERRNO(want, fn, ...)                                                         \
	do {                                                                              \
		errno = 0;                                                                \
		void *ret_ = (void *)fn(__VA_ARGS__);                                     \
		int err_ = errno;                                                         \
		check(!ret_ && err_ == (want), "%s: NULL, errno %s (got %d) [%s]", #fn, #want, \
		      err_, #__VA_ARGS__);                                                \
	} while (0)

/* Objects only the real provider makes: an emulated device never hands one out. */
static const char *const provider_only[] = {
	"mlx5dv_crypto_login_destroy",
	"mlx5dv_crypto_login_query", "mlx5dv_dek_destroy", "mlx5dv_dek_query",
	"mlx5dv_destroy_steering_anchor",
	"mlx5dv_devx_destroy_cmd_comp", "mlx5dv_devx_destroy_eq",
	"mlx5dv_devx_destroy_event_channel", "mlx5dv_devx_free_msi_vector",
	"mlx5dv_devx_free_uar", "mlx5dv_devx_get_async_cmd_comp", "mlx5dv_devx_get_event",
	"mlx5dv_devx_obj_destroy", "mlx5dv_devx_obj_modify", "mlx5dv_devx_obj_query",
	"mlx5dv_devx_obj_query_async", "mlx5dv_devx_subscribe_devx_event",
	"mlx5dv_devx_subscribe_devx_event_fd", "mlx5dv_devx_umem_dereg",
	"mlx5dv_dr_action_create_aso", "mlx5dv_dr_action_create_default_miss",
	"mlx5dv_dr_action_create_dest_array", "mlx5dv_dr_action_create_dest_devx_tir",
	"mlx5dv_dr_action_create_dest_ib_port", "mlx5dv_dr_action_create_dest_root_table",
	"mlx5dv_dr_action_create_dest_table", "mlx5dv_dr_action_create_dest_vport",
	"mlx5dv_dr_action_create_drop", "mlx5dv_dr_action_create_flow_counter",
	"mlx5dv_dr_action_create_flow_meter", "mlx5dv_dr_action_create_flow_sampler",
	"mlx5dv_dr_action_create_modify_header", "mlx5dv_dr_action_create_packet_reformat",
	"mlx5dv_dr_action_create_pop_vlan", "mlx5dv_dr_action_create_push_vlan",
	"mlx5dv_dr_action_create_tag", "mlx5dv_dr_action_destroy", "mlx5dv_dr_action_modify_aso",
	"mlx5dv_dr_action_modify_flow_meter", "mlx5dv_dr_aso_other_domain_link",
	"mlx5dv_dr_aso_other_domain_unlink", "mlx5dv_dr_domain_allow_duplicate_rules",
	"mlx5dv_dr_domain_destroy", "mlx5dv_dr_domain_set_reclaim_device_memory",
	"mlx5dv_dr_domain_sync", "mlx5dv_dr_matcher_create", "mlx5dv_dr_matcher_destroy",
	"mlx5dv_dr_matcher_set_layout", "mlx5dv_dr_rule_create", "mlx5dv_dr_rule_destroy",
	"mlx5dv_dr_table_create", "mlx5dv_dr_table_destroy", "mlx5dv_dump_dr_domain",
	"mlx5dv_dump_dr_matcher", "mlx5dv_dump_dr_rule", "mlx5dv_dump_dr_table",
	"mlx5dv_free_var", "mlx5dv_get_vfio_device_list", "mlx5dv_pp_free",
	"mlx5dv_qp_cancel_posted_send_wrs", "mlx5dv_sched_leaf_destroy",
	"mlx5dv_sched_leaf_modify", "mlx5dv_sched_node_destroy", "mlx5dv_sched_node_modify",
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_srq *srq;
static struct ibv_ah *ah;

/* Stand-ins for objects an emulated device cannot make yet, carrying its context. */
static struct ibv_wq fake_wq;
static struct ibv_dm fake_dm;
static struct ibv_rwq_ind_table fake_ind_tbl;

static void refused_everywhere(void)
{
	static struct {
		struct mlx5dv_flow_match_parameters p;
		uint8_t buf[64];	/* fte_match_set_lyr_2_4: ip_protocol at byte 16 */
	} no_mask = { .p.match_sz = 64 }, ip_mask = { .p.match_sz = 64, .buf[16] = 0xff };
	struct mlx5dv_flow_matcher_attr tx_matcher_attr = {
		.type = IBV_FLOW_ATTR_NORMAL, .match_mask = &no_mask.p,
		.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE, .ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_TX,
	};
	struct mlx5dv_flow_matcher_attr ip_matcher_attr = {
		.type = IBV_FLOW_ATTR_NORMAL, .match_mask = &ip_mask.p, .match_criteria_enable = 1,
	};
	struct mlx5dv_mkey_init_attr mkey_attr = { .pd = pd };

	REFUSED_INT(_mlx5dv_query_port, ctx, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_alloc_dm, ctx, NULL, NULL);
	REFUSED_PTR(mlx5dv_alloc_var, ctx, 0);
	REFUSED_PTR(mlx5dv_create_flow_action_esp, ctx, NULL, NULL);
	REFUSED_PTR(mlx5dv_create_flow_action_modify_header, ctx, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_create_flow_action_packet_reformat, ctx, 0, NULL, 0, 0);
	/* A matcher of the NIC TX table, or of fields past the outer L2 ones: not emulated. */
	REFUSED_PTR(mlx5dv_create_flow_matcher, ctx, &tx_matcher_attr);
	REFUSED_PTR(mlx5dv_create_flow_matcher, ctx, &ip_matcher_attr);
	REFUSED_PTR(mlx5dv_create_mkey, &mkey_attr);
	REFUSED_PTR(mlx5dv_create_steering_anchor, ctx, NULL);
	REFUSED_INT(mlx5dv_crypto_login, ctx, NULL);
	REFUSED_PTR(mlx5dv_crypto_login_create, ctx, NULL);
	REFUSED_INT(mlx5dv_crypto_login_query_state, ctx, NULL);
	REFUSED_INT(mlx5dv_crypto_logout, ctx);
	check(mlx5dv_dci_stream_id_reset(qp, 0) == EOPNOTSUPP,
	      "mlx5dv_dci_stream_id_reset: EOPNOTSUPP on a QP not in RTS, as mlx5 checks first");
	REFUSED_PTR(mlx5dv_dek_create, ctx, NULL);
	REFUSED_PTR(mlx5dv_devx_alloc_msi_vector, ctx);
	REFUSED_PTR(mlx5dv_devx_alloc_uar, ctx, 0);
	REFUSED_INT(mlx5dv_devx_cq_modify, cq, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_cq_query, cq, NULL, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_devx_create_cmd_comp, ctx);
	REFUSED_PTR(mlx5dv_devx_create_eq, ctx, NULL, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_devx_create_event_channel, ctx, 0);
	REFUSED_INT(mlx5dv_devx_general_cmd, ctx, NULL, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_devx_obj_create, ctx, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_qp_modify, qp, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_qp_query, qp, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_query_eqn, ctx, 0, NULL);
	REFUSED_INT(mlx5dv_devx_srq_modify, srq, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_srq_query, srq, NULL, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_devx_umem_reg, ctx, NULL, 0, 0);
	REFUSED_PTR(mlx5dv_devx_umem_reg_ex, ctx, NULL);
	REFUSED_PTR(mlx5dv_dr_action_create_dest_ibv_qp, qp);
	REFUSED_PTR(mlx5dv_dr_domain_create, ctx, 0);
	REFUSED_INT(mlx5dv_map_ah_to_qp, ah, 0);
	REFUSED_INT(mlx5dv_modify_qp_lag_port, qp, 0);
	REFUSED_INT(mlx5dv_modify_qp_sched_elem, qp, NULL, NULL);
	REFUSED_PTR(mlx5dv_pp_alloc, ctx, 0, NULL, 0);
	REFUSED_INT(mlx5dv_query_qp_lag_port, qp, NULL, NULL);
	REFUSED_PTR(mlx5dv_sched_leaf_create, ctx, NULL);
	REFUSED_PTR(mlx5dv_sched_node_create, ctx, NULL);
	REFUSED_INT(mlx5dv_set_context_attr, ctx, 0, NULL);
	REFUSED_INT(mlx5dv_vfio_process_events, ctx);
	REFUSED_PTR(mlx4dv_create_qp, ctx, NULL, NULL);
	REFUSED_INT(mlx4dv_query_device, ctx, NULL);
	REFUSED_INT(mlx4dv_set_context_attr, ctx, 0, NULL);
	REFUSED_INT(mlx5dv_devx_ind_tbl_modify, &fake_ind_tbl, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_ind_tbl_query, &fake_ind_tbl, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_wq_modify, &fake_wq, NULL, 0, NULL, 0);
	REFUSED_INT(mlx5dv_devx_wq_query, &fake_wq, NULL, 0, NULL, 0);
	REFUSED_PTR(mlx5dv_dm_map_op_addr, &fake_dm, 0);
	errno = 0;
	check(mlx5dv_vfio_get_events_fd(ctx) == -1 && errno == EOPNOTSUPP,
	      "mlx5dv_vfio_get_events_fd: -1, EOPNOTSUPP");
	/* The QP is in RESET: mlx5 changes the port of an RC or UC QP in RTS only. */
	REFUSED_INT(mlx5dv_modify_qp_udp_sport, qp, 0xc000);
}

/* What works: reserved QPNs and the clock info page (mlx5dv_qpn.c, mlx5dv_timestamps.c test them further). */
static void working(void)
{
	uint32_t qpn = 0;
	int ret = mlx5dv_reserved_qpn_alloc(ctx, &qpn);

	check(ret == 0 && qpn, "mlx5dv_reserved_qpn_alloc: 0x%06x (got %d)", qpn, ret);
	ret = mlx5dv_reserved_qpn_dealloc(ctx, qpn);
	check(ret == 0, "mlx5dv_reserved_qpn_dealloc: 0 (got %d)", ret);
	check(mlx5dv_get_clock_info(ctx, &(struct mlx5dv_clock_info){ 0 }) == 0,
	      "mlx5dv_get_clock_info: 0, the clock info page");
}

static void device(struct ibv_device *dev)
{
	struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
	struct mlx5dv_context dv = { .comp_mask = ~0ull };
	struct ibv_context *other;

	check(mlx5dv_is_supported(dev), "mlx5dv_is_supported: true");
	NULL_ERRNO(EOPNOTSUPP, mlx5dv_open_device, dev, &attr);
	attr.flags = 1u << 7;
	NULL_ERRNO(EINVAL, mlx5dv_open_device, dev, &attr);
	attr.flags = 0;
	other = mlx5dv_open_device(dev, &attr);
	check(other != NULL, "mlx5dv_open_device without DevX: a context");
	if (other)
		ibv_close_device(other);
	check(mlx5dv_query_device(ctx, &dv) == 0 && dv.version == 0 &&
		      dv.flags == MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE,
	      "mlx5dv_query_device: CQE v0, no MPW, no CQE compression or padding, packet-based "
	      "credits (flags 0x%llx)", (unsigned long long)dv.flags);
	check(!(dv.comp_mask & (MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK |
				MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS)) &&
		      (dv.comp_mask & MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE) &&
		      (dv.comp_mask & MLX5DV_CONTEXT_MASK_STRIDING_RQ) &&
		      (dv.comp_mask & MLX5DV_CONTEXT_MASK_CQE_COMPRESION) &&
		      !dv.cqe_comp_caps.max_num && !dv.striding_rq_caps.supported_qpts &&
		      !dv.tunnel_offloads_caps && dv.dci_streams_caps.max_log_num_concurent == 6 &&
		      dv.dci_streams_caps.max_log_num_errored == 6 &&
		      (dv.dc_odp_caps & IBV_ODP_SUPPORT_SRQ_RECV) &&
		      !dv.sw_parsing_caps.sw_parsing_offloads,
	      "mlx5dv_query_device: comp_mask 0x%llx, no compression, striding RQ, tunnels "
	      "or core clock register; DCI streams, DC ODP", (unsigned long long)dv.comp_mask);
	/* Fields asked for only: past them an older program's struct may end. */
	memset(&dv, UNTOUCHED, sizeof(dv));
	dv.comp_mask = 0;
	check(mlx5dv_query_device(ctx, &dv) == 0 && dv.comp_mask == 0 &&
		      all_bytes((const uint8_t *)&dv.cqe_comp_caps,
				sizeof(dv) - offsetof(struct mlx5dv_context, cqe_comp_caps), UNTOUCHED),
	      "mlx5dv_query_device: nothing asked, nothing written past flags");
}

/* mlx5dv_init_obj of device memory: its mapping, where ibv_memcpy_from_dm reads. */
static void init_obj_dm(struct mlx5dv_obj *obj, struct mlx5dv_dm *ddm)
{
	struct ibv_alloc_dm_attr attr = { .length = 4096 };
	struct ibv_dm *dm = ibv_alloc_dm(ctx, &attr);
	uint32_t word = 0;
	int ret;

	if (!dm) {
		check(false, "ibv_alloc_dm: %s", strerror(errno));
		return;
	}
	*ddm = (struct mlx5dv_dm){ .comp_mask = MLX5DV_DM_MASK_REMOTE_VA, .remote_va = 1 };
	obj->dm = (typeof(obj->dm)){ dm, ddm };
	ret = mlx5dv_init_obj(obj, MLX5DV_OBJ_DM);
	if (!ret)
		__atomic_store_n((uint32_t *)ddm->buf + 3, 0x5eed1e55u, __ATOMIC_RELAXED);
	check(!ret && ddm->buf && ddm->length == attr.length && !ddm->remote_va &&
		      ddm->comp_mask == MLX5DV_DM_MASK_REMOTE_VA && !ibv_memcpy_from_dm(&word, dm, 12, 4) &&
		      word == 0x5eed1e55u,
	      "mlx5dv_init_obj: DM: %d, %llu bytes mapped, remote_va 0 (MEMIC), a store there read "
	      "back by ibv_memcpy_from_dm (0x%08x)", ret, (unsigned long long)ddm->length, word);
	ibv_free_dm(dm);
}

static void init_obj(void)
{
	struct mlx5dv_qp dqp = { .comp_mask = MLX5DV_QP_MASK_RAW_QP_HANDLES |
					      MLX5DV_QP_MASK_UAR_MMAP_OFFSET };
	struct mlx5dv_cq dcq;
	struct mlx5dv_srq dsrq = { .comp_mask = MLX5DV_SRQ_MASK_SRQN };
	struct mlx5dv_ah dah;
	struct mlx5dv_pd dpd;
	struct mlx5dv_rwq drwq;
	struct mlx5dv_dm ddm;
	struct mlx5dv_obj obj = {
		.qp = { qp, &dqp }, .cq = { cq, &dcq }, .srq = { srq, &dsrq },
		.ah = { ah, &dah }, .pd = { pd, &dpd },
	};
	struct mlx4dv_qp m4qp;
	struct mlx4dv_obj m4 = { .qp = { qp, &m4qp } };
	struct ibv_wq *wq;
	int ret;

	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ |
					 MLX5DV_OBJ_AH | MLX5DV_OBJ_PD);
	check(ret == 0, "mlx5dv_init_obj: QP, CQ, SRQ, AH, PD: 0 (got %d)", ret);
	check(dqp.sq.buf && dqp.sq.stride == 64 && dqp.sq.wqe_cnt &&
		      !(dqp.sq.wqe_cnt & (dqp.sq.wqe_cnt - 1)) && dqp.rq.buf && dqp.rq.wqe_cnt &&
		      dqp.rq.stride >= 16 && dqp.dbrec && dqp.bf.reg && dqp.bf.size == 256 &&
		      dqp.comp_mask == MLX5DV_QP_MASK_RAW_QP_HANDLES && !dqp.sqn && !dqp.tirn,
	      "mlx5dv_qp: sq %u x %u, rq %u x %u, BlueFlame %u, no raw QP handles or UAR offset",
	      dqp.sq.wqe_cnt, dqp.sq.stride, dqp.rq.wqe_cnt, dqp.rq.stride, dqp.bf.size);
	check(dcq.buf && dcq.dbrec && dcq.cq_uar && dcq.cqe_size == 64 && dcq.cqe_cnt >= 16 &&
		      dcq.cqn,
	      "mlx5dv_cq: cqn 0x%x, %u CQEs of %u bytes", dcq.cqn, dcq.cqe_cnt, dcq.cqe_size);
	check(dsrq.buf && dsrq.dbrec && dsrq.stride >= 32 && dsrq.comp_mask == MLX5DV_SRQ_MASK_SRQN,
	      "mlx5dv_srq: srqn 0x%x, stride %u, head %u, tail %u", dsrq.srqn, dsrq.stride,
	      dsrq.head, dsrq.tail);
	check(dah.av != NULL, "mlx5dv_ah: the address vector");
	check(dpd.pdn != 0 || dpd.comp_mask == 0, "mlx5dv_pd: pdn %u", dpd.pdn);
	wq = mlx5dv_create_wq(ctx, &(struct ibv_wq_init_attr){ .wq_type = IBV_WQT_RQ, .max_wr = 4,
							      .max_sge = 1, .pd = pd, .cq = cq },
			      &(struct mlx5dv_wq_init_attr){ 0 });
	check(wq != NULL, "mlx5dv_create_wq: a receive WQ (errno %d)", wq ? 0 : errno);
	if (wq) {
		obj.rwq = (typeof(obj.rwq)){ wq, &drwq };
		ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_RWQ);
		check(!ret && drwq.buf && drwq.dbrec && drwq.wqe_cnt >= 4 &&
			      !(drwq.wqe_cnt & (drwq.wqe_cnt - 1)) && drwq.stride >= 16 &&
			      !(drwq.stride & (drwq.stride - 1)),
		      "mlx5dv_rwq: %u WQEs of %u bytes and the doorbell record (got %d)", drwq.wqe_cnt,
		      drwq.stride, ret);
		check(!ibv_destroy_wq(wq), "ibv_destroy_wq");
	}
	/* No striding RQ (striding_rq_caps all 0): libmlx5's range check, then the kernel's. */
	NULL_ERRNO(EINVAL, mlx5dv_create_wq, ctx,
		   &(struct ibv_wq_init_attr){ .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
					       .pd = pd, .cq = cq },
		   &(struct mlx5dv_wq_init_attr){ .comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ,
						  .striding_rq_attrs = { 6, 9, 0 } });
	NULL_ERRNO(EOPNOTSUPP, mlx5dv_create_wq, ctx,
		   &(struct ibv_wq_init_attr){ .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
					       .pd = pd, .cq = cq },
		   &(struct mlx5dv_wq_init_attr){ .comp_mask = MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ });
	init_obj_dm(&obj, &ddm);
	check(mlx5dv_init_obj(&obj, 0) == EINVAL, "mlx5dv_init_obj: of nothing: EINVAL");
	check(mlx4dv_init_obj(&m4, MLX4DV_OBJ_QP) == EOPNOTSUPP, "mlx4dv_init_obj: EOPNOTSUPP");
}

/* libmlx5 takes the CQE size from MLX5_CQE_SIZE when the caller names none: 64 or 128. */
static void cq_size_from_env(void)
{
	struct mlx5dv_cq dcq = { 0 };
	struct mlx5dv_obj obj = { .cq = { NULL, &dcq } };

	setenv("MLX5_CQE_SIZE", "128", 1);
	obj.cq.in = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (obj.cq.in)
		mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ);
	check(dcq.cqe_size == 128, "ibv_create_cq with MLX5_CQE_SIZE=128: CQEs of %u bytes",
	      dcq.cqe_size);
	if (obj.cq.in)
		ibv_destroy_cq(obj.cq.in);
	setenv("MLX5_CQE_SIZE", "100", 1);
	NULL_ERRNO(EINVAL, ibv_create_cq, ctx, 16, NULL, NULL, 0);
	unsetenv("MLX5_CQE_SIZE");
}

static void create_cq(void)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct mlx5dv_cq_init_attr dv = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
					  .cqe_size = 64 };
	struct ibv_cq_ex *cqx = mlx5dv_create_cq(ctx, &attr, &dv);

	check(cqx != NULL, "mlx5dv_create_cq: 64-byte CQEs");
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	dv.cqe_size = 128;
	cqx = mlx5dv_create_cq(ctx, &attr, &dv);
	check(cqx != NULL, "mlx5dv_create_cq: 128-byte CQEs");
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	dv.cqe_size = 100;
	NULL_ERRNO(EINVAL, mlx5dv_create_cq, ctx, &attr, &dv);
	cq_size_from_env();
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE,
					   .cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH };
	NULL_ERRNO(EINVAL, mlx5dv_create_cq, ctx, &attr, &dv);
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS,
					   .flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD };
	NULL_ERRNO(EINVAL, mlx5dv_create_cq, ctx, &attr, &dv);
	dv = (struct mlx5dv_cq_init_attr){ .comp_mask = 1ull << 40 };
	NULL_ERRNO(EINVAL, mlx5dv_create_cq, ctx, &attr, &dv);
}

/* mlx5dv_create_qp of type with create_flags (and dv comp_mask mask): errno want, 0 for success. */
static void create_qp_case(enum ibv_qp_type type, uint64_t mask, uint32_t flags, int want,
			   const char *what)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct mlx5dv_qp_init_attr dv = { .comp_mask = mask, .create_flags = flags };
	struct ibv_qp *q;
	int err;

	if (mask & MLX5DV_QP_INIT_ATTR_MASK_DC)
		dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	if (mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS)
		dv.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST;
	errno = 0;
	q = mlx5dv_create_qp(ctx, &attr, &dv);
	err = errno;
	check(want ? !q && err == want : q != NULL, "mlx5dv_create_qp: %s: %s (errno %d)", what,
	      want ? strerror(want) : "a QP", err);
	if (q)
		ibv_destroy_qp(q);
}

/* Indirect mkeys: made, checked (no signature context) and destroyed; the QP's mlx5 send ops. */
static void mkeys(void)
{
	struct mlx5dv_mkey_init_attr attr = { .pd = pd, .max_entries = 3,
					      .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT };
	struct mlx5dv_mkey *mkey = mlx5dv_create_mkey(&attr);
	struct mlx5dv_qp_ex *dv = mlx5dv_qp_ex_from_ibv_qp_ex(ibv_qp_to_qp_ex(qp));

	check(mkey && attr.max_entries == 4, "mlx5dv_create_mkey: an indirect mkey of 4 entries");
	if (mkey) {
		check(_mlx5dv_mkey_check(mkey, &(struct mlx5dv_mkey_err){ 0 },
					 sizeof(struct mlx5dv_mkey_err)) == EINVAL,
		      "_mlx5dv_mkey_check: EINVAL, no signature context");
		check(mlx5dv_destroy_mkey(mkey) == 0, "mlx5dv_destroy_mkey: 0");
	}
	check(dv && !dv->wr_mr_list && !dv->wr_set_dc_addr,
	      "mlx5dv_qp_ex_from_ibv_qp_ex: no mlx5 send op on a QP created without them");
}

/* A matcher of source MACs (mlx5dv_flow_matcher.c): flows of it steer to a QP, nothing else. */
static void flow_matchers(void)
{
	static struct {
		struct mlx5dv_flow_match_parameters p;
		uint8_t buf[8];
	} smac = { .p.match_sz = 6, .buf = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct mlx5dv_flow_matcher_attr attr = { .type = IBV_FLOW_ATTR_NORMAL,
						 .match_criteria_enable = 1, .match_mask = &smac.p };
	struct mlx5dv_flow_matcher *m = mlx5dv_create_flow_matcher(ctx, &attr);
	struct mlx5dv_flow_action_attr drop = { .type = MLX5DV_FLOW_ACTION_DROP };

	check(m != NULL, "mlx5dv_create_flow_matcher: a matcher of outer source MACs");
	if (!m)
		return;
	NULL_ERRNO(EOPNOTSUPP, mlx5dv_create_flow, m, &smac.p, 1, &drop);
	NULL_ERRNO(EINVAL, mlx5dv_create_flow, m, &smac.p, 0, NULL);
	check(mlx5dv_destroy_flow_matcher(m) == 0, "mlx5dv_destroy_flow_matcher: 0");
}

static void create_qp(void)
{
	const uint64_t cf = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;

	create_qp_case(IBV_QPT_RC, 0, 0, 0, "RC");
	create_qp_case(IBV_QPT_RC, cf, MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE, 0,
		       "RC DISABLE_SCATTER_TO_CQE");
	create_qp_case(IBV_QPT_UD, cf, MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, 0,
		       "UD ALLOW_SCATTER_TO_CQE");
	create_qp_case(IBV_QPT_RC, cf,
		       MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE | MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE,
		       EINVAL, "RC DISABLE and ALLOW scatter to CQE");
	create_qp_case(IBV_QPT_RC, cf, MLX5DV_QP_CREATE_TUNNEL_OFFLOADS, EINVAL,
		       "RC TUNNEL_OFFLOADS");
	create_qp_case(IBV_QPT_UD, cf, MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC, EINVAL,
		       "UD TIR_ALLOW_SELF_LOOPBACK_UC");
	create_qp_case(IBV_QPT_RC, cf, MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC, EINVAL,
		       "RC TIR_ALLOW_SELF_LOOPBACK_MC");
	create_qp_case(IBV_QPT_RC, cf, MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE, 0,
		       "RC PACKET_BASED_CREDIT_MODE");
	create_qp_case(IBV_QPT_UD, cf, MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE, EINVAL,
		       "UD PACKET_BASED_CREDIT_MODE");
	create_qp_case(IBV_QPT_RC, cf, MLX5DV_QP_CREATE_SIG_PIPELINING, EOPNOTSUPP,
		       "RC SIG_PIPELINING");
	create_qp_case(IBV_QPT_RC, cf, 1u << 30, EINVAL, "RC unknown create flag");
	create_qp_case(IBV_QPT_DRIVER, MLX5DV_QP_INIT_ATTR_MASK_DC, 0, 0, "DCI");
	create_qp_case(IBV_QPT_DRIVER, 0, 0, EINVAL, "DRIVER without DC");
	create_qp_case(IBV_QPT_RC, MLX5DV_QP_INIT_ATTR_MASK_DC, 0, EINVAL, "RC with DC attributes");
	create_qp_case(IBV_QPT_RC, MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS, 0, 0,
		       "RC with MR_LIST send op");
	create_qp_case(IBV_QPT_UC, MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS, 0, EOPNOTSUPP,
		       "UC with MR_LIST send op");
	create_qp_case(IBV_QPT_RC, 1ull << 40, 0, EINVAL, "RC unknown comp_mask");
}

static bool objects(struct dev *d)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_ah_attr aattr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = d->gid, .hop_limit = 64 } };

	ctx = d->ctx;
	pd = d->pd;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qp = cq ? qp_create(d, cq, cq, true, &cap) : NULL;
	srq = ibv_create_srq(pd, &sattr);
	ah = ibv_create_ah(pd, &aattr);
	fake_wq.context = fake_dm.context = fake_ind_tbl.context = ctx;
	check(cq && qp && srq && ah, "CQ, QP, SRQ and AH of %s", d->name);
	return cq && qp && srq && ah;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	if (dev_open(&dev_a, argv[1]) && objects(&dev_a)) {
		device(ctx->device);
		refused_everywhere();
		working();
		init_obj();
		create_cq();
		create_qp();
		mkeys();
		flow_matchers();
		ibv_destroy_ah(ah);
		ibv_destroy_qp(qp);
		ibv_destroy_srq(srq);
		ibv_destroy_cq(cq);
		dev_close(&dev_a);
	}
	for (i = 0; i < sizeof(provider_only) / sizeof(provider_only[0]); i++)
		printf("provider-only %s\n", provider_only[i]);
	return checks_finish();
}
