#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdma-core's own Python tests of raw packet QPs, flows and RSS (those of
# the installed pyverbs: Debian's python3-pyverbs ships them in
# /usr/share/doc/rdma-core/tests, some gzipped), unmodified, under `rocemu run`
# on one device, as on a ConnectX-5: test_flow, test_rss_traffic,
# test_mlx5_raw_wqe and test_mlx5_flow, 11 tests. setUp finds the device's
# netdev by `ls /sys/class/infiniband/<dev>/device/net/` (the shim answers
# for the daemon's tree) and its IPv4 address and MAC by `ip -j addr show`:
# the device sits on a veth holding its address and its MAC. Every test
# must end as EXPECTED below says: ok, or skipped only where a ConnectX-5
# skips too, for the reason given; any change either way shows.
NETNS_REQUIRED=1
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
use_test_net 290

PYTHON=/usr/bin/python3		# Debian's, which has pyverbs
RDMA_CORE_TESTS=/usr/share/doc/rdma-core/tests
RDMA_CORE_SRC=$WORK_DIR/rdma-core	# a copy to run from, its tests/ unzipped
MODULES=(tests.test_flow tests.test_rss_traffic tests.test_mlx5_raw_wqe tests.test_mlx5_flow)
declare -A EXPECTED=(
	[test_eth_spec_flow_traffic]=ok
	[test_ipv4_spec_flow_traffic]=ok
	[test_ipv6_spec_flow_traffic]=ok
	[test_udp_spec_flow_traffic]=ok
	[test_tcp_spec_flow_traffic]=ok
	[test_rss_traffic]=ok
	[test_mixed_raw_wqe_traffic]=ok
	[test_create_empty_matcher]=ok
	[test_create_smac_matcher]=ok
	[test_smac_matcher_to_qp_flow]=ok
	# A ConnectX-5 whose kernel or user has no DevX skips it too: rocemu opens devices without DevX.
	[test_tx_packet_reformat]="skipped 'DevX general command is not supported': no DevX, as on a kernel without it"
)

# pyverbs' own allocations at exit are not the shim's to answer for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
"$PYTHON" -c 'import pyverbs' 2>/dev/null || skip "pyverbs not installed (Debian package python3-pyverbs)"
[ -f "$RDMA_CORE_TESTS/run_tests.py" ] ||
	skip "rdma-core's tests are not in $RDMA_CORE_TESTS (python3-pyverbs, installed without its docs?)"
mkdir -p "$RDMA_CORE_SRC" && cp -r "$RDMA_CORE_TESTS" "$RDMA_CORE_SRC/" &&
	gunzip -f "$RDMA_CORE_SRC"/tests/*.gz || fail "cannot copy and unzip $RDMA_CORE_TESTS"
require_programs ip

# rdma_core_device: a veth holding this backend's address and the port's MAC, the daemon's rocemu0 on it.
rdma_core_device() {
	local ip=198.18.236.$((BACKEND_INDEX + 1)) mac=02:00:c6:12:ec:0$((BACKEND_INDEX + 1))
	local link=rdc$BACKEND_INDEX

	ip link add "$link" type veth peer name "${link}p" &&
		ip link set "$link" address "$mac" &&
		ip addr add "$ip/24" dev "$link" &&
		ip link set "$link" up && ip link set "${link}p" up ||
		fail "cannot make the veth $link"
	ROCEMU_DEVICES="rocemu0=$ip/mac=$mac"
	export ROCEMU_DEVICES
	start_daemon
	capture 10 "$ROCEMU" run -- ls "/sys/class/infiniband/rocemu0/device/net/" ||
		fail "ls /sys/class/infiniband/rocemu0/device/net/ failed"
	expect "^$link\$" "ls lists rocemu0's netdev $link"
}

rdma_core_tests() {
	local name want got ran

	rdma_core_device
	(cd "$RDMA_CORE_SRC" && capture 900 "$ROCEMU" run -- \
		"$PYTHON" tests/run_tests.py -v --dev rocemu0 "${MODULES[@]}")
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\? in .*/\1/p' "$OUT")
	[ "$ran" = "${#EXPECTED[@]}" ] || fail "rdma-core ran ${ran:-no} tests, not ${#EXPECTED[@]}"
	ok "rdma-core ran its ${#EXPECTED[@]} tests"
	# unittest -v: "NAME (CLASS) ... RESULT", or the name, then a docstring line ending "... RESULT".
	awk '/^test_[a-z0-9_]+ \(/ { name = $1 } / \.\.\. / && name { sub(/.* \.\.\. /, ""); print name "|" $0; name = "" }' \
		"$OUT" >"$WORK_DIR/results"
	for name in $(printf '%s\n' "${!EXPECTED[@]}" | sort); do
		want=${EXPECTED[$name]%%:*}
		got=$(sed -n "s/^$name|//p" "$WORK_DIR/results")
		[ "$got" = "$want" ] || fail "$name: '$got', expected '${EXPECTED[$name]}'"
		if [ "$want" = ok ]; then
			ok "$name passes"
		else
			echo "as on a ConnectX-5: $name ${EXPECTED[$name]}"
		fi
	done
	echo "rdma-core: $(grep -c '|ok$' "$WORK_DIR/results") passed," \
		"$(grep -c '|skipped' "$WORK_DIR/results") skipped, $(grep -c '|ERROR$' "$WORK_DIR/results") errors"
}

for_each_backend rdma_core_tests
