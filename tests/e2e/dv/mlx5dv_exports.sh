#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every mlx5dv_*/mlx4dv_* export of the installed libmlx5 and libmlx4 on an
# emulated device (tests/e2e/dv/mlx5dv_exports.c): each is called there on
# emulated objects, or listed as taking only objects the real provider makes.
# The calls run against tripwire libraries of the same sonames and symbol
# versions whose every function aborts, so none may reach the real provider.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MLX5DV_EXPORTS=$top_builddir/tests/e2e/dv/mlx5dv_exports
require_built "$MLX5DV_EXPORTS"
require_programs cc nm objdump
use_test_net 230
TRIPWIRE_DIR=$WORK_DIR/tripwire
REAL_LIBS=$(ldd "$MLX5DV_EXPORTS" | awk '/libmlx[45]\.so/ { print $3 }')

# make_tripwire LIB: a library in TRIPWIRE_DIR with LIB's soname and every
# versioned function LIB exports, each printing its name and aborting.
make_tripwire() {
	local lib=$1 soname src

	soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
	src=$TRIPWIRE_DIR/$soname
	{
		printf '#include <stdio.h>\n#include <stdlib.h>\n'
		printf 'static void tripwire(const char *name)\n{\n'
		printf '\tfprintf(stderr, "tripwire: the real provider reached: %%s\\n", name);\n\tabort();\n}\n'
		nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /@/ {
			n++
			printf "void tripwire_%d(void) { tripwire(\"%s\"); }\n", n, $3
			printf "__asm__(\".symver tripwire_%d, %s\");\n", n, $3
		}'
	} >"$src.c"
	nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /@/ { sub(/^[^@]*@+/, "", $3); print $3 " { };" }' |
		sort -u >"$src.map"
	cc -shared -fPIC -o "$TRIPWIRE_DIR/$soname" "$src.c" -Wl,--version-script="$src.map" \
		-Wl,-soname,"$soname" >>"$COMMANDS_LOG" 2>&1 || fail "cannot build the tripwire $soname"
}

mlx5dv_exports() {
	local lib name missing=

	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	LD_LIBRARY_PATH=$TRIPWIRE_DIR ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		capture 60 "$ROCEMU" run -- "$MLX5DV_EXPORTS" rocemu0 || fail "mlx5dv_exports failed"
	expect_none "^tripwire:" "no call reached the real libmlx5 or libmlx4"
	expect_checks_passed
	for lib in $REAL_LIBS; do
		for name in $(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u); do
			grep -Eq "^(ok: $name:|provider-only $name\$)" "$OUT" || missing="$missing $name"
		done
	done
	[ -z "$missing" ] || fail "exports neither called nor provider-only:$missing"
	ok "every export of libmlx5 and libmlx4 called on an emulated object or provider-only"
}

mkdir "$TRIPWIRE_DIR" || fail "mkdir $TRIPWIRE_DIR"
for lib in $REAL_LIBS; do
	make_tripwire "$lib"
done
[ "$(LD_LIBRARY_PATH=$TRIPWIRE_DIR ldd "$MLX5DV_EXPORTS" | grep -c "=> $TRIPWIRE_DIR/libmlx[45]\.so")" -eq 2 ] ||
	fail "the program does not load the tripwire libmlx5 and libmlx4"
ok "libmlx5 and libmlx4 are tripwires whose every function aborts"
for_each_backend mlx5dv_exports
