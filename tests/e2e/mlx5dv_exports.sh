#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every mlx5dv_*/mlx4dv_* export of the installed libmlx5 and libmlx4 on an
# emulated device (tests/e2e/mlx5dv_exports.c): each is called there on
# emulated objects, or listed as taking only objects the real provider makes.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MLX5DV_EXPORTS=$top_builddir/tests/e2e/mlx5dv_exports
require_built "$MLX5DV_EXPORTS"
use_test_net 230

mlx5dv_exports() {
	local lib name missing=

	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MLX5DV_EXPORTS" rocemu0 ||
		fail "mlx5dv_exports failed"
	expect "^0 failed$" "every check passed ($(grep -c '^ok: ' "$OUT") checks)"
	for lib in $(ldd "$MLX5DV_EXPORTS" | awk '/libmlx[45]\.so/ { print $3 }'); do
		for name in $(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u); do
			grep -Eq "^(ok: $name:|provider-only $name\$)" "$OUT" || missing="$missing $name"
		done
	done
	[ -z "$missing" ] || fail "exports neither called nor provider-only:$missing"
	ok "every export of libmlx5 and libmlx4 called on an emulated object or provider-only"
}

for_each_backend mlx5dv_exports
