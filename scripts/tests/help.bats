#!/usr/bin/env bats
# make help and the READMEs: every "make TARGET" that README, or a README
# one directory down (bench/, model/, patches/, scripts/, ...), tells a
# person to run is a target make help lists, and every target make help
# lists is one the Makefile has.  make -n and -p only: nothing is built.

load helpers

setup() {
	TOP=$(dirname "$SCRIPTS")
}

# help_targets: the first word of each line of make help, up to the
# blank line before its legend
help_targets() {
	make -s -C "$TOP" --no-print-directory help | awk '/^$/ { exit } { print $1 }'
}

# named_targets: each "make WORD" of the READMEs, once; not "make -C DIR",
# and not a pattern such as "make check-<project>"
named_targets() {
	(cd "$TOP" && find . -maxdepth 2 -name README -exec \
		grep -ohE 'make [a-z][a-z0-9<>_-]*' {} +) |
		awk '$2 !~ /</ { print $2 }' | sort -u
}

@test "help: lists each target with a line that says what it does" {
	run help_targets
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 20 ]
	for t in run test help check-tools; do
		grep -qx "$t" <<<"$output"
	done
	# a line each: a target, then words; then the legend of the marks
	run make -s -C "$TOP" --no-print-directory help
	not grep -vE '^[a-z][a-z0-9-]* +[^ ].*' <<<"$(sed '/^$/,$d' <<<"$output")"
	grep -q '^\[kernel\]: builds a kernel' <<<"$output"
}

@test "help: the targets that build a kernel or boot a guest say so, with a time" {
	run make -s -C "$TOP" --no-print-directory help
	for t in run test build mutants check-arches bench; do
		grep -qE "^$t +\[[^]]*(kernel|guest)[^]]*[0-9]+ min" <<<"$output"
	done
	# and those that do neither do not
	for t in patches help cache-size deps; do
		not grep -qE "^$t +\[" <<<"$output"
	done
}

@test "help: every target it lists is a target of the Makefile" {
	local db t missing=''
	db=$(make -C "$TOP" --no-print-directory -pn help 2>/dev/null)
	for t in $(help_targets); do
		grep -qE "^$t:( [^=]*)?\$" <<<"$db" || missing="$missing $t"
	done
	printf 'not targets:%s\n' "$missing"
	[ -z "$missing" ]
}

@test "help: every make command the READMEs name is in make help" {
	local named listed t missing=''
	named=$(named_targets)
	listed=$(help_targets)
	printf 'named: %s\n' "$(xargs <<<"$named")"
	grep -qx run <<<"$named"
	grep -qx test <<<"$named"
	for t in $named; do
		grep -qx "$t" <<<"$listed" || missing="$missing $t"
	done
	printf 'not in make help:%s\n' "$missing"
	[ -z "$missing" ]
}

@test "help: make test covers the bases scripts/lib/bases.sh lists, each" {
	local want b
	want=$(sed -n 's/^DEFAULT_BASES="\(.*\)"$/\1/p' "$SCRIPTS/lib/bases.sh")
	[ -n "$want" ]
	run make -s -C "$TOP" --no-print-directory -n test-steps
	[ "$status" -eq 0 ]
	for b in $want; do
		grep -q "test-base .*BASE=$b BASE_LABEL=v$b\b" <<<"$output"
	done
}

@test "help: make test BASES=default LINUX_TARBALL= covers the bases, then the tarball" {
	local want b order=
	want=$(sed -n 's/^DEFAULT_BASES="\(.*\)"$/\1/p' "$SCRIPTS/lib/bases.sh")
	run make -s -C "$TOP" --no-print-directory -n test-steps BASES=default LINUX_TARBALL=/x/linux-3.6.tar.xz
	[ "$status" -eq 0 ]
	order=$(grep -o 'test-base [^&]*' <<<"$output" | sed 's/ *$//')
	printf '%s\n' "$order"
	[ "$(wc -l <<<"$order")" -eq $(($(wc -w <<<"$want") + 1)) ]
	for b in $want; do
		grep -qx "test-base LINUX_TARBALL= BASE=$b BASE_LABEL=v$b" <<<"$order"
	done
	[ "$(tail -n 1 <<<"$order")" = "test-base BASE= BASE_LABEL=linux-3.6.tar.xz" ]
}

# second BASE VALUE: make -n of test-base on BASE with SECOND_KERNEL=VALUE
second() {
	make -s -C "$TOP" --no-print-directory -n test-base BASE="$1" \
		BASE_LABEL="v$1" SECOND_KERNEL="$2"
}

@test "help: SECOND_KERNEL=all, lead and none give the second kernel to all, the lead, none" {
	local lead
	lead=$(sed -n 's/^DEFAULT_BASES="\([^ ]*\).*"$/\1/p' "$SCRIPTS/lib/bases.sh")
	for v in all lead; do
		run second "$lead" "$v"
		[ "$status" -eq 0 ]
		grep -q 'check-bisect' <<<"$output"
		grep -q 'UNPATCHED=1 scripts/checks/check-guest unpatched' <<<"$output"
	done
	run second 6.1 all
	[ "$status" -eq 0 ]
	grep -q 'check-bisect' <<<"$output"
	grep -q 'check-guest unpatched' <<<"$output"
	for b in "6.1 lead" "6.1 none" "$lead none"; do
		# shellcheck disable=SC2086 # a base and a value
		run second $b
		[ "$status" -eq 0 ]
		not grep -q 'check-bisect\|check-guest unpatched\|check-warnings' <<<"$output"
		grep -q 'check-guest test' <<<"$output"
		grep -q "# v${b% *}: SECOND_KERNEL=${b#* }: .* are left to make test" <<<"$output"
	done
	run make -s -C "$TOP" --no-print-directory -n test-base SECOND_KERNEL=some
	[ "$status" -ne 0 ]
	grep -q 'SECOND_KERNEL=some is not all, lead or none' <<<"$output"
}
