#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Two emulated devices in one daemon: both listed, each with its own
# address, GID and MTU.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_programs ibv_devices ibv_devinfo
use_test_net 2

two_devices() {
	local ip0 ip1

	ip0=$(addr 1)
	ip1=$(addr 2)
	export ROCEMU_DEVICES="rocemu0=$ip0,rocemu1=$ip1/1500"

	capture 60 "$ROCEMU" run -- ibv_devices || fail "ibv_devices failed"
	expect "^[[:space:]]+rocemu0[[:space:]]+$(node_guid_of "$ip0" | tr -d :)$" "ibv_devices lists rocemu0"
	expect "^[[:space:]]+rocemu1[[:space:]]+$(node_guid_of "$ip1" | tr -d :)$" "ibv_devices lists rocemu1"

	capture 60 "$ROCEMU" run -- ibv_devinfo -d rocemu1 -v || fail "ibv_devinfo -d rocemu1 failed"
	expect "^hca_id:[[:space:]]+rocemu1$" "rocemu1 queried by name"
	expect_none "^hca_id:[[:space:]]+rocemu0$" "only rocemu1 shown"
	expect "^[[:space:]]+node_guid:[[:space:]]+$(node_guid_of "$ip1")$" "rocemu1 node_guid"
	expect "^[[:space:]]+active_mtu:[[:space:]]+1024 \(3\)$" "rocemu1 active_mtu 1024 (netdev MTU 1500)"
	expect_fixed "$(printf '\t\t\tGID[  0]:\t\t::ffff:%s, RoCE v2' "$ip1")" "rocemu1 GID ::ffff:$ip1"

	capture 60 "$ROCEMU" run -- ibv_devinfo -d rocemu0 -v || fail "ibv_devinfo -d rocemu0 failed"
	expect "^hca_id:[[:space:]]+rocemu0$" "rocemu0 queried by name"
	expect "^[[:space:]]+active_mtu:[[:space:]]+4096 \(5\)$" "rocemu0 active_mtu 4096"
	expect_fixed "$(printf '\t\t\tGID[  0]:\t\t::ffff:%s, RoCE v2' "$ip0")" "rocemu0 GID ::ffff:$ip0"
}

for_each_backend two_devices
