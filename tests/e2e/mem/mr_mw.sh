#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The checks of tests/e2e/mem/mr_mw.c (an MR stays while windows are bound to
# it, a window's rkey never reaches another MR, reregistered MRs work as
# fresh ones): requester and responder on two devices, then both on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MR_MW=$top_builddir/tests/e2e/mem/mr_mw
require_built "$MR_MW"
use_test_net 70

mr_mw() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$MR_MW" rocemu0 rocemu1
	run_checks_between "$MR_MW" rocemu0 rocemu0
	daemon_answers || fail "the daemon stopped answering"
	ok "the daemon still answers"
}

for_each_backend mr_mw
