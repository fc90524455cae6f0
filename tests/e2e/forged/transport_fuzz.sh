#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Fuzz of the packet path of UD, UC, XRC and DC (tests/e2e/forged/transport_fuzz.c):
# 100k mutated RoCEv2 packets with correct ICRCs at a UD QP, a UC QP, an
# XRC target and a DCT. No byte of an MR without remote rights changes, the
# UD QP stays in RTS, the daemon neither crashes nor reports a
# sanitizer error, and it answers `rocemu status` after.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
TRANSPORT_FUZZ=$top_builddir/tests/e2e/forged/transport_fuzz
require_built "$TRANSPORT_FUZZ"
use_test_net 176
# Bound on the host (not the default private wire of loopback devices): its fuzzer sends to the devices from outside the daemon.
export ROCEMU_WIRE=host
PACKETS=100000
SEED=1

transport_fuzz() {
	run_fuzzer "$TRANSPORT_FUZZ" "$PACKETS" "$SEED"
}

for_each_backend transport_fuzz
