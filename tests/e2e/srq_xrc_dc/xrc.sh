#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# XRC (tests/e2e/srq_xrc_dc/xrc.c): XRC domains, their errnos, one domain per file
# shared by contexts and processes and gone with its last open; XRC SRQs.
# A client forging the control protocol (tests/e2e/srq_xrc_dc/xrcd_forge.c) gets no
# file's domain without the file's fd.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
XRC=$top_builddir/tests/e2e/srq_xrc_dc/xrc
XRCD_FORGE=$top_builddir/tests/e2e/srq_xrc_dc/xrcd_forge
require_built "$XRC" "$XRCD_FORGE"
use_test_net 160

# xrc_between DEV_A DEV_B
xrc_between() {
	run_checks_between "$XRC" "$1" "$2"
	expect "^ok: the domain went with its last open" "$1 -> $2: domain gone with its last open"
}

xrc() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	xrc_between rocemu1 rocemu1
	capture 30 "$XRCD_FORGE" "$ROCEMU_RUNTIME_DIR/ctrl.sock" || fail "xrcd_forge: $(grep FAIL "$OUT")"
	expect "^ok: a shared XRCD without the file's fd: EBADF" "no file's domain without its fd"
}

for_each_backend xrc
