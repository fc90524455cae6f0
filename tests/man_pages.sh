#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The manual pages render without a warning (as `man -l` and lintian render
# them, and mandoc -Tlint where installed), and stay with the code: every
# command and option of `rocemu --help` and `rocemud --help` has its entry,
# and every ROCEMU_* variable the sources read is in rocemu(7).
set -u

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
PAGES=(man/rocemu.1 man/rocemu.7 man/rocemud.8)
failures=0

fail() {
	echo "FAIL: man_pages: $*"
	failures=$((failures + 1))
}

command -v groff >/dev/null || { echo "SKIP: man_pages: groff not installed (groff-base)"; exit 77; }

# text PAGE: the page as plain text on wide lines, no hyphenation at line ends.
text() {
	groff -man -Tascii -P-cbou -rLL=250n -rHY=0 "$top_srcdir/$1" 2>/dev/null
}

for page in "${PAGES[@]}"; do
	[ -f "$top_srcdir/$page" ] || { fail "$page is missing"; continue; }
	warnings=$(groff -man -ww -z "$top_srcdir/$page" 2>&1)
	[ -z "$warnings" ] || fail "groff warns about $page: $warnings"
	if command -v man >/dev/null; then
		warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
			man --warnings -E UTF-8 -l -Tutf8 -Z "$top_srcdir/$page" 2>&1 >/dev/null)
		[ -z "$warnings" ] || fail "man -l warns about $page: $warnings"
	fi
	if command -v mandoc >/dev/null; then
		warnings=$(mandoc -Tlint -Wwarning "$top_srcdir/$page" 2>&1)
		[ -z "$warnings" ] || fail "mandoc -Tlint warns about $page: $warnings"
	fi
done
[ "$failures" -eq 0 ] && echo "ok: ${PAGES[*]} render without warnings"

# rocemu(1): each help line "  COMMAND ARGS[  text]" has an entry "COMMAND ..." in
# COMMANDS with the options (--json, -w...) of the help line.
before=$failures
entries=$(text man/rocemu.1 | sed -n '/^COMMANDS/,/^EXIT STATUS/p' | grep -E '^ {7}[^ ]')
help=$("$top_builddir/tools/rocemu" --help) || fail "rocemu --help failed"
commands=0
while read -r name args; do
	entry=$(grep -E "^ {7}$name( |,|\$)" <<<"$entries")
	commands=$((commands + 1))
	if [ -z "$entry" ]; then
		fail "rocemu(1) has no entry for \"$name\" of rocemu --help"
		continue
	fi
	for option in $(grep -oE -- '(^| )--?[a-z][a-z-]*' <<<"$args"); do
		grep -qE -- " $option( |,|\$)" <<<"$entry" || fail "rocemu(1): \"$name\" lacks $option"
	done
done < <(sed -n 's/^  \([-a-z]\{1,\}\)\(\( [^ ]\{1,\}\)*\)\( .*\)\{0,1\}$/\1\2/p' <<<"$help")
[ "$commands" -ge 8 ] || fail "found $commands commands in rocemu --help"
[ "$failures" -eq "$before" ] && echo "ok: rocemu(1) has the $commands commands of rocemu --help"

# rocemud(8): every option of rocemud --help under OPTIONS.
before=$failures
options=$(text man/rocemud.8 | sed -n '/^OPTIONS/,/^ENVIRONMENT/p')
help=$("$top_builddir/tools/rocemud" --help) || fail "rocemud --help failed"
count=0
for option in $(grep -oE -- '(^| )--?[a-z][a-z-]*' <<<"$help"); do
	count=$((count + 1))
	grep -qE -- "(^| )$option( |,|\$)" <<<"$options" || fail "rocemud(8) lacks $option"
done
[ "$count" -ge 5 ] || fail "found $count options in rocemud --help"
[ "$failures" -eq "$before" ] && echo "ok: rocemud(8) has the $count options of rocemud --help"

# rocemu(7): every ROCEMU_* variable the sources read, and those both --help texts name
before=$failures
environment=$(text man/rocemu.7 | sed -n '/^ENVIRONMENT/,/^FILES/p')
# (a variable's name is a string of its own where it is read: getenv, env_uint, find_file).
variables=$( (cd "$top_srcdir" && grep -rhoE '"ROCEMU_[A-Z_]+"' emulator lib net tools include
	      "$top_builddir/tools/rocemu" --help; "$top_builddir/tools/rocemud" --help) |
	    grep -oE 'ROCEMU_[A-Z_]+' | sort -u)
count=0
for variable in $variables; do
	count=$((count + 1))
	grep -qE "^ {7}$variable\$" <<<"$environment" || fail "rocemu(7) does not describe $variable"
done
[ "$count" -ge 12 ] || fail "found only $count ROCEMU_* variables in the sources"
[ "$failures" -eq "$before" ] && echo "ok: rocemu(7) describes the $count ROCEMU_* variables the sources read"

[ "$failures" -eq 0 ] || exit 1
