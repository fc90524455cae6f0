#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The checks of tests/e2e/mem/odp.c (explicit and implicit ODP MRs with RDMA
# into pages not mapped at registration, unmapped addresses failing as
# unresolved page faults, ibv_advise_mr, odp_caps), on two devices, then
# on one; and `ibv_devinfo -v` showing the ODP caps.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
ODP=$top_builddir/tests/e2e/mem/odp
require_built "$ODP"
require_programs ibv_devinfo
use_test_net 210

odp() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$ODP" rocemu0 rocemu1
	run_checks_between "$ODP" rocemu0 rocemu0
	capture 60 "$ROCEMU" run -- ibv_devinfo -v -d rocemu0 || fail "ibv_devinfo -v failed"
	expect_fixed "$(printf '\tgeneral_odp_caps:\n')" "ibv_devinfo -v lists general_odp_caps"
	expect "^[[:space:]]+ODP_SUPPORT_IMPLICIT$" "ibv_devinfo -v: ODP_SUPPORT_IMPLICIT"
	# Anchored: a device with XRC lists xrc_odp_caps too.
	[ "$(grep -A7 -E '^[[:space:]]+rc_odp_caps:' "$OUT" | grep -cE '^[[:space:]]+SUPPORT_(SEND|RECV|WRITE|READ|ATOMIC|SRQ)$')" -eq 6 ] ||
		fail "ibv_devinfo -v: rc_odp_caps lists SEND RECV WRITE READ ATOMIC SRQ"
	ok "ibv_devinfo -v: rc_odp_caps lists SEND RECV WRITE READ ATOMIC SRQ"
	grep -A1 'uc_odp_caps:' "$OUT" | grep -q 'NO SUPPORT' || fail "ibv_devinfo -v: uc_odp_caps NO SUPPORT"
	ok "ibv_devinfo -v: uc_odp_caps NO SUPPORT, as a ConnectX-5"
	daemon_answers || fail "the daemon stopped answering"
	ok "the daemon still answers"
}

for_each_backend odp
