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

# run_logs: this run's directory of logs, $CACHE/logs/<date>-<RUN>: the
# suite's TAP, each boot's console log, each kernel build's log, kept
# after the run (the newest 30 runs' stay).  Made by its first call.
run_logs() {
	local d
	for d in "$CACHE"/logs/*-"$RUN"; do
		[ ! -d "$d" ] || { echo "$d"; return 0; }
	done
	d=$CACHE/logs/$(date +%Y%m%d-%H%M%S)-$RUN
	mkdir -p "$d"
	find "$CACHE/logs" -mindepth 1 -maxdepth 1 -type d | sort | head -n -30 |
		xargs -r rm -rf
	echo "$d"
}

# keep_log FILE NAME: a copy of FILE as NAME in this run's logs (NAME.2.log
# and so on when a run writes NAME again)
keep_log() {
	local d dest n=1
	d=$(run_logs)
	dest=$d/$2
	while [ -e "$dest" ]; do
		n=$((n + 1))
		dest=$d/${2%.log}.$n.log
	done
	cp "$1" "$dest"
}

