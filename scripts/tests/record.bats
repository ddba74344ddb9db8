#!/usr/bin/env bats
# scripts/checks/record and scripts/checks/summary as make test runs them: one process
# per check, the count in RESULTS, the base in BASE_LABEL

load helpers

setup() {
	export RESULTS=$BATS_TEST_TMPDIR/results
	: >"$RESULTS"
}

rec() { "$SCRIPTS/checks/record" "$@"; }

@test "record: the numbering runs across steps and bases" {
	run rec ok "host: selftest builds"
	[ "$output" = "ok 1 - host: selftest builds" ]
	BASE_LABEL=v7.3 run rec fail "kernel builds" "make failed
twice"
	[ "${lines[0]}" = "not ok 2 - v7.3: kernel builds" ]
	[ "${lines[1]}" = "#   make failed" ]
	[ "${lines[2]}" = "#   twice" ]
	BASE_LABEL=v6.1 run rec ok "v6.1: patches apply"
	# a name that starts with its base already keeps one
	[ "$output" = "ok 3 - v6.1: patches apply" ]
	[ "$(cat "$RESULTS")" = "ok
fail v7.3
ok v6.1" ]
}

@test "record: without RESULTS, a step counts its own checks" {
	unset RESULTS
	run bash -c '. "$1/lib.sh"; record ok a; record fail b; record ok c' - "$SCRIPTS"
	[ "${lines[0]}" = "ok 1 - a" ]
	[ "${lines[1]}" = "not ok 2 - b" ]
	[ "${lines[2]}" = "ok 3 - c" ]
}

@test "summary: the plan line, the count and success when all passed" {
	rec ok a >/dev/null
	rec ok b >/dev/null
	run "$SCRIPTS/checks/summary"
	[ "$status" -eq 0 ]
	[ "$output" = "1..2
2 passed, 0 failed" ]
	# a RESULTS given by hand stays
	[ -f "$RESULTS" ]
}

@test "summary: a line per base, and failure when a check failed" {
	rec ok "host" >/dev/null
	BASE_LABEL=v7.3 rec ok a >/dev/null
	BASE_LABEL=v7.3 rec fail b >/dev/null
	BASE_LABEL=v6.12 rec ok a >/dev/null
	BASE_LABEL=v6.1 rec fail a >/dev/null
	BASE_LABEL=v6.1 rec fail b >/dev/null
	run "$SCRIPTS/checks/summary"
	[ "$status" -eq 1 ]
	[ "$output" = "# v7.3: 1 passed, 1 failed
# v6.12: 1 passed, 0 failed
# v6.1: 0 passed, 2 failed
1..6
3 passed, 3 failed" ]
}

@test "summary: one base gets no per-base line" {
	BASE_LABEL=v6.12 rec ok a >/dev/null
	BASE_LABEL=v6.12 rec fail b >/dev/null
	run "$SCRIPTS/checks/summary"
	[ "$status" -eq 1 ]
	[ "$output" = "1..2
1 passed, 1 failed" ]
}

@test "summary: no check recorded is a failure, not a pass" {
	run "$SCRIPTS/checks/summary"
	[ "$status" -eq 1 ]
	grep -q '^error: no checks were recorded' <<<"$output"
	unset RESULTS
	run "$SCRIPTS/checks/summary"
	[ "$status" -eq 1 ]
}

@test "summary: the Makefile's own results file goes when counted" {
	RESULTS=$BATS_TEST_TMPDIR/epoll-disable-results.12345
	: >"$RESULTS"
	rec ok a >/dev/null
	run "$SCRIPTS/checks/summary"
	[ "$status" -eq 0 ]
	[ ! -e "$RESULTS" ]
}
