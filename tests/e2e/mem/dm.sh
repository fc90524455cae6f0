#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Device memory (tests/e2e/mem/dm.c): allocation limits and errnos, copies at
# offsets, DM MRs and their rules, RDMA WRITE, READ and atomics between
# host and device memory of two devices.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
DM=$top_builddir/tests/e2e/mem/dm
require_built "$DM"
use_test_net 220

dm() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$DM" rocemu0 rocemu1 || fail "dm failed"
	expect_checks_passed
	# ibv_devinfo -v shows the limit the daemon enforces.
	capture 20 "$ROCEMU" run -- ibv_devinfo -v -d rocemu0 || fail "ibv_devinfo -v failed"
	expect "maximum available device memory:[[:space:]]*131072Bytes" "ibv_devinfo -v: max_dm_size 131072"
}

for_each_backend dm
