#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The checks of tests/e2e/verbs/parent_domain.c (thread domains, parent domains
# and their allocators, data through a QP, CQs and an MR on a parent
# domain, MLX_*_ALLOC_TYPE where no allocator gives the buffer), on two
# devices, then on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
PARENT_DOMAIN=$top_builddir/tests/e2e/verbs/parent_domain
require_built "$PARENT_DOMAIN"
use_test_net 211

parent_domain() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$PARENT_DOMAIN" rocemu0 rocemu1
	run_checks_between "$PARENT_DOMAIN" rocemu0 rocemu0
	daemon_answers || fail "the daemon stopped answering"
	ok "the daemon still answers"
}

for_each_backend parent_domain
