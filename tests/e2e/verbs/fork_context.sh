#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# fork() with a context open (tests/e2e/verbs/fork_context.c): the child's verbs
# on the inherited context succeed, on a connection of its own, while the
# parent's, running at the same time, all succeed too.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
FORK_CONTEXT=$top_builddir/tests/e2e/verbs/fork_context
require_built "$FORK_CONTEXT"
use_test_net 53

fork_context() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$FORK_CONTEXT" rocemu0 2000 ||
		fail "fork_context failed"
	expect "^0 failed$" "child and parent both served ($(grep -E '^(parent|child):' "$OUT" | tr '\n' ' '))"
}

for_each_backend fork_context
