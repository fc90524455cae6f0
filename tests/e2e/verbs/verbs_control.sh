#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The control-path verbs (tests/e2e/verbs/verbs_control.c) against the emulator.
# MTU 1500 gives an active MTU of 1024, so a larger path MTU must be refused.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_built "$VERBS_CONTROL"
use_test_net 4

verbs_control() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)/1500"
	export ROCEMU_DEVICES
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 120 "$ROCEMU" run -- "$VERBS_CONTROL" rocemu0 || fail "verbs_control failed"
	expect "^ok: INIT -> RTR with path_mtu above active_mtu" "path MTU above the active MTU checked"
	expect "^ok: create_srq_ex XRC without its domain and CQ -> EINVAL" "an XRC SRQ without its domain and CQ is refused"
	expect "^ok: reg_dmabuf_mr -> EOPNOTSUPP" "verbs the device does not offer are refused, not a crash"
	expect "^ok: readlink /sys/class/infiniband/rocemu0/device/driver -> \.\.\./mlx5_core" \
		"the device's driver reads as mlx5_core"
	expect "^ok: PCI function 0000:[0-9a-f]{2}:00\.0: vendor 0x15b3 device 0x1017 \(ConnectX-5\)" \
		"the PCI function above the device's real path has a ConnectX-5's ids"
	expect_checks_passed
}

for_each_backend verbs_control
