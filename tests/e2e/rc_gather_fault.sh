#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# tests/e2e/rc_gather_fault.c: one post list of small WRITEs or SENDs whose
# k-th source was unmapped after registration; the requester reads several
# payloads at once, yet the data of the WRs before k arrive, WR k fails with
# LOC_PROT_ERR and nothing after it leaves. Two devices, then one.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RC_GATHER_FAULT=$top_builddir/tests/e2e/rc_gather_fault
require_built "$RC_GATHER_FAULT"
use_test_net 171

# gather_fault_between DEV_A DEV_B
gather_fault_between() {
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$RC_GATHER_FAULT" "$1" "$2" || fail "rc_gather_fault $1 $2 failed"
	expect "^0 failed$" "$1 -> $2: every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

gather_fault() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	gather_fault_between rocemu0 rocemu1
	gather_fault_between rocemu0 rocemu0
}

for_each_backend gather_fault
