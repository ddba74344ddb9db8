#!/usr/bin/env bats
# Bad input at the real entry points: make with a BASE=, KSRC= or
# LINUX_TARBALL= that names no kernel the series fits, a value the guest
# or a check cannot take, a user's check with its program's tree missing,
# a target the Makefile does not have.  Each stops at once with one line
# of its own, "error: ...", that names the variable and says what to
# pass, writes nothing into the directory it was given, and installs
# nothing: dpkg-query and apt-get are stubs here that say every package
# is missing and record any install, so a step that installs before it
# looks at its input fails these tests on any machine.  (make's own
# "*** ... Error N" lines follow the one line.)

# shellcheck disable=SC2154 # stderr: run --separate-stderr's
bats_require_minimum_version 1.5.0
load helpers

setup() {
	TOP=$(dirname "$SCRIPTS")
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	# a make of its own, not one more job of the make that runs the tests
	unset MAKEFLAGS MFLAGS MAKELEVEL GLUSTERFS GLIBC NTIRPC SMP MEM TIMEOUT \
		ACCEL N ARCHES EXTRA_FRAGMENT LINUX_TARBALL
	D=$BATS_TEST_TMPDIR/given
	mkdir -p "$D"
	# a machine that has none of the packages, and records each install
	INSTALLS=$BATS_TEST_TMPDIR/installs
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/dpkg-query"
	printf '#!/bin/sh\necho "apt-get $*" >>%s\nexit 1\n' "$INSTALLS" \
		>"$BATS_TEST_TMPDIR/bin/apt-get"
	chmod +x "$BATS_TEST_TMPDIR"/bin/*
	PATH=$BATS_TEST_TMPDIR/bin:$PATH
}

# sums: every file under the given directory, with its content
sums() { (cd "$D" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum; }

# one_line PATTERN MAKE-ARGS...: make fails within 5 seconds, says one
# line of its own, which matches PATTERN, installs nothing, and leaves
# the given directory as it was
one_line() {
	local pattern=$1 before t0=$SECONDS
	shift
	before=$(sums)
	run --separate-stderr make -s -C "$TOP" --no-print-directory "$@"
	printf 'status %s, %s s\nstderr:\n%s\n' "$status" $((SECONDS - t0)) "$stderr"
	[ "$status" -ne 0 ]
	mine=$(grep -v '^make\(\[[0-9]*\]\)\?: \*\*\*' <<<"$stderr")
	[ "$(wc -l <<<"$mine")" -eq 1 ]
	[[ $mine == error:\ $pattern ]]
	[ ! -e "$INSTALLS" ] || { cat "$INSTALLS"; false; }
	[ $((SECONDS - t0)) -le 5 ]
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
	one_line "no glusterfs tree: give a checkout of glusterfs, as in 'make check-glusterfs GLUSTERFS=*" check-glusterfs
	[ ! -e "$EPOLL_DISABLE_CACHE/base" ]
}

@test "input: a user's check given a directory that is not its program's tree says so" {
	one_line "GLUSTERFS=$D is not a glusterfs tree *" check-glusterfs GLUSTERFS="$D"
}

@test "input: a follow-up's check with its tree missing says what to pass" {
	one_line "GLIBC=$D/none is not a directory: give a git clone of * as in 'make check-glibc GLIBC=*" check-glibc GLIBC="$D/none"
	[ ! -e "$EPOLL_DISABLE_CACHE/base" ]
}

@test "input: ntirpc's check with no tree says what to pass, before any kernel" {
	one_line "no ntirpc tree: give a checkout of ntirpc, as in 'make check-ntirpc NTIRPC=*" check-ntirpc
	[ ! -e "$EPOLL_DISABLE_CACHE/base" ]
}

@test "input: a follow-up's tree given to make test is looked at before the suite starts" {
	one_line "GLIBC=$D/none is not a directory: *" test GLIBC="$D/none"
}

@test "input: a follow-up's tree without the pinned commit says which commit" {
	git -C "$D" init -q
	one_line "GLIBC=$D has no commit * which patches/glibc/series pins: *" check-glibc GLIBC="$D"
}

@test "input: the guest's values are checked before any build" {
	one_line "SMP=abc is not a whole number from 1 to 64" run SMP=abc
	one_line "MEM=1 is not enough memory for the guest: *" run MEM=1
	one_line "MEM=lots is not a memory size such as 1G or 512M" run MEM=lots
	one_line "TIMEOUT=-5 is not a whole number from 1 to 86400" run TIMEOUT=-5
	one_line "ACCEL=xyz is not tcg or kvm" run ACCEL=xyz
	one_line "N=0 is not a whole number from 1 to 100000" flake N=0
}

@test "input: a missing fragment, an unknown arch, a bad TOOLCHAIN" {
	one_line "EXTRA_FRAGMENT=$D/none is not a file: *" run EXTRA_FRAGMENT="$D/none"
	one_line "ARCHES=arm64 vax names 'vax', which is not an arch *" check-arches ARCHES="arm64 vax"
	one_line "TOOLCHAIN=yes is not 0 or 1 *" run TOOLCHAIN=yes
}

@test "input: a target the Makefile does not have points to make help" {
	one_line "no target 'foo' here: 'make help' lists them" foo
}

# The tarballs LINUX_TARBALL= may be given: made here, small
tarball_of() {
	local name=$1 version=$2
	mkdir -p "$BATS_TEST_TMPDIR/t/$name/fs"
	printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = 0\n' "${version%.*}" "${version#*.}" \
		>"$BATS_TEST_TMPDIR/t/$name/Makefile"
	echo 'int ep;' >"$BATS_TEST_TMPDIR/t/$name/fs/eventpoll.c"
	tar -C "$BATS_TEST_TMPDIR/t" -cJf "$D/$name.tar.xz" "$name"
}

@test "input: LINUX_TARBALL= a file that is not there" {
	one_line "LINUX_TARBALL=$D/none.tar.xz is not a file: *" run LINUX_TARBALL="$D/none.tar.xz"
}

@test "input: LINUX_TARBALL= a truncated tarball says so" {
	tarball_of linux-3.6 3.6
	head -c 100 "$D/linux-3.6.tar.xz" >"$D/cut.tar.xz"
	one_line "LINUX_TARBALL=$D/cut.tar.xz could not be unpacked, truncated or not a tar archive *" \
		run LINUX_TARBALL="$D/cut.tar.xz"
	one_line "LINUX_TARBALL=$D/cut.tar.xz could not be unpacked, *" test LINUX_TARBALL="$D/cut.tar.xz"
}

@test "input: LINUX_TARBALL= a tarball that holds no kernel says so" {
	mkdir -p "$BATS_TEST_TMPDIR/t/project"
	echo 'all:' >"$BATS_TEST_TMPDIR/t/project/Makefile"
	tar -C "$BATS_TEST_TMPDIR/t" -cJf "$D/project.tar.xz" project
	one_line "LINUX_TARBALL=$D/project.tar.xz is not a Linux source tarball *" run LINUX_TARBALL="$D/project.tar.xz"
}

@test "input: LINUX_TARBALL= a kernel of another version names the supported ones" {
	tarball_of linux-5.10 5.10
	one_line "LINUX_TARBALL=$D/linux-5.10.tar.xz holds Linux 5.10.0, which is not a supported base (supported: 7.3 6.12 6.1 3.6)" \
		run LINUX_TARBALL="$D/linux-5.10.tar.xz"
}

@test "input: LINUX_TARBALL= with KSRC= or BASE= says to give one" {
	tarball_of linux-3.6 3.6
	one_line "KSRC=$D and LINUX_TARBALL=* both given: *" run KSRC="$D" LINUX_TARBALL="$D/linux-3.6.tar.xz"
	one_line "BASE=6.12 and LINUX_TARBALL=* both given: *" run BASE=6.12 LINUX_TARBALL="$D/linux-3.6.tar.xz"
}

@test "input: a variable the Makefile does not take points to make help" {
	run --separate-stderr make -s -C "$TOP" --no-print-directory run SPM=4
	echo "$stderr"
	[ "$status" -ne 0 ]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	[[ $stderr == "Makefile:"*": *** error: SPM= is not a variable of this Makefile: 'make help' and scripts/README list what it takes.  Stop." ]]
	[ ! -e "$INSTALLS" ]
}

@test "input: make b4-prep as the placeholder, or with a sender not Name <addr>, says what to give" {
	one_line "the sender would be the placeholder, Seed cbc5db85 * give SIGNOFF=*" \
		b4-prep SIGNOFF="Seed cbc5db85 maintainers <maintainers@users.noreply.a-seed-cbc5db85.example>"
	one_line "SIGNOFF=me is not \"Name <addr>\": give SIGNOFF=*" b4-prep SIGNOFF=me
}
