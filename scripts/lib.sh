# shellcheck shell=bash
# Shared by the scripts: where things live, how a step talks to a person.
#
# Every path is derived from the inputs alone (the base, the series, the
# config), so each step finds what the step before it made without being
# told: the Makefile just runs them in order.  What does pass between
# steps is the environment, and these variables are all of it:
#
# Which kernel (a person sets them; the Makefile exports them)
#   BASE=6.12        Debian's linux-source-6.12 instead of the first of
#                    DEFAULT_BASES (make test: BASES="6.1 7.3" for several)
#   KSRC=DIR         a tree of one's own instead (3.6, or any base)
#   TOOLCHAIN=1|0    old compiler fixes always, or never (default: as gcc
#                    needs them; use_toolchain)
#   EPOLL_DISABLE_CACHE  where every build lives (~/.cache/epoll-disable)
#   EPOLL_DISABLE_CACHE_MAX  its cap (30G), which scripts/cache keeps
#   EPOLL_DISABLE_RUN    the run a step belongs to (the Makefile's pid):
#                    its trees are not pruned, its guest logs are its own
# Which variant of that kernel (a step sets them for the steps it runs)
#   UNPATCHED=1      the base without the series (tree_dir: start_dir)
#   MUTANT=NAME      the series plus a deliberately wrong NAME.edit
#   MUTANT_SET=races take MUTANT from races/ instead of mutants/
#   EXTRA_FRAGMENT=F Kconfig fragment(s) on top of Kconfig.fragment (the
#                    debug, KCSAN and inet kernels); part of build_dir
#   RACE_MUTANT=NAME check-kcsan's mutant (default unlocked-disarm)
# How the guest boots (scripts/boot)
#   SMP, MEM         -smp count (2) and memory (1G)
#   TIMEOUT=S        seconds before QEMU is killed (900)
#   ACCEL=tcg|kvm    QEMU's accelerator (tcg)
#   GUEST_ENV="k=v"  words for the kernel command line, which reach /init's
#                    environment (soak=N for guest-soak, kcsan.skip_watch=,
#                    which KCSAN_SKIP_WATCH sets); boot adds nonce=, the
#                    tag of this boot's lines (guest-init, judge_plan)
#   LABEL=TEXT       names a boot in its checks, where a plan boots twice
# How checks are judged and counted
#   RESULTS=FILE     one line per check (record), counted by summary; the
#                    Makefile's suites set it, so numbering runs across steps
#   BASE_LABEL=v6.1  the base a check belongs to, before its name and in
#                    RESULTS, for summary's line per base (make test)
#   EXPECT_SPLAT=1   the console must show a kernel report (the scan's
#                    negative control, make test-debug)
#   KCSAN=1          KCSAN reports are check-kcsan's to judge, not a splat
# The series
#   SIGNOFF="N <a>"  who signs off the generated patches (gen-patches)
# Other architectures (check-arches; scripts/arches/ has one file each)
#   ARCHES="arm64 i386"  which of them (default: i386 arm arm64 riscv64)
#   GUEST_ARCH=FILE  the arch file boot reads (default scripts/arches/x86_64)
#   BUILD_DIR=DIR    the build to use instead of build_dir's (check-arches)
#   KERNEL=FILE      boot that image instead of the build's
#   BUSYBOX=FILE     the guest's static busybox (default: the host's)
#   EPOLL_CPU_LOCK=FILE  check-arches and boot take this lock around each
#                    kernel build and each boot (machines shared with others)
# and CCACHE_DIR, CCACHE_BASEDIR, exported below for every build
set -eu

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${EPOLL_DISABLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/epoll-disable}
KSRC=${KSRC:-}
BASE=${BASE:-}

