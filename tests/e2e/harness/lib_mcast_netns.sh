# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced first by the tests that send multicast over loopback, which needs
# lo's MULTICAST flag and a route for 224.0.0.0/4: set in the test's own
# network namespace (a skip where they cannot be).
NETNS_REQUIRED=1
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
if ! { ip link set lo up && ip link set lo multicast on &&
	ip route add 224.0.0.0/4 dev lo; } 2>/dev/null; then
	echo "SKIP: $(basename "$0" .sh): cannot enable multicast on lo in the test's network namespace"
	exit 77
fi
