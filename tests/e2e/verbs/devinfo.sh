#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified ibv_devices and ibv_devinfo see rocemu0 as a ConnectX-5 RoCE
# port: active, Ethernet, one RoCE v2 GID made from the device's IPv4 address,
# the SRQ, AH and multicast limits the daemon enforces and the XRC capability.
# So does a program that loads libibverbs only at run time (as UCX does).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_programs ibv_devices ibv_devinfo
require_built "$DLOPEN_VERBS"
use_test_net 1

devinfo() {
	local ip guid

	ip=$(addr 1)
	guid=$(node_guid_of "$ip")
	export ROCEMU_DEVICES="rocemu0=$ip"

	capture 60 "$ROCEMU" run -- ibv_devices || fail "ibv_devices failed"
	expect "^[[:space:]]+rocemu0[[:space:]]+${guid//:/}$" "ibv_devices lists rocemu0 with node GUID ${guid//:/}"

	capture 60 "$ROCEMU" run -- ibv_devinfo -v || fail "ibv_devinfo -v failed"
	expect "^hca_id:[[:space:]]+rocemu0$" "hca_id rocemu0"
	expect "^[[:space:]]+fw_ver:[[:space:]]+16\.35\.2000$" "fw_ver 16.35.2000"
	expect "^[[:space:]]+node_guid:[[:space:]]+$guid$" "node_guid $guid"
	expect "^[[:space:]]+vendor_id:[[:space:]]+0x02c9$" "vendor_id 0x02c9"
	expect "^[[:space:]]+vendor_part_id:[[:space:]]+4119$" "vendor_part_id 4119"
	expect "^[[:space:]]+board_id:[[:space:]]+MT_0000000008$" "board_id MT_0000000008"
	expect "^[[:space:]]+phys_port_cnt:[[:space:]]+1$" "one port"
	# The limits the daemon enforces (device.h, mcast.h; AHs are the process's, as on mlx5).
	expect "^[[:space:]]+max_srq:[[:space:]]+16384$" "max_srq 16384"
	expect "^[[:space:]]+max_srq_wr:[[:space:]]+32767$" "max_srq_wr 32767 (2^15 entries, one kept free)"
	expect "^[[:space:]]+max_srq_sge:[[:space:]]+30$" "max_srq_sge 30"
	expect "^[[:space:]]+max_ah:[[:space:]]+2147483647$" "max_ah 2147483647"
	expect "^[[:space:]]+max_mcast_grp:[[:space:]]+32$" "max_mcast_grp 32"
	expect "^[[:space:]]+max_mcast_qp_attach:[[:space:]]+16$" "max_mcast_qp_attach 16"
	expect "^[[:space:]]+XRC$" "device capability XRC"
	expect "^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$" "port PORT_ACTIVE"
	expect "^[[:space:]]+active_mtu:[[:space:]]+4096 \(5\)$" "active_mtu 4096 (netdev MTU 9000)"
	expect "^[[:space:]]+link_layer:[[:space:]]+Ethernet$" "link_layer Ethernet"
	expect "^[[:space:]]+phys_state:[[:space:]]+LINK_UP \(5\)$" "phys_state LINK_UP"
	# devinfo.c prints a RoCE v2 GID with inet_ntop and ", RoCE v2".
	expect_fixed "$(printf '\t\t\tGID[  0]:\t\t::ffff:%s, RoCE v2' "$ip")" "GID[0] ::ffff:$ip, RoCE v2"
	expect_none "GID\[  1\]" "no other GID"

	capture 60 "$ROCEMU" run -- "$DLOPEN_VERBS" || fail "a program that dlopens libibverbs failed"
	expect "^device rocemu0 port ACTIVE$" "libibverbs loaded with dlopen: rocemu0 opened, port ACTIVE"
}

for_each_backend devinfo
