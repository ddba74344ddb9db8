#!/usr/bin/env bats
# lib/paths.sh where what a path derives from is missing: each path
# function fails, prints no path, and says once what to run; a step that
# asks for one stops there.  And, where the base is there, the paths keep
# the names the cache already holds (a renamed key would rebuild every
# kernel).

# shellcheck disable=SC2154 # stderr, stderr_lines: run --separate-stderr's
bats_require_minimum_version 1.5.0
load helpers

setup() {
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	K=$BATS_TEST_TMPDIR/linux
	# a Debian base from another suite, not fetched: 7.3's file says so
	export BASE=7.3
}

# no_path FUNCTION: FUNCTION fails, prints nothing on stdout, and one
# line on stderr that says what to run
no_path() {
	# shellcheck disable=SC2016 # the child shell's expansions
	run --separate-stderr bash -c '. "$1/lib.sh"; "$2"' _ "$SCRIPTS" "$1"
	printf 'status %s\nstdout [%s]\nstderr [%s]\n' "$status" "$output" "$stderr"
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "error: linux-source-7.3 is not fetched yet: run 'make source BASE=7.3'" ]]
}

@test "paths: with no base fetched, build_dir fails and prints nothing" {
	no_path build_dir
}

@test "paths: with no base fetched, every path function fails the same way" {
	local f
	for f in base_dir base_commit base_version series_dir tree_dir \
		 start_dir scratch_dir series_patches toolchain_dir; do
		echo "== $f"
		no_path "$f"
	done
	UNPATCHED=1 no_path tree_dir
	MUTANT=any no_path tree_dir
	MUTANT=any no_path mutant_key
}

@test "paths: a step that needs a path stops at it, with that one line" {
	run --separate-stderr "$SCRIPTS/steps/configure"
	printf 'status %s\nstdout [%s]\nstderr [%s]\n' "$status" "$output" "$stderr"
	[ "$status" -ne 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "error: linux-source-7.3 is not fetched yet: run 'make source BASE=7.3'" ]]
}

@test "paths: a KSRC tree not copied yet: build_dir says to run make source" {
	mkdir -p "$K/fs"
	printf 'VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n' >"$K/Makefile"
	echo 'int ep;' >"$K/fs/eventpoll.c"
	# shellcheck disable=SC2016 # the child shell's expansions
	BASE='' KSRC=$K run --separate-stderr bash -c '. "$1/lib.sh"; build_dir' _ "$SCRIPTS"
	[ "$status" -ne 0 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "error: no base tree in $EPOLL_DISABLE_CACHE/base/ksrc-"*": run 'make source'" ]]
}

@test "paths: with the base there, the keys are those the cache holds" {
	mkdir -p "$K/fs"
	printf 'VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n' >"$K/Makefile"
	echo 'int ep;' >"$K/fs/eventpoll.c"
	BASE='' KSRC=$K "$SCRIPTS/steps/source"
	# shellcheck disable=SC2016 # the child shell's expansions
	BASE='' KSRC=$K run bash -c '. "$1/lib.sh"; base_dir; tree_dir; build_dir' _ "$SCRIPTS"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	base=$EPOLL_DISABLE_CACHE/base/ksrc-$(realpath "$K" | sha1sum | cut -c1-12)
	commit=$(git -C "$base" rev-parse HEAD)
	key=$( { echo "$commit"; cat "$SCRIPTS"/../patches/v7.3/000[1-9]*.patch; } |
		sha1sum | cut -c1-12)
	[ "${lines[0]}" = "$base" ]
	[ "${lines[1]}" = "$EPOLL_DISABLE_CACHE/work/$(basename "$base")-$key" ]
	[[ ${lines[2]} == "${lines[1]}/build-"???????????? ]]
}
