#!/usr/bin/env bats
# guest-flake, the guest's side of make flake, on the host: its kernel
# has no op (check-host's plan says so), so every run of the selftest
# skips, and a skip is a failure where the op must be there.

load helpers

@test "flake: runs that skip are failures, counted and shown" {
	local bin=$BATS_TEST_TMPDIR/bin top
	mkdir -p "$bin"
	top=$(dirname "$SCRIPTS")
	make -s -C "$top/tools-testing-selftests-epoll" OUTPUT="$bin" \
		KSELFTEST="$top/tools-testing-selftests-epoll/v3.6" >/dev/null
	PATH=$bin:$PATH run sh "$SCRIPTS/guest/guest-flake" 2
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q '^flake: 2 runs under [0-9]* busy loops, 2 failed; slowest: ' <<<"$output"
	grep -q '^run 1: epoll_disable_test exited 4:' <<<"$output"
	grep -q '^run 2: epoll_disable_stress exited 4:' <<<"$output"
}
