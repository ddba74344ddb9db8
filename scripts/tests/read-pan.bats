#!/usr/bin/env bats
# scripts/checks/read-pan on pan's and spin's recorded output (data/pan/): the
# verdicts check-model records, without spin

load helpers

setup() {
	P=$DATA/pan
	TRAIL=$BATS_TEST_TMPDIR/trail
	echo '-4:-4:-4' >"$TRAIL"
}

@test "read-pan: an exhaustive search with no error is clean" {
	run "$SCRIPTS/checks/read-pan" clean "$P/clean.out" 2000
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "read-pan: a search cut short by -m is not clean, and says so" {
	run "$SCRIPTS/checks/read-pan" clean "$P/short.out" 40
	[ "$status" -eq 1 ]
	[ "$output" = "search not exhaustive: error: max search depth too small" ]
}

@test "read-pan: a search whose depth reached -m is not clean" {
	run "$SCRIPTS/checks/read-pan" clean "$P/clean.out" 54
	[ "$status" -eq 1 ]
	[[ $output == "depth "*" reached -m54" ]]
}

@test "read-pan: the use after free is not clean, and is named" {
	run "$SCRIPTS/checks/read-pan" clean "$P/uaf.out" 2000
	[ "$status" -eq 1 ]
	[[ $output == "use after free: pan:1: assertion violated (nfree[i]==0)"* ]]
}

@test "read-pan: the use after free with its trail is the uaf verdict" {
	run "$SCRIPTS/checks/read-pan" uaf "$P/uaf.out" "$TRAIL"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "read-pan: no uaf verdict without the trail, or from a clean search" {
	run "$SCRIPTS/checks/read-pan" uaf "$P/uaf.out" "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 1 ]
	run "$SCRIPTS/checks/read-pan" uaf "$P/clean.out" "$TRAIL"
	[ "$status" -eq 1 ]
	[ "$output" = "expected the use after free, got: no error reported" ]
}

@test "read-pan: stats give the states and the depth" {
	run "$SCRIPTS/checks/read-pan" stats naive-r2-i1 bfs 1.25 <"$P/uaf.out"
	[ "$status" -eq 0 ]
	[[ $output == "# naive-r2-i1: "[0-9]*" states, depth "[0-9]*" (breadth first, up to the error), search "*" s, 1.25 s with compiling" ]]
	run "$SCRIPTS/checks/read-pan" stats r safety 1 </dev/null
	[ "$output" = "# r: ? states, depth ?, search ? s, 1 s with compiling" ]
}

@test "read-pan: the trail, one line a step, by role, up to the assertion" {
	run "$SCRIPTS/checks/read-pan" trail 2 <"$P/uaf.replay"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 9 ]
	[ "${lines[0]}" = "#   wakeup:   data on item 0 (READY)" ]
	[ "${lines[1]}" = "#   deleter:  lock item 0" ]
	[ "${lines[3]}" = "#   reader 2: epoll_wait -> item 0" ]
	[ "${lines[8]}" = "#   reader 2: assert((nfree[i]==0)) fails: use after free" ]
}

@test "read-pan: a wrong call says how to call it" {
	run "$SCRIPTS/checks/read-pan" clean "$P/clean.out"
	[ "$status" -eq 1 ]
	[[ $output == "error: usage: read-pan "* ]]
}
