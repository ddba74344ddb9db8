# shellcheck shell=bash
# The cache's cap and its pruning: the least recently used trees and
# builds go first; what a live run uses (lib/run.sh) stays.

# cache_cap: EPOLL_DISABLE_CACHE_MAX in bytes (30G by default)
cache_cap() {
	numfmt --from=iec "${EPOLL_DISABLE_CACHE_MAX:-30G}" 2>/dev/null ||
		die "EPOLL_DISABLE_CACHE_MAX=$EPOLL_DISABLE_CACHE_MAX: give a size such as 30G or 500M"
}

# What cache_prune removes, least recently used first (use_tree stamps
# each when a step uses it): a build directory; a tree (a patched tree,
# the scratch tree of the mutants and of the bisect builds) with its
# builds; the tree a release tarball unpacked to (LINUX_TARBALL=); a base tree with every tree made from it; what a follow-up's
# check keeps ($CACHE/<project>, for each patches/<project>/).  What a
# live run uses stays, whatever the cap: a run that needs more than the
# cap gets it, and the next prune takes it back.  ccache bounds itself
# (CCACHE_MAXSIZE); the rest (Debian's packages, sparse) is small.
# cache_in_use: the paths live runs listed (a run's list goes with the run)
cache_in_use() {
	local f
	for f in "$CACHE"/runs/*; do
		[ -f "$f" ] || continue
		if kill -0 "$(basename "$f")" 2>/dev/null; then
			sort -u "$f"
		else
			rm -f "$f"
		fi
	done
}

# cache_units: "stamp bytes kind path [family...]" for each tree and build, the
# time it was last used (its stamp, or its own if it never was), the disk
# it takes (blocks, not file lengths; without the builds inside it) and,
# for a base, the trees made from it
cache_units() {
	local d f kind t family
	for d in "$CACHE"/base/* "$CACHE"/work/* "$CACHE"/base/*/build-* "$CACHE"/tarballs/* \
		 "$CACHE"/work/*/build-* "$CACHE"/followups/* "$CACHE"/*; do
		[ -d "$d" ] || continue
		case $d in
		"$CACHE"/*/*) ;;
		# a follow-up's cache (strace's, musl's, ...) is a tree of its
		# own, as is each of followups/ (lib/followup.sh)
		*) [ -d "$TOP/patches/$(basename "$d")" ] || continue ;;
		esac
		case $d in
		*.tmp | *.deb) continue ;;	# scripts/steps/source at work
		esac
		case $d in
		*/build-*) kind=build ;;
		"$CACHE"/base/*) kind=base ;;
		*) kind=tree ;;
		esac
		# a base was last used when the newest tree made from it was
		family=()
		if [ "$kind" = base ]; then
			for f in "$CACHE/work/$(basename "$d")"-*; do
				[ ! -d "$f" ] || family+=("$f")
			done
		fi
		t=0
		for f in "$d" "${family[@]}"; do
			f=$(stat -c %Y "$f.used" 2>/dev/null || stat -c %Y "$f")
			[ "$f" -le "$t" ] || t=$f
		done
		printf '%s %s %s %s' "$t" "$(if [ "$kind" = build ]; then
			du -s -B1 "$d"; else du -s -B1 --exclude='build-*' "$d"; fi |
			cut -f1)" "$kind" "$d"
		[ "${#family[@]}" -eq 0 ] || printf ' %s' "${family[@]}"
		echo
	done
}

cache_total() { du -s -B1 "$CACHE" 2>/dev/null | cut -f1; }

# cache_victims TOTAL CAP: the units to remove, oldest first, until TOTAL
# is within CAP; a unit some live run uses (or uses something inside) stays
cache_victims() {
	awk -v total="$1" -v cap="$2" '
	FILENAME == ARGV[1] { used[$0]; next }
	function busy(p,   u) {
		for (u in used)
			if (u == p || index(u, p "/") == 1)
				return 1
		return 0
	}
	{
		n++; path[n] = $4; size[n] = $2
		fam[n] = ""
		for (i = 5; i <= NF; i++)
			if ($i !~ /\*$/)
				fam[n] = fam[n] " " $i
	}
	# drop K: K goes, with the builds inside it (rm -rf takes them)
	function drop(k,   j) {
		gone[path[k]] = 1
		total -= size[k]
		for (j = 1; j <= n; j++)
			if (!gone[path[j]] && index(path[j], path[k] "/") == 1) {
				gone[path[j]] = 1
				total -= size[j]
			}
	}
	END {
		for (i = 1; i <= n && total > cap; i++) {
			if (gone[path[i]] || busy(path[i]))
				continue
			m = split(fam[i], f, " ")
			for (j = 1; j <= m; j++)
				if (busy(f[j]))
					break
			if (j <= m)
				continue
			print path[i]
			drop(i)
			# a base takes the trees made from it
			for (j = 1; j <= n; j++)
				if (!gone[path[j]] && index(fam[i] " ", " " path[j] " ")) {
					print path[j]
					drop(j)
				}
		}
	}' <(cache_in_use) -
}

# cache_remove PATH...: trees and builds gone, and their stamps
cache_remove() {
	local d b
	for d; do
		rm -rf "$d" "$d.used"
		# a tree was a worktree of its base
		case $d in "$CACHE"/work/*/build-* | "$CACHE"/base/*) ;;
		"$CACHE"/work/*)
			for b in "$CACHE"/base/*; do
				[ ! -d "$b/.git" ] || git -C "$b" worktree prune
			done ;;
		esac
	done
}

# cache_prune [BYTES]: remove the least recently used trees and builds
# until the cache, and BYTES more that a step is about to write, fit the
# cap; says what it removes.  A subshell: the prune lock goes with it.
cache_prune() (
	local cap t need=${1:-0} old
	cap=$(cache_cap)
	mkdir -p "$CACHE"
	lock "$CACHE/prune.lock" "the cache (pruning)"
	t=$(cache_total)
	[ $((t + need)) -gt "$cap" ] || return 0
	mapfile -t old < <(cache_units | sort -n | cache_victims $((t + need)) "$cap")
	[ "${#old[@]}" -gt 0 ] || return 0
	say "cache: $(numfmt --to=iec "$t")$([ "$need" -eq 0 ] || echo " and $(numfmt --to=iec "$need") to come") over its cap of $(numfmt --to=iec "$cap"): removing ${#old[@]} least recently used tree(s) and build(s)"
	printf '%s\n' "${old[@]}" | sed "s|^$CACHE/|==>   |" >&2
	cache_remove "${old[@]}"
	say "cache: $(numfmt --to=iec "$(cache_total)") now"
)

# need_disk BYTES WHAT: prune the cache to make room for BYTES under its
# cap, then stop with one line if its file system still has less than
# BYTES free for WHAT
need_disk() {
	local free
	cache_prune "$1"
	free=$(df -B1 --output=avail "$CACHE" | tail -n 1)
	[ "$free" -ge "$1" ] ||
		die "$2 needs $(numfmt --to=iec "$1") free in $CACHE, which has $(numfmt --to=iec "$free"): free some space there, or lower EPOLL_DISABLE_CACHE_MAX, or move the cache (EPOLL_DISABLE_CACHE=)"
}
