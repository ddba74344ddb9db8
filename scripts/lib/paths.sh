# shellcheck shell=bash
# Where things live.  Every path is derived from the inputs alone (the
# base, the series, the config), so each step finds what the step before
# it made without being told.  A path function that cannot derive its
# path (no base fetched, no tree) prints nothing on stdout, fails, and
# leaves one line on stderr saying what to run: its caller stops there.

# The pristine base: Debian's package extracted once, or a copy of $KSRC
base_dir() {
	local v
	if [ -n "$KSRC" ]; then
		v=$(realpath "$KSRC") || return 1
		echo "$CACHE/base/ksrc-$(echo "$v" | digest)"
	else
		v=$(debian_version) || return 1
		echo "$CACHE/base/debian-${v//[~+:]/_}"
	fi
}
base_commit() {
	local d
	d=$(base_dir) || return 1
	git -C "$d" rev-parse -q --verify HEAD 2>/dev/null ||
		die "no base tree in $d: run 'make source'"
}
base_version() {
	local d
	d=$(base_dir) || return 1
	kernel_version "$d" || die "no kernel tree in $d: run 'make source'"
}
series_dir() {
	local v b
	v=$(base_version) || return 1
	b=$(base_of "$v") || return 1
	echo "$TOP/patches/$b"
}

# The compiler fixes an old base needs to build with today's toolchain:
# patches/<toolchain>/, as the base file's toolchain= names it
toolchain_dir() {
	local d
	d=$(base_conf toolchain) || return 1
	echo "$TOP/patches/${d:-none}"
}

# Where the series starts from: the base, or the base with the toolchain
# fixes (a worktree keyed by their content)
start_dir() {
	local d key
	d=$(base_dir) || return 1
	if use_toolchain; then
		key=$(base_key toolchain) || return 1
		echo "$CACHE/work/$(basename "$d")-toolchain-$key"
	else
		echo "$d"
	fi
}

# base_key [toolchain]: the digest of the base commit and the patches on
# it: the toolchain fixes, and with no argument the series too
base_key() {
	local commit patches
	commit=$(base_commit) || return 1
	patches=$(toolchain_patches) || return 1
	if [ $# -eq 0 ]; then
		patches="$patches${patches:+$'\n'}$(series_patches)" || return 1
	fi
	# shellcheck disable=SC2086 # a path a word
	{ echo "$commit"; [ -z "$patches" ] || cat $patches; } | digest
}

# The scratch tree of a base (lib/trees.sh: scratch_at)
scratch_dir() {
	local d
	d=$(base_dir) || return 1
	echo "$CACHE/work/$(basename "$d")-scratch"
}

# A deliberately wrong kernel for the negative controls: MUTANT=NAME adds
# fs-eventpoll/<dir>/mutants/NAME.edit on top of the series, <dir> as the
# base file's mutants= says (bases whose ep_disable() reads the same share).
# MUTANT_SET=races takes it from races/ instead: data races, which KCSAN
# must report (make test-kcsan), not wrong answers for the selftest.
mutant_dir() {
	local d s
	d=$(base_conf mutants) || return 1
	if [ -z "$d" ]; then
		s=$(series_dir) || return 1
		die "Linux $(base_version) has no mutants (scripts/bases/$(basename "$s"): mutants=)"
	fi
	echo "$TOP/fs-eventpoll/$d/${MUTANT_SET:-mutants}"
}
# mutant_key: what the scratch tree must hold for MUTANT=NAME
mutant_key() {
	local commit patches d
	commit=$(base_commit) || return 1
	patches=$(toolchain_patches) || return 1
	patches="$patches $(series_patches)" || return 1
	d=$(mutant_dir) || return 1
	# shellcheck disable=SC2086 # a path a word
	{ echo "$commit"; cat $patches "$d"/*; echo "$MUTANT"; } | digest
}

# The tree to build: the base with the series, keyed by the base commit
# and the patches' content; UNPATCHED=1 is the tree the series starts from,
# MUTANT=NAME the scratch tree (scripts/steps/apply puts the series and the
# mutant there)
tree_dir() {
	local d key
	if [ -n "${UNPATCHED:-}" ]; then
		start_dir
	elif [ -n "${MUTANT:-}" ]; then
		scratch_dir
	else
		d=$(base_dir) || return 1
		key=$(base_key) || return 1
		echo "$CACHE/work/$(basename "$d")-$key"
	fi
}

# The build directory, inside the tree (one level down, so that kbuild uses
# relative paths and ccache hits across trees): keyed by the config inputs
config_inputs() {
	# shellcheck disable=SC2046 # a path a word
	echo $(trim_fragments) $(needed_fragments) "$TOP/scripts/steps/configure"
}
build_dir() {
	local t inputs
	# (a step that builds elsewhere, as check-arches does, names its own)
	[ -z "${BUILD_DIR:-}" ] || { echo "$BUILD_DIR"; return; }
	t=$(tree_dir) || return 1
	inputs=$(config_inputs)
	# shellcheck disable=SC2086 # a path a word
	echo "$t/build-$(digest $inputs)"
}
# guest_root PLAN: this run's guest of PLAN in the build: its root (the
# directory), .cpio.gz and .log; guest-PLAN.log points to the latest log
guest_root() {
	local b
	b=$(build_dir) || return 1
	echo "$b/guest-$1.$RUN"
}
