/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The direct-verbs functions of libmlx5 and libmlx4 the shim interposes:
 * (name, symbol version, library). Those whose every argument is an object
 * only the real provider makes (DR rules, DevX objects...) are left
 * to the provider: an emulated device never hands one out.
 */
#ifndef ROCEMU_REAL_DV_H
#define ROCEMU_REAL_DV_H

#define ROCEMU_REAL_DV_FUNCS(X)						\
	X(_mlx5dv_mkey_check, "MLX5_1.20", MLX5)	\
	X(_mlx5dv_query_port, "MLX5_1.19", MLX5)	\
	X(mlx4dv_create_qp, "MLX4_1.0", MLX4)	\
	X(mlx4dv_init_obj, "MLX4_1.0", MLX4)	\
	X(mlx4dv_query_device, "MLX4_1.0", MLX4)	\
	X(mlx4dv_set_context_attr, "MLX4_1.0", MLX4)	\
	X(mlx5dv_alloc_dm, "MLX5_1.10", MLX5)	\
	X(mlx5dv_alloc_var, "MLX5_1.12", MLX5)	\
	X(mlx5dv_create_cq, "MLX5_1.1", MLX5)	\
	X(mlx5dv_create_flow_action_esp, "MLX5_1.5", MLX5)	\
	X(mlx5dv_create_flow_action_modify_header, "MLX5_1.7", MLX5)	\
	X(mlx5dv_create_flow_action_packet_reformat, "MLX5_1.7", MLX5)	\
	X(mlx5dv_create_flow, "MLX5_1.6", MLX5)	\
	X(mlx5dv_create_flow_matcher, "MLX5_1.6", MLX5)	\
	X(mlx5dv_create_mkey, "MLX5_1.10", MLX5)	\
	X(mlx5dv_create_qp, "MLX5_1.3", MLX5)	\
	X(mlx5dv_create_steering_anchor, "MLX5_1.24", MLX5)	\
	X(mlx5dv_create_wq, "MLX5_1.3", MLX5)	\
	X(mlx5dv_crypto_login, "MLX5_1.21", MLX5)	\
	X(mlx5dv_crypto_login_create, "MLX5_1.24", MLX5)	\
	X(mlx5dv_crypto_login_query_state, "MLX5_1.21", MLX5)	\
	X(mlx5dv_crypto_logout, "MLX5_1.21", MLX5)	\
	X(mlx5dv_dci_stream_id_reset, "MLX5_1.21", MLX5)	\
	X(mlx5dv_dek_create, "MLX5_1.21", MLX5)	\
	X(mlx5dv_destroy_flow_matcher, "MLX5_1.6", MLX5)	\
	X(mlx5dv_destroy_mkey, "MLX5_1.10", MLX5)	\
	X(mlx5dv_devx_alloc_msi_vector, "MLX5_1.23", MLX5)	\
	X(mlx5dv_devx_alloc_uar, "MLX5_1.7", MLX5)	\
	X(mlx5dv_devx_cq_modify, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_cq_query, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_create_cmd_comp, "MLX5_1.9", MLX5)	\
	X(mlx5dv_devx_create_eq, "MLX5_1.23", MLX5)	\
	X(mlx5dv_devx_create_event_channel, "MLX5_1.11", MLX5)	\
	X(mlx5dv_devx_general_cmd, "MLX5_1.7", MLX5)	\
	X(mlx5dv_devx_ind_tbl_modify, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_ind_tbl_query, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_obj_create, "MLX5_1.7", MLX5)	\
	X(mlx5dv_devx_qp_modify, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_qp_query, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_query_eqn, "MLX5_1.7", MLX5)	\
	X(mlx5dv_devx_srq_modify, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_srq_query, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_umem_reg, "MLX5_1.7", MLX5)	\
	X(mlx5dv_devx_umem_reg_ex, "MLX5_1.19", MLX5)	\
	X(mlx5dv_devx_wq_modify, "MLX5_1.8", MLX5)	\
	X(mlx5dv_devx_wq_query, "MLX5_1.8", MLX5)	\
	X(mlx5dv_dm_map_op_addr, "MLX5_1.19", MLX5)	\
	X(mlx5dv_dr_action_create_dest_ibv_qp, "MLX5_1.10", MLX5)	\
	X(mlx5dv_dr_domain_create, "MLX5_1.10", MLX5)	\
	X(mlx5dv_get_clock_info, "MLX5_1.4", MLX5)	\
	X(mlx5dv_init_obj, "MLX5_1.2", MLX5)	\
	X(mlx5dv_is_supported, "MLX5_1.8", MLX5)	\
	X(mlx5dv_map_ah_to_qp, "MLX5_1.20", MLX5)	\
	X(mlx5dv_modify_qp_lag_port, "MLX5_1.14", MLX5)	\
	X(mlx5dv_modify_qp_sched_elem, "MLX5_1.17", MLX5)	\
	X(mlx5dv_modify_qp_udp_sport, "MLX5_1.17", MLX5)	\
	X(mlx5dv_open_device, "MLX5_1.7", MLX5)	\
	X(mlx5dv_pp_alloc, "MLX5_1.13", MLX5)	\
	X(mlx5dv_qp_ex_from_ibv_qp_ex, "MLX5_1.10", MLX5)	\
	X(mlx5dv_query_device, "MLX5_1.0", MLX5)	\
	X(mlx5dv_query_qp_lag_port, "MLX5_1.14", MLX5)	\
	X(mlx5dv_reserved_qpn_alloc, "MLX5_1.18", MLX5)	\
	X(mlx5dv_reserved_qpn_dealloc, "MLX5_1.18", MLX5)	\
	X(mlx5dv_sched_leaf_create, "MLX5_1.17", MLX5)	\
	X(mlx5dv_sched_node_create, "MLX5_1.17", MLX5)	\
	X(mlx5dv_set_context_attr, "MLX5_1.2", MLX5)	\
	X(mlx5dv_vfio_get_events_fd, "MLX5_1.21", MLX5)	\
	X(mlx5dv_vfio_process_events, "MLX5_1.21", MLX5)

#endif /* ROCEMU_REAL_DV_H */
