#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Imports (tests/e2e/mem/import.c): a second process imports the owner's
# context by its cmd_fd (SCM_RIGHTS), its PD, MR and DM, and moves data
# through them after the owner closed its context; bad handles are ENOENT.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
IMPORT=$top_builddir/tests/e2e/mem/import
require_built "$IMPORT"
use_test_net 221

import_between() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$IMPORT" rocemu0 rocemu1 || fail "import failed"
	expect "^ok: child: every check passed" "the importing process passed every check"
	[ "$(grep -c '^0 failed$' "$OUT")" = 2 ] || fail "owner or importer failed a check"
	ok "owner and importer passed every check ($(grep -c '^ok: ' "$OUT") checks)"
	# Once both processes are gone, the shared objects are too (the daemon sees the
	# last cmd_fd close in its own time: ask until it has, at most 5 s).
	for _ in $(seq 50); do
		capture 10 "$ROCEMU" status || fail "rocemu status failed"
		grep -Eq "^  (pd|mr|dm) " "$OUT" || break
		sleep 0.1
	done
	expect_none "^  (pd|mr|dm) " "no PD, MR or DM left once owner and importer are gone"
}

for_each_backend import_between
