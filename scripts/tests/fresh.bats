#!/usr/bin/env bats
# scripts/steps/build's programs come from this checkout's sources: checkouts
# share the build cache, and a program another one built from newer files
# passes for up to date by make's rule alone

load helpers

setup() {
	load_lib
	src=$BATS_TEST_TMPDIR/src
	out=$BATS_TEST_TMPDIR/out
	mkdir -p "$src" "$out"
	# shellcheck disable=SC2016 # make's variables, not the shell's
	printf '$(OUT)/prog: prog.c\n\tcp $< $@\n' >"$src/Makefile"
	echo 'int ours;' >"$src/prog.c"
	touch -d '2026-01-01' "$src/prog.c"
	# another checkout's program, built later from other sources
	echo 'int theirs;' >"$out/prog"
	echo other >"$out/.sources"
}

# build: what scripts/steps/build does, on the small tree above
build() {
	local sum
	sum=$(sources_digest "$src")
	# shellcheck disable=SC2046 # make_fresh: a word or none
	make -s -C "$src" OUT="$out" $(make_fresh "$out/.sources" "$sum") \
		"$out/prog"
	echo "$sum" >"$out/.sources"
}

@test "fresh: another checkout's newer program is built again" {
	build
	[ "$(cat "$out/prog")" = 'int ours;' ]
}

@test "fresh: make's rule alone keeps the other program (control)" {
	make -s -C "$src" OUT="$out" "$out/prog"
	[ "$(cat "$out/prog")" = 'int theirs;' ]
}

@test "fresh: our own programs are not built again" {
	build
	echo 'int kept;' >"$out/prog"
	build
	[ "$(cat "$out/prog")" = 'int kept;' ]
}

@test "fresh: a changed source changes the digest, its name too" {
	a=$(sources_digest "$src")
	echo 'int changed;' >"$src/prog.c"
	b=$(sources_digest "$src")
	mv "$src/prog.c" "$src/other.c"
	c=$(sources_digest "$src")
	[ "$a" != "$b" ] && [ "$b" != "$c" ]
}

@test "fresh: a built program beside the sources changes nothing" {
	a=$(sources_digest "$src")
	echo binary >"$src/prog"
	[ "$(sources_digest "$src")" = "$a" ]
}
