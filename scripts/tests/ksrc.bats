#!/usr/bin/env bats
# scripts/steps/source with KSRC= on a small fake kernel tree: a developer's tree
# as it is (a git checkout with local commits, uncommitted changes and build
# output; a tree with no git and build output) is copied without its build
# output, and is never written

load helpers

setup() {
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	export KSRC=$BATS_TEST_TMPDIR/linux
	mkdir -p "$KSRC/fs" "$KSRC/kernel"
	printf 'VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n' >"$KSRC/Makefile"
	echo 'int ep;' >"$KSRC/fs/eventpoll.c"
	echo 'int fork;' >"$KSRC/kernel/fork.c"
	echo 'int gone;' >"$KSRC/kernel/gone.c"
	printf '*.o\n/.config\n/include/config/\n' >"$KSRC/.gitignore"
}

git_tree() {
	git -C "$KSRC" init -q
	git -C "$KSRC" add -A
	git -C "$KSRC" -c user.name=t -c user.email=t@t commit -q -m base
	echo 'int local;' >"$KSRC/kernel/local.c"
	git -C "$KSRC" add kernel/local.c
	git -C "$KSRC" -c user.name=t -c user.email=t@t commit -q -m local
}

build_output() {
	echo CONFIG_EPOLL=y >"$KSRC/.config"
	mkdir -p "$KSRC/include/config"
	echo x >"$KSRC/include/config/auto.conf"
	echo obj >"$KSRC/fs/eventpoll.o"
}

# sums: every file of the user's tree (its .git too), with its content
sums() { (cd "$KSRC" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }
copy() { for d in "$EPOLL_DISABLE_CACHE"/base/ksrc-*/; do echo "${d%/}"; done; }
files() { (cd "$(copy)" && git ls-files | sort | xargs); }
# copied FILE...: scripts/steps/source copies the tree's sources, which are
# FILE..., and leaves the tree as it was
copied() {
	local before
	before=$(sums)
	run "$SCRIPTS/steps/source"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$(sums)" = "$before" ]
	[ "$(files)" = "$*" ]
}

@test "KSRC: a git checkout is copied as its work tree has it, build output left out" {
	git_tree
	build_output
	echo 'int ep, changed;' >"$KSRC/fs/eventpoll.c"	# uncommitted
	echo 'int new;' >"$KSRC/kernel/new.c"		# untracked
	rm "$KSRC/kernel/gone.c"				# deleted
	copied .gitignore Makefile fs/eventpoll.c kernel/fork.c kernel/local.c kernel/new.c
	[ "$(cat "$(copy)/fs/eventpoll.c")" = "int ep, changed;" ]
	[ ! -e "$(copy)/.config" ] && [ ! -e "$(copy)/fs/eventpoll.o" ]
}

@test "KSRC: a file gone from the tree goes from the copy on the next run" {
	git_tree
	copied .gitignore Makefile fs/eventpoll.c kernel/fork.c kernel/gone.c kernel/local.c
	git -C "$KSRC" rm -q kernel/fork.c
	copied .gitignore Makefile fs/eventpoll.c kernel/gone.c kernel/local.c
	[ ! -e "$(copy)/kernel/fork.c" ]
}

@test "KSRC: a tree without git that has been built is copied without its build output" {
	build_output
	copied .gitignore Makefile fs/eventpoll.c kernel/fork.c kernel/gone.c
}

@test "KSRC: not a kernel tree stops with one line" {
	rm "$KSRC/fs/eventpoll.c"
	run "$SCRIPTS/steps/source"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "error: KSRC=$KSRC is not a kernel tree"* ]]
}

@test "KSRC: the copy's repository never packs itself in the background" {
	git_tree
	copied .gitignore Makefile fs/eventpoll.c kernel/fork.c kernel/gone.c kernel/local.c
	[ "$(git -C "$(copy)" config gc.auto)" = 0 ]
}
