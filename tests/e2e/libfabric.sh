#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# libfabric's verbs provider (Debian's libfabric-bin, unmodified) sees
# rocemu's devices: fi_info -p verbs lists rocemu0 and rocemu1 as MSG
# endpoints over the RDMA CM, and their UD domains. libfabric ignores
# loopback interfaces, so the test gives the devices addresses on a veth
# pair in a network namespace of its own. fi_pingpong is not here yet: its
# server, given no address, has the provider bind "localhost" (127.0.0.1),
# which no device has (fi_getinfo -61), and so does fi_info -t FI_EP_MSG.
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
if ! { ip link set lo up && ip link add fia type veth peer name fib &&
	ip addr add 198.18.246.1/24 dev fia && ip addr add 198.18.246.2/24 dev fib &&
	ip link set fia up && ip link set fib up; } 2>/dev/null; then
	echo "SKIP: libfabric: cannot make a veth pair in the test's network namespace"
	exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v fi_info >/dev/null || skip "fi_info not installed (Debian package libfabric-bin)"
use_test_net 247

fi_info_lists() {
	local dev

	ROCEMU_DEVICES="rocemu0=198.18.246.1,rocemu1=198.18.246.2"
	export ROCEMU_DEVICES
	start_daemon
	capture 30 "$ROCEMU" run -- fi_info -p verbs || fail "fi_info -p verbs failed"
	for dev in rocemu0 rocemu1; do
		grep -A3 "domain: $dev\$" "$OUT" | grep -q "protocol: FI_PROTO_RDMA_CM_IB_RC" ||
			fail "fi_info -p verbs does not list $dev as an RDMA CM MSG domain"
		ok "fi_info -p verbs lists $dev: FI_EP_MSG, FI_PROTO_RDMA_CM_IB_RC"
	done
	expect "domain: rocemu0-dgram$" "fi_info -p verbs lists rocemu0's UD (dgram) domain"
}

for_each_backend fi_info_lists
