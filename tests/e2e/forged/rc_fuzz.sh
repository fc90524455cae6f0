#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Fuzz of the packet path (tests/e2e/forged/rc_fuzz.c): 100k mutated RoCEv2
# packets with correct ICRCs at live RC QPs moving real traffic. No byte
# outside the registered regions changes, the daemon neither crashes nor
# reports a sanitizer error, answers `rocemu status` after, and
# a fresh QP pair moves data.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_FUZZ=$top_builddir/tests/e2e/forged/rc_fuzz
require_built "$RC_FUZZ"
use_test_net 62
# Bound on the host (not the default private wire of loopback devices): its fuzzer sends to the devices from outside the daemon.
export ROCEMU_WIRE=host
PACKETS=100000
SEED=1

rc_fuzz() {
	run_fuzzer "$RC_FUZZ" "$PACKETS" "$SEED"
}

for_each_backend rc_fuzz