# The kernel's make takes only what a script passes it: the flags of the
# make that runs us (-s silences kbuild, and with it the build logs and
# their progress counts; a jobserver caps -j) stay out
unset MAKEFLAGS MFLAGS

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The bases: one file each in scripts/bases/ (v7.3, v6.12, ...), saying
# where the base comes from and what it has; the scripts read them and
# know no base by name.  make run builds the first of DEFAULT_BASES, make
# test covers them all; BASE= picks any base Debian ships as source, KSRC=
# takes a tree of any base.
BASES_DIR=$TOP/scripts/bases
DEFAULT_BASES="7.3 6.12 6.1"
# base_conf_in KEY FILE: the value of KEY in a base file
base_conf_in() {
	sed -n "s/^$1=//p" "$2"
}
# shellcheck disable=SC2012 # base files are named vX.Y
SUPPORTED=$(cd "$BASES_DIR" && ls v* | sed 's/^v//' | sort -rV | xargs)
DEBIAN_BASES=$(for b in $SUPPORTED; do
	[ -z "$(base_conf_in package "$BASES_DIR/v$b")" ] || echo "$b"
done | xargs)
if [ -n "$BASE" ]; then
	case " $DEBIAN_BASES " in
	*" $BASE "*) ;;
	*) die "BASE=$BASE is not a Debian base of the series (BASE= takes one of: $DEBIAN_BASES); for a tree of your own use KSRC=/path/to/linux" ;;
	esac
	[ -z "$KSRC" ] ||
		die "BASE=$BASE and KSRC=$KSRC both given: BASE picks Debian's linux-source-$BASE, KSRC your own tree; give one"
fi
# The Debian base this run uses, when it uses one
DEBIAN_BASE=${BASE:-${DEFAULT_BASES%% *}}
DEBIAN_PKG=$(base_conf_in package "$BASES_DIR/v$DEBIAN_BASE")
DEBIAN_SUITE=$(base_conf_in suite "$BASES_DIR/v$DEBIAN_BASE")

# What the committed patches say in place of the Signed-off-by of whoever
# sends them: 'make patches SIGNOFF="Name <addr>"' puts that in
# shellcheck disable=SC2034 # for gen-patches and check-series
SIGNOFF_PLACEHOLDER='Seed cbc5db85 maintainers <maintainers@users.noreply.a-seed-cbc5db85.example>'

# Runs side by side share the cache.  A run (one make, or the shell that
# runs scripts by hand) lists the trees and builds it uses in $CACHE/runs/RUN, so that
# scripts/cache prune leaves them alone while it lives; where two runs
# would write the same tree or build, the second waits for the first.
RUN=${EPOLL_DISABLE_RUN:-$PPID}

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

# need_disk BYTES WHAT: prune the cache to make room for BYTES under its
# cap, then stop with one line if its file system still has less than
# BYTES free for WHAT
need_disk() {
	local free
	"$TOP/scripts/cache" prune "$1"
	free=$(df -B1 --output=avail "$CACHE" | tail -n 1)
	[ "$free" -ge "$1" ] ||
		die "$2 needs $(numfmt --to=iec "$1") free in $CACHE, which has $(numfmt --to=iec "$free"): free some space there, or lower EPOLL_DISABLE_CACHE_MAX, or move the cache (EPOLL_DISABLE_CACHE=)"
}

# need TOOL PACKAGE: stop with the fix if a tool is missing
need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "$1 not found: run 'make deps' (it installs $2)"
}

# A short, stable name for some content: hash of files, or of stdin
digest() {
	if [ $# -gt 0 ]; then cat -- "$@"; else cat; fi | sha1sum | cut -c1-12
}

# sources_digest DIR: a digest of the C sources and Makefiles below DIR,
# names and contents
sources_digest() {
	(cd "$1" && find . -type f \( -name '*.[ch]' -o -name Makefile \) \
		-print0 | sort -z | xargs -0 sha1sum) | digest
}

# make_fresh STAMP DIGEST: "-B" for make if the programs beside STAMP were
# built from other sources than DIGEST's. Checkouts share the build cache,
# and another one's programs may be newer than our sources: by make's
# rule they would pass for ours.
make_fresh() {
	[ "$(cat "$1" 2>/dev/null)" = "$2" ] || echo -B
}

# kernel_version DIR: "6.12.118" from a tree's top-level Makefile
kernel_version() {
	awk -F' *= *' '
		$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 }
		END { if (v != "" && p != "") print v "." p "." (s == "" ? 0 : s) }
	' "$1/Makefile" 2>/dev/null || true
}

