#!/usr/bin/env bats
# scripts/steps/cache on a cache of small fake trees and builds: what prune
# removes and in what order, what it leaves to a live run, and the one
# line of a step that finds too little disk (lib/prune.sh: need_disk)

load helpers

# unit PATH MB AGE: a tree or build of MB megabytes, last used AGE
# minutes ago
unit() {
	mkdir -p "$C/$1"
	head -c $(($2 << 20)) /dev/zero >"$C/$1/blob"
	touch -d "-$3 minutes" "$C/$1.used"
}

setup() {
	C=$BATS_TEST_TMPDIR/cache
	export EPOLL_DISABLE_CACHE=$C
	unit base/debian-7.3 4 50
	unit base/debian-7.3/build-u 2 45
	unit work/debian-7.3-old 4 40
	unit work/debian-7.3-old/build-a 2 40
	unit work/debian-7.3-new 4 5
	unit work/debian-7.3-new/build-a 2 5
	unit base/debian-6.1 4 30
	unit work/debian-6.1-s1 4 30
}

left() { (cd "$C" && find base work -mindepth 1 -maxdepth 2 -type d | sort | xargs); }

@test "cache: within its cap, prune removes nothing" {
	EPOLL_DISABLE_CACHE_MAX=100M run "$SCRIPTS/steps/cache" prune
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(left)" = "base/debian-6.1 base/debian-7.3 base/debian-7.3/build-u work/debian-6.1-s1 work/debian-7.3-new work/debian-7.3-new/build-a work/debian-7.3-old work/debian-7.3-old/build-a" ]
}

@test "cache: over its cap, the least recently used go first, until it fits" {
	EPOLL_DISABLE_CACHE_MAX=20M run "$SCRIPTS/steps/cache" prune
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	# 7.3's base is as recent as its newest tree: its unpatched build
	# goes first, then the old tree's build and the tree
	[ "$(left)" = "base/debian-6.1 base/debian-7.3 work/debian-6.1-s1 work/debian-7.3-new work/debian-7.3-new/build-a" ]
	[ "$(du -sb "$C" | cut -f1)" -le $((20 << 20)) ]
}

@test "cache: prune BYTES makes room for what a step is about to write" {
	EPOLL_DISABLE_CACHE_MAX=27M run "$SCRIPTS/steps/cache" prune $((7 << 20))
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$(left)" = "base/debian-6.1 base/debian-7.3 work/debian-6.1-s1 work/debian-7.3-new work/debian-7.3-new/build-a" ]
}

@test "cache: a base goes with the trees made from it" {
	touch -d "-1 minutes" "$C/base/debian-7.3.used" "$C/base/debian-7.3/build-u.used" \
		"$C/work/debian-7.3-old.used" "$C/work/debian-7.3-old/build-a.used"
	EPOLL_DISABLE_CACHE_MAX=22M run "$SCRIPTS/steps/cache" prune
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$(left)" = "base/debian-7.3 base/debian-7.3/build-u work/debian-7.3-new work/debian-7.3-new/build-a work/debian-7.3-old work/debian-7.3-old/build-a" ]
}

@test "cache: what a live run uses stays, over the cap; a dead run's list does not count" {
	mkdir -p "$C/runs"
	echo "$C/work/debian-7.3-old/build-a" >"$C/runs/$$"
	dead=$(sh -c 'echo $$')
	echo "$C/base/debian-7.3/build-u" >"$C/runs/$dead"
	EPOLL_DISABLE_CACHE_MAX=1M run "$SCRIPTS/steps/cache" prune
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$(left)" = "base/debian-7.3 work/debian-7.3-old work/debian-7.3-old/build-a" ]
	[ ! -e "$C/runs/$dead" ]
}

@test "cache: clean empties it, and refuses while a run uses it" {
	mkdir -p "$C/runs"
	echo "$C/work/debian-7.3-new" >"$C/runs/$$"
	run "$SCRIPTS/steps/cache" clean
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "error: a run is using the cache ($C/work/debian-7.3-new): stop it, or wait, then run 'make cache-clean' again" ]]
	[ -d "$C/work/debian-7.3-new" ]
	rm "$C/runs/$$"
	run "$SCRIPTS/steps/cache" clean
	[ "$status" -eq 0 ]
	[ ! -e "$C" ]
}

@test "cache: a bad cap stops with one line" {
	EPOLL_DISABLE_CACHE_MAX=lots run "$SCRIPTS/steps/cache" prune
	[ "$status" -ne 0 ]
	[ "$output" = "error: EPOLL_DISABLE_CACHE_MAX=lots: give a size such as 30G or 500M" ]
}

@test "need_disk: too little room stops with one line: how much, where, what to do" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho Avail\necho 1048576\n' >"$BATS_TEST_TMPDIR/bin/df"
	chmod +x "$BATS_TEST_TMPDIR/bin/df"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH EPOLL_DISABLE_CACHE_MAX=100G \
		run bash -c '. "$1/lib.sh"; need_disk $((2 << 30)) "a kernel build"' _ "$SCRIPTS"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" = "error: a kernel build needs 2.0G free in $C, which has 1.0M: free some space there, or lower EPOLL_DISABLE_CACHE_MAX, or move the cache (EPOLL_DISABLE_CACHE=)" ]
}

@test "cache: each upstream tree of followups/ is a unit, and goes by its last use" {
	unit followups/glibc-old 3 60
	unit followups/glibc-new 3 1
	EPOLL_DISABLE_CACHE_MAX=32M run "$SCRIPTS/steps/cache" prune
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$C/followups/glibc-old" ]
	[ -d "$C/followups/glibc-new" ]
}

@test "cache: a follow-up's cache is one unit, and goes by its last use" {
	unit strace/bookworm-1 3 60
	unit strace/bookworm-2 3 1
	touch -d "-60 minutes" "$C/strace.used"
	unit notaproject/x 3 60
	EPOLL_DISABLE_CACHE_MAX=32M run "$SCRIPTS/steps/cache" prune
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$C/strace" ]
	[ -d "$C/notaproject/x" ]
	[ "$(left)" = "base/debian-6.1 base/debian-7.3 base/debian-7.3/build-u work/debian-6.1-s1 work/debian-7.3-new work/debian-7.3-new/build-a work/debian-7.3-old work/debian-7.3-old/build-a" ]
}
