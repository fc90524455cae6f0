# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced first by a test that needs a network namespace of its own: the
# test runs again inside one (a skip where none can be created).
if [ -z "${ROCEMU_TEST_NETNS:-}" ]; then
	if ! unshare -n true 2>/dev/null; then
		echo "SKIP: $(basename "$0" .sh): cannot create a network namespace here (unshare -n needs root)"
		exit 77
	fi
	ROCEMU_TEST_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
