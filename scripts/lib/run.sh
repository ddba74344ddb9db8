# shellcheck shell=bash
# A run: what it uses of the cache, and the locks runs share.  Runs side
# by side share the cache.  A run (one make, or the shell that runs
# scripts by hand) lists the trees and builds it uses in $CACHE/runs/RUN,
# so that cache_prune (lib/prune.sh) leaves them alone while it lives;
# where two runs would write the same tree or build, the second waits for
# the first.
RUN=${EPOLL_DISABLE_RUN:-$PPID}

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
# Paths under the cache as seen from the build directory, so that builds in
# different trees share the cache where kbuild names sources by absolute
# path (v3.6 with O=)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$CACHE}

# use_tree DIR: this run uses DIR (a tree or a build): stamp it as used
# now (the least recently used goes first when the cache is pruned)
use_tree() {
	mkdir -p "$CACHE/runs" "$(dirname "$1")"
	echo "$1" >>"$CACHE/runs/$RUN"
	: >"$1.used"
}

# lock FILE WHAT: hold FILE's lock until this script exits; if another run
# holds it, say so and wait
lock() {
	local fd
	mkdir -p "$(dirname "$1")"
	exec {fd}>>"$1"
	flock -n "$fd" || {
		say "waiting: another run is using $2"
		flock "$fd"
	}
}

# cpu_locked CMD...: CMD under EPOLL_CPU_LOCK's lock where that is set,
# so that one build or boot at a time runs on a machine shared with others
cpu_locked() {
	local fd rc=0
	[ -n "${EPOLL_CPU_LOCK:-}" ] || { "$@"; return; }
	exec {fd}>>"$EPOLL_CPU_LOCK"
	flock "$fd"
	"$@" || rc=$?
	exec {fd}>&-
	return "$rc"
}
