#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Completion events as a ConnectX raises them (tests/e2e/verbs/cq_events.c),
# rocemu0 against rocemu1: one per arm, for a CQE no event reported
# before; a CQ armed again before the CQE of its event is polled raises
# none until its next CQE; a CQE written before the arm raises one at once;
# solicited-only arms; two CQs on one channel.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
CQ_EVENTS=$top_builddir/tests/e2e/verbs/cq_events
require_built "$CQ_EVENTS"
use_test_net 35

cq_events() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$CQ_EVENTS" rocemu0 rocemu1
}

for_each_backend cq_events