# base_of VERSION: the series that fits a kernel version, e.g. "v6.12"
base_of() {
	local mm=${1%.*} b
	for b in $SUPPORTED; do
		[ "$mm" = "$b" ] && { echo "v$b"; return; }
	done
	die "Linux $1 is not a supported base (supported: $SUPPORTED); see README"
}

# The pristine base: Debian's source package, or a copy of $KSRC.  A
# package from the machine's own apt sources is installed (scripts/deps);
# one from another suite is fetched into the cache (scripts/source).
debian_debs() { echo "$CACHE/debian/$DEBIAN_SUITE"; }
# The Debian mirror that serves the machine's own release, from its apt
# sources; empty if they name none
debian_mirror() {
	local codename
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	# shellcheck disable=SC2016 # apt's $(...) fields, not the shell's
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v c="$codename" '$2 == c { print $1; exit }'
}
# private_apt DIR LINE: apt-get options for a sources list of our own in
# DIR holding LINE, with apt's lists and downloads kept there too: the
# machine's apt configuration is left alone.  Sets the array apt_opts.
private_apt() {
	rm -rf "$1"
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial"
	echo "$2" >"$1/sources.list"
	# shellcheck disable=SC2034 # the caller's
	apt_opts=(-q -o "Dir::Etc::SourceList=$1/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$1/lists"
		-o "Dir::Cache=$1/cache")
}
# release_codename: the machine's Debian release (bookworm)
release_codename() { (. /etc/os-release && echo "${VERSION_CODENAME:-}"); }

# debian_source PKG TOP: the source package PKG of the machine's Debian
# release, fetched through a sources list of our own (private_apt) and
# unpacked with Debian's patches into TOP/src, a git tree of one commit
# ("Debian's PKG VERSION"); TOP/version is the package's version.  TOP
# is made anew; the package and apt's lists are not kept.
debian_source() {
	local pkg=$1 top=$2 mirror codename
	mirror=$(debian_mirror)
	[ -n "$mirror" ] ||
		die "no Debian mirror for this release in the machine's apt sources: run 'apt-get update'"
	codename=$(release_codename)
	rm -rf "$top"
	mkdir -p "$top/pkg"
	private_apt "$top/apt" "deb-src $mirror $codename main"
	say "fetching Debian's $pkg source package from $codename on $mirror"
	apt-get "${apt_opts[@]}" update >"$top/update.log" 2>&1 ||
		die "apt-get update of $codename's sources failed: see $top/update.log"
	(cd "$top/pkg" && apt-get "${apt_opts[@]}" source --download-only "$pkg") \
		>"$top/fetch.log" 2>&1 ||
		die "no $pkg source in $codename on $mirror: see $top/fetch.log"
	nice -n 19 dpkg-source -x "$top/pkg/${pkg}_"*.dsc "$top/src" \
		>"$top/unpack.log" 2>&1 ||
		die "dpkg-source could not unpack $pkg: see $top/unpack.log"
	rm -rf "$top/apt" "$top/pkg" "$top/${pkg}_"*.orig.tar.*
	dpkg-parsechangelog -l "$top/src/debian/changelog" -S Version >"$top/version"
	git -C "$top/src" init -q
	git -C "$top/src" config gc.auto 0	# no gc behind a script's back
	nice -n 19 git -C "$top/src" add -A
	nice -n 19 git -C "$top/src" -c user.name=base -c user.email=base@localhost \
		commit -q -m "Debian's $pkg $(cat "$top/version")"
}

# am_queue DIR QUEUE: git am in DIR the patches QUEUE/series lists, in
# order, as a committer of ours
am_queue() {
	# shellcheck disable=SC2046 # a patch a word
	git -C "$1" -c user.name=check -c user.email=check@localhost \
		am -q $(list_patches "$2")
}

