#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# XRC (tests/e2e/xrc.c): XRC domains, their errnos, one domain per file
# shared by contexts and processes and gone with its last open; XRC SRQs.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
XRC=$top_builddir/tests/e2e/xrc
require_built "$XRC"
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
}

for_each_backend xrc
