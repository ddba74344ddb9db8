# shellcheck shell=bash
# Worktrees of a base: made fresh, or moved from commit to commit.

# new_worktree DIR COMMIT: a fresh detached worktree of the base at COMMIT
new_worktree() {
	local d v
	d=$(base_dir) || return 1
	v=$(base_version) || return 1
	need_disk $((2 << 30)) "a worktree of Linux $v"
	rm -rf "$1"
	git -C "$d" worktree prune
	git -C "$d" worktree add -q --detach "$1" "$2"
}

# The scratch tree of a base (paths.sh: scratch_dir): one worktree that
# the negative controls and the bisect builds move from commit to commit,
# so that each kernel they build is an incremental build of one build
# directory per config, and the cache holds one such tree per base, not
# one per mutant and series.  Who uses it holds its lock throughout
# (scratch_lock).
scratch_lock() {
	local d v
	[ -n "${SCRATCH_LOCKED:-}" ] && return
	d=$(scratch_dir) || return 1
	v=$(base_version) || return 1
	lock "$d.lock" "the scratch tree of Linux $v (mutants, bisect builds)"
	export SCRATCH_LOCKED=1
}
# scratch_at COMMIT: the scratch tree, under its lock, at COMMIT, with
# nothing in it but the commit and its build directories
scratch_at() {
	local d
	d=$(scratch_dir) || return 1
	scratch_lock
	worktree_at "$d" "$1"
}
# worktree_at DIR COMMIT: a worktree of the base (made if it is not
# there) at COMMIT, with nothing in it but the commit and its build
# directories; its user holds its lock
worktree_at() {
	use_tree "$1"
	rm -f "$1/.applied"
	if [ -e "$1/.git" ]; then
		git -C "$1" checkout -q -f --detach "$2"
		git -C "$1" clean -fdq -e '/build-*'
	else
		new_worktree "$1" "$2"
	fi
}