# The newest fetched package
debian_deb() {
	local deb
	# shellcheck disable=SC2012 # Debian's .deb names have no blanks
	deb=$(ls "$(debian_debs)/${DEBIAN_PKG}_"*.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$deb" ] ||
		die "$DEBIAN_PKG is not fetched yet: run 'make source${BASE:+ BASE=$BASE}'"
	echo "$deb"
}
debian_version() {
	if [ -n "$DEBIAN_SUITE" ]; then
		dpkg-deb -f "$(debian_deb)" Version
	else
		dpkg-query -W -f='${Version}' "$DEBIAN_PKG" 2>/dev/null ||
			die "$DEBIAN_PKG is not installed: run 'make deps${BASE:+ BASE=$BASE}'"
	fi
}
base_dir() {
	if [ -n "$KSRC" ]; then
		echo "$CACHE/base/ksrc-$(realpath "$KSRC" | digest)"
	else
		echo "$CACHE/base/debian-$(debian_version | tr '~+:' '___')"
	fi
}
base_commit() {
	git -C "$(base_dir)" rev-parse -q --verify HEAD 2>/dev/null ||
		die "no base tree in $(base_dir): run 'make source'"
}
base_version() { kernel_version "$(base_dir)"; }
series_dir() { echo "$TOP/patches/$(base_of "$(base_version)")"; }
# base_conf KEY: what the file of the base in use says of KEY
base_conf() { base_conf_in "$1" "$BASES_DIR/$(base_of "$(base_version)")"; }

# The series as listed in its series file, in order
series_patches() { list_patches "$(series_dir)"; }

# The compiler fixes an old base needs to build with today's toolchain:
# patches/<toolchain>/, as the base file's toolchain= names it, applied
# under the series (not part of it).  TOOLCHAIN=1 always applies them,
# TOOLCHAIN=0 never; by default they go on when the base has no
# compiler-gccN.h for the gcc that builds it.
toolchain_dir() {
	local d
	d=$(base_conf toolchain)
	echo "$TOP/patches/${d:-none}"
}
gcc_major() { gcc -dumpversion | cut -d. -f1; }
# old_compiler_headers DIR: DIR has compiler-gcc<N>.h headers, but none
# for this gcc (bases since 4.2 have only compiler-gcc.h)
old_compiler_headers() {
	[ -f "$1/include/linux/compiler-gcc4.h" ] &&
	[ ! -f "$1/include/linux/compiler-gcc$(gcc_major).h" ]
}
use_toolchain() {
	[ -f "$(toolchain_dir)/series" ] || return 1
	case ${TOOLCHAIN:-auto} in
	1) return 0 ;;
	0) return 1 ;;
	auto) old_compiler_headers "$(base_dir)" ;;
	*) die "TOOLCHAIN=$TOOLCHAIN: use 1 (apply $(toolchain_dir)), 0 (do not) or leave it unset (when gcc needs it)" ;;
	esac
}

# list_patches DIR: the patches DIR/series lists, in order
list_patches() {
	[ -f "$1/series" ] || die "no series file in $1"
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$1/series" |
		while read -r p; do echo "$1/$p"; done
}
toolchain_patches() {
	if use_toolchain; then list_patches "$(toolchain_dir)"; fi
}

# Where the series starts from: the base, or the base with the toolchain
# fixes (a worktree keyed by their content)
start_dir() {
	if use_toolchain; then
		# shellcheck disable=SC2046 # a path a word
		echo "$CACHE/work/$(basename "$(base_dir)")-toolchain-$( {
			base_commit; cat $(toolchain_patches); } | digest)"
	else
		base_dir
	fi
}

# new_worktree DIR COMMIT: a fresh detached worktree of the base at COMMIT
new_worktree() {
	need_disk $((2 << 30)) "a worktree of Linux $(base_version)"
	rm -rf "$1"
	git -C "$(base_dir)" worktree prune
	git -C "$(base_dir)" worktree add -q --detach "$1" "$2"
}

