#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified ibv_devices and ibv_devinfo -v see a device configured @cx3 as a
# ConnectX-3 Pro RoCE port beside a ConnectX-5 of the same daemon: its
# firmware, part id, board and mlx4_ib's limits, XRC and no raw offloads.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_programs ibv_devices ibv_devinfo
use_test_net 320

cx3_devinfo() {
	local ip guid

	ip=$(addr 1)
	guid=$(node_guid_of "$ip")
	export ROCEMU_DEVICES="mlx4_0=$ip@cx3,mlx5_0=$(addr 2)"

	capture 60 "$ROCEMU" run -- ibv_devices || fail "ibv_devices failed"
	expect "^[[:space:]]+mlx4_0[[:space:]]+${guid//:/}$" "ibv_devices lists mlx4_0"
	expect "^[[:space:]]+mlx5_0[[:space:]]+" "ibv_devices lists mlx5_0 beside it"

	capture 60 "$ROCEMU" run -- ibv_devinfo -v -d mlx4_0 || fail "ibv_devinfo -v failed"
	expect "^hca_id:[[:space:]]+mlx4_0$" "hca_id mlx4_0"
	expect "^[[:space:]]+fw_ver:[[:space:]]+2\.42\.5000$" "fw_ver 2.42.5000"
	expect "^[[:space:]]+vendor_id:[[:space:]]+0x02c9$" "vendor_id 0x02c9"
	expect "^[[:space:]]+vendor_part_id:[[:space:]]+4103$" "vendor_part_id 4103 (ConnectX-3 Pro)"
	expect "^[[:space:]]+board_id:[[:space:]]+MT_1090111023$" "board_id MT_1090111023"
	expect "^[[:space:]]+max_qp_wr:[[:space:]]+16351$" "max_qp_wr 16351, mlx4_ib's"
	expect "^[[:space:]]+max_srq_wr:[[:space:]]+16383$" "max_srq_wr 16383"
	expect "^[[:space:]]+page_size_cap:[[:space:]]+0xfffffe00$" "page_size_cap 0xfffffe00"
	expect "^[[:space:]]+XRC$" "device capability XRC"
	expect "^[[:space:]]+atomic_cap:[[:space:]]+ATOMIC_HCA \(1\)$" "atomics"
	expect_none "RAW_IP_CSUM" "no raw packet checksum offload"
	expect_none "max_dm_size:[[:space:]]+[1-9]" "no device memory"
	expect "^[[:space:]]+link_layer:[[:space:]]+Ethernet$" "link_layer Ethernet"
	expect_fixed "$(printf '\t\t\tGID[  0]:\t\t::ffff:%s, RoCE v2' "$ip")" "GID[0] ::ffff:$ip, RoCE v2"

	capture 60 "$ROCEMU" run -- ibv_devinfo -d mlx5_0 || fail "ibv_devinfo on the ConnectX-5 failed"
	expect "^[[:space:]]+vendor_part_id:[[:space:]]+4119$" "mlx5_0 stays a ConnectX-5"
}

for_each_backend cx3_devinfo
