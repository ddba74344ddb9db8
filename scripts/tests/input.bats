#!/usr/bin/env bats
# Bad input at the real entry points: make run with a BASE= or KSRC= that
# names no kernel the series fits, and a user's check with its program's
# tree missing.  Each stops with one line of its own, "error: ...", that
# names the variable and says what to pass, and writes nothing into the
# directory it was given.  (make's own "*** ... Error N" lines follow it.)

# shellcheck disable=SC2154 # stderr: run --separate-stderr's
bats_require_minimum_version 1.5.0
load helpers

setup() {
	TOP=$(dirname "$SCRIPTS")
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	# a make of its own, not one more job of the make that runs the tests
	unset MAKEFLAGS MFLAGS MAKELEVEL GLUSTERFS GLIBC NTIRPC
	D=$BATS_TEST_TMPDIR/given
	mkdir -p "$D"
}

# sums: every file under the given directory, with its content
sums() { (cd "$D" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum; }

# one_line PATTERN MAKE-ARGS...: make fails, says one line of its own,
# which matches PATTERN, and leaves the given directory as it was
one_line() {
	local pattern=$1 before
	shift
	before=$(sums)
	run --separate-stderr make -s -C "$TOP" --no-print-directory "$@"
	printf 'status %s\nstderr:\n%s\n' "$status" "$stderr"
	[ "$status" -ne 0 ]
	mine=$(grep -v '^make\(\[[0-9]*\]\)\?: \*\*\*' <<<"$stderr")
	[ "$(wc -l <<<"$mine")" -eq 1 ]
	[[ $mine == error:\ $pattern ]]
	[ "$(sums)" = "$before" ]
}

@test "input: BASE= no Debian base of the series names the bases" {
	one_line "BASE=9.9 is not a Debian base of the series (BASE= takes one of: *" run BASE=9.9
}

@test "input: KSRC= a file says to point KSRC at a tree" {
	echo 'not a tree' >"$D/file"
	one_line "KSRC=$D/file is not a directory: point KSRC at *" run KSRC="$D/file"
}

@test "input: KSRC= an empty directory says it is not a kernel tree" {
	one_line "KSRC=$D is not a kernel tree * point KSRC at *" run KSRC="$D"
}

@test "input: KSRC= another project's git checkout says it is not a kernel tree" {
	mkdir -p "$D/src"
	echo 'int main(void) { return 0; }' >"$D/src/main.c"
	echo 'cmake_minimum_required(VERSION 3.10)' >"$D/CMakeLists.txt"
	git -C "$D" init -q
	git -C "$D" add -A
	git -C "$D" -c user.name=t -c user.email=t@t commit -q -m other
	one_line "KSRC=$D is not a kernel tree * point KSRC at *" run KSRC="$D"
}

@test "input: KSRC= a directory with some other Makefile says it is not a kernel tree" {
	printf 'VERSION = 2\nall:\n\ttrue\n' >"$D/Makefile"
	one_line "KSRC=$D is not a kernel tree * point KSRC at *" run KSRC="$D"
}

@test "input: KSRC= a kernel of another version names the supported ones" {
	mkdir -p "$D/fs"
	printf 'VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 1\n' >"$D/Makefile"
	echo 'int ep;' >"$D/fs/eventpoll.c"
	one_line "Linux 5.10.1 is not a supported base (supported: 7.3 6.12 6.1 3.6)*" run KSRC="$D"
}

@test "input: a user's check with no tree says what to pass, before any kernel" {
	one_line "no GlusterFS tree: give a git checkout of GlusterFS, as in 'make check-glusterfs GLUSTERFS=*" check-glusterfs
	[ ! -e "$EPOLL_DISABLE_CACHE/base" ]
}

@test "input: a user's check given a directory that is not its program's tree says so" {
	one_line "GLUSTERFS=$D is not a GlusterFS tree *" check-glusterfs GLUSTERFS="$D"
}

@test "input: a follow-up's check with its tree missing says what to pass" {
	one_line "GLIBC=$D/none is not a directory: give a git clone of * as in 'make check-glibc GLIBC=*" check-glibc GLIBC="$D/none"
	[ ! -e "$EPOLL_DISABLE_CACHE/base" ]
}

@test "input: ntirpc's check with no tree says what to pass, before any kernel" {
	one_line "no ntirpc tree: give a git checkout of ntirpc, as in 'make check-ntirpc NTIRPC=*" check-ntirpc
	[ ! -e "$EPOLL_DISABLE_CACHE/base" ]
}