# The scratch tree of a base: one worktree that the negative controls and
# the bisect builds move from commit to commit, so that each kernel they
# build is an incremental build of one build directory per config, and the
# cache holds one such tree per base, not one per mutant and series.  Who
# uses it holds its lock throughout (scratch_lock).
scratch_dir() { echo "$CACHE/work/$(basename "$(base_dir)")-scratch"; }
scratch_lock() {
	[ -n "${SCRATCH_LOCKED:-}" ] && return
	lock "$(scratch_dir).lock" "the scratch tree of Linux $(base_version) (mutants, bisect builds)"
	export SCRATCH_LOCKED=1
}
# scratch_at COMMIT: the scratch tree, under its lock, at COMMIT, with
# nothing in it but the commit and its build directories
scratch_at() {
	scratch_lock
	worktree_at "$(scratch_dir)" "$1"
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

# series_commits TREE: the commits of the series in TREE, oldest first;
# fails if TREE does not end in as many commits as the series has patches
series_commits() {
	local n
	n=$(series_patches | wc -l)
	git -C "$1" rev-list --reverse "HEAD~$n..HEAD" | awk -v n="$n" '
		{ print } END { if (NR != n) exit 1 }'
}

# A deliberately wrong kernel for the negative controls: MUTANT=NAME adds
# fs-eventpoll/<dir>/mutants/NAME.edit on top of the series, <dir> as the
# base file's mutants= says (bases whose ep_disable() reads the same share).
# MUTANT_SET=races takes it from races/ instead: data races, which KCSAN
# must report (make test-kcsan), not wrong answers for the selftest.
mutant_dir() {
	local d
	d=$(base_conf mutants)
	[ -n "$d" ] || die "Linux $(base_version) has no mutants (scripts/bases/$(basename "$(series_dir)"): mutants=)"
	echo "$TOP/fs-eventpoll/$d/${MUTANT_SET:-mutants}"
}

# The tree to build: the base with the series, keyed by the base commit
# and the patches' content; UNPATCHED=1 is the tree the series starts from,
# MUTANT=NAME the scratch tree (scripts/apply puts the series and the
# mutant there)
tree_dir() {
	if [ -n "${UNPATCHED:-}" ]; then
		start_dir
	elif [ -n "${MUTANT:-}" ]; then
		scratch_dir
	else
		# shellcheck disable=SC2046 # a path a word
		echo "$CACHE/work/$(basename "$(base_dir)")-$( {
			base_commit; cat $(toolchain_patches) $(series_patches)
		} | digest)"
	fi
}
# mutant_key: what the scratch tree must hold for MUTANT=NAME
mutant_key() {
	# shellcheck disable=SC2046 # a path a word
	{ base_commit; cat $(toolchain_patches) $(series_patches) \
		"$(mutant_dir)"/*; echo "$MUTANT"; } | digest
}

# base_lacks TREE: what the series needs of its base that the version does
# not tell, as the base file's "requires=FILE<tab>TEXT<tab>WHY" lines say:
# prints the WHY of the first TEXT that TREE's FILE lacks, and fails
base_lacks() {
	local file text why
	while IFS=$'\t' read -r file text why; do
		grep -qF -- "$text" "$1/$file" 2>/dev/null || { echo "$why"; return 1; }
	done < <(base_conf requires)
}

# plan_text NAME: scripts/guest/plans/NAME as this base runs it.  A line
# whose name starts with [FEATURE] is kept only where the base has
# FEATURE, one with [!FEATURE] only where it has not (the base file's
# features, and "upstream" where it has upstream epoll selftests);
# @upstream@ is their number.
plan_text() {
	local f=$TOP/scripts/guest/plans/$1
	[ -f "$f" ] || die "no plan '$1' in scripts/guest/plans/"
	upstream=$(base_conf upstream) has=" $(base_conf features)$(
		[ -z "$(base_conf upstream)" ] || echo ' upstream') " awk '
	match($0, /^\[!?[a-z_]+\] */) {
		g = substr($0, 2, index($0, "]") - 2)
		want = g !~ /^!/
		sub(/^!/, "", g)
		if ((index(ENVIRON["has"], " " g " ") > 0) != want)
			next
		$0 = substr($0, RLENGTH + 1)
	}
	{ gsub(/@upstream@/, ENVIRON["upstream"]); print }' "$f"
}

# kconfig_start, kconfig_update: the Kconfig targets that make the config
# to start from and that fill in a .config's missing symbols
# shellcheck disable=SC2046 # config= is two words
kconfig_start() { set -- $(base_conf config); echo "$1"; }
# shellcheck disable=SC2046 # config= is two words
kconfig_update() { set -- $(base_conf config); echo "$2"; }

# The test kernel's options: the fragments the tests need, each line of
# which must stick (Kconfig.fragment, then EXTRA_FRAGMENT, a later one
# overriding an earlier), and Kconfig.trim.fragment, merged first, which
# only makes the kernel smaller: a base may not honour all of it
# shellcheck disable=SC2086 # no word when EXTRA_FRAGMENT is unset
needed_fragments() { echo "$TOP/Kconfig.fragment" ${EXTRA_FRAGMENT:-}; }
trim_fragments() { echo "$TOP/Kconfig.trim.fragment"; }

# wanted_options FRAGMENT...: what the fragments ask for, a later one
# overriding an earlier: "CONFIG_X=v", or "CONFIG_X is not set"
wanted_options() {
	awk '
	/^CONFIG_[A-Z0-9_]*=/ { s = $0; sub(/=.*/, "", s); w[s] = $0; o[s] = ++n }
	/^# CONFIG_[A-Z0-9_]* is not set$/ { w[$2] = $2 " is not set"; o[$2] = ++n }
	END { for (s in w) print o[s], w[s] }' "$@" | sort -n | cut -d' ' -f2-
}

# unmet_options CONFIG: of the options on stdin (as wanted_options prints
# them), one line for each that CONFIG does not have, with what it has
unmet_options() {
	local line sym
	while read -r line; do
		sym=${line%%[= ]*}
		if [ "$line" = "$sym is not set" ]; then
			! grep -q "^$sym=" "$1" ||
				echo "# $line (got: $(grep "^$sym=" "$1"))"
		elif ! grep -qx "$line" "$1"; then
			echo "$line (got: $(grep -E "^$sym=|^# $sym is not set" "$1" || echo nothing))"
		fi
	done
}

# The build directory, inside the tree (one level down, so that kbuild uses
# relative paths and ccache hits across trees): keyed by the config inputs
config_inputs() {
	# shellcheck disable=SC2046 # a path a word
	echo $(trim_fragments) $(needed_fragments) "$TOP/scripts/configure"
}
build_dir() {
	# (a step that builds elsewhere, as check-arches does, names its own)
	[ -z "${BUILD_DIR:-}" ] || { echo "$BUILD_DIR"; return; }
	# shellcheck disable=SC2046 # a path a word
	echo "$(tree_dir)/build-$(digest $(config_inputs))"
}
# guest_root PLAN: this run's guest of PLAN in the build: its root (the
# directory), .cpio.gz and .log; guest-PLAN.log points to the latest log
guest_root() { echo "$(build_dir)/guest-$1.$RUN"; }

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
# Paths under the cache as seen from the build directory, so that builds in
# different trees share the cache where kbuild names sources by absolute
# path (v3.6 with O=)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$CACHE}

# record ok|fail NAME [WHY]: one TAP line for a check; with RESULTS=FILE set
# (make test) the numbering runs across steps and scripts/summary counts them.
# BASE_LABEL=v6.1 (make test, one base of several) goes before the name,
# and into RESULTS for the count per base.
record() {
	local n=${_recorded:-0} name=$2
	# (unless the name starts with the base already, as in check-series)
	case $2 in "${BASE_LABEL:-}: "*) ;; *) name=${BASE_LABEL:+$BASE_LABEL: }$2 ;; esac
	if [ -n "${RESULTS:-}" ]; then
		n=$(wc -l <"$RESULTS")
		echo "$1${BASE_LABEL:+ $BASE_LABEL}" >>"$RESULTS"
	fi
	_recorded=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $_recorded - $name"
	else
		echo "not ok $_recorded - $name"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

# judge_plan PLAN LOG TAG PREFIX: for each entry of PLAN, find its output in
# LOG (framed by guest/run-plan), print it as TAP comments and record, as PREFIX
# and the entry's name, whether the command exited as expected and printed
# what it must.  Fails if any did not.
judge_plan() {
	local plan=$1 log=$2 tag=$3 prefix=$4 failed=0
	local name expect match cmd section got why
	while IFS='|' read -r name expect match cmd; do
		case $name in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2086,SC2116 # echo trims and squeezes blanks
		name=$(echo $name) expect=$(echo $expect) match=$(echo $match)
		cmd=$(echo "$cmd" | sed 's/^ *//; s/ *$//')
		section=$(tr -d '\r' <"$log" | awk -v b="$tag begin $name" \
			-v e="$tag end $name " '
			$0 == b { on = 1; next }
			on && index($0, e) == 1 { print "@@rc " substr($0, length(e) + 1); exit }
			on { print }')
		got=$(printf '%s\n' "$section" | sed -n 's/^@@rc //p')
		printf '%s\n' "$section" | grep -v '^@@rc ' | sed 's/^/# /'
		why=
		if [ -z "$got" ]; then
			why="no result: '$cmd' did not finish"
		elif [ "$got" != "$expect" ]; then
			why="'$cmd' exited $got, expected $expect"
		elif [ "$match" != - ] &&
		     ! printf '%s\n' "$section" | grep -qF -- "$match"; then
			why="'$cmd' did not print '$match'"
		fi
		if [ -z "$why" ]; then
			record ok "$prefix$name"
		else
			record fail "$prefix$name" "$why"
			failed=$((failed + 1))
		fi
	done <"$plan"
	[ "$failed" -eq 0 ]
}

# splats LOG: the first lines of any kernel report in a console log: a
# WARN or BUG, an Oops, a panic, KASAN, UBSAN, lockdep (3.6 and 6.12
# words), list corruption, a hung task.  With KCSAN=1 (make test-kcsan)
# data-race reports are left out: scripts/check-kcsan judges those.
splats() {
	local skip='^$'
	[ -z "${KCSAN:-}" ] || skip='BUG: KCSAN: '
	tr -d '\r' <"$1" | grep -v -e "$skip" | grep -E -m 5 -e '-+\[ cut here \]-+|WARNING: |BUG: |Oops|general protection fault|Kernel panic|KASAN: |UBSAN: |\[ INFO: |INFO: task .* blocked|list_(add|del) corruption|Call Trace:'
}

# check NAME CMD...: run a command quietly and record whether it succeeded;
# on failure its last lines go with the record.  Never fails itself.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		record ok "$name"
	else
		record fail "$name" "$(printf '%s\n' "$out" | tail -n 8)"
	fi
	return 0
}

# The architectures: one file each in scripts/arches/ (x86_64, i386,
# arm64, ...), KEY=value lines saying how to build and boot a kernel
# there; check-arches and boot read them and know no arch by name.
# shellcheck disable=SC2034 # for check-arches and boot
ARCHES_DIR=$TOP/scripts/arches
# The keys an arch file may have, and those it must
ARCH_KEYS="ARCH CROSS_COMPILE packages target image fragment option qemu console busybox"
ARCH_NEEDS="ARCH target image"
# arch_conf KEY: what the arch file in use (ARCH_FILE) says of KEY, a
# line each time it says it
arch_conf() { base_conf_in "$1" "${ARCH_FILE:?no arch file}"; }
# arch_file_errors FILE: a line for each key FILE lacks, repeats or does
# not know, and each line that is not KEY=value; nothing if it is right
arch_file_errors() {
	awk -v keys=" $ARCH_KEYS " -v needs="$ARCH_NEEDS" '
	/^#/ || /^[[:space:]]*$/ { next }
	!/^[A-Za-z_]+=/ { print FILENAME ":" FNR ": not KEY=value: " $0; next }
	{
		k = $0; sub(/=.*/, "", k)
		if (index(keys, " " k " ") == 0)
			print FILENAME ":" FNR ": unknown key " k
		else if (++seen[k] == 2 && k != "option" && k != "fragment")
			print FILENAME ":" FNR ": " k " given twice"
	}
	END {
		n = split(needs, need, " ")
		for (i = 1; i <= n; i++)
			if (!seen[need[i]]) print FILENAME ": no " need[i] "="
	}' "$1"
}
# arch_make ARG...: the kernel's make for the arch in use, with ccache
arch_make() {
	local cross
	cross=$(arch_conf CROSS_COMPILE)
	make ARCH="$(arch_conf ARCH)" CROSS_COMPILE="$cross" \
		CC="ccache ${cross}gcc" "$@"
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
