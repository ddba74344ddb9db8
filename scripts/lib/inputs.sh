# shellcheck shell=bash
# The values a person passes, each checked where it comes in: lib.sh
# calls check_inputs as it loads, so the first step of any target (deps,
# before it installs anything) stops on a bad value with one line that
# says what is accepted.  BASE=, KSRC= and LINUX_TARBALL= are checked by
# bases.sh; a follow-up's or a user's tree here, by what its queue
# (patches/PROJECT/) needs of it.

# inputs_die VAR WHAT: stop on VAR's value, saying what VAR takes
inputs_die() {
	die "$1=${!1} is not $2"
}

# check_count VAR MIN MAX: VAR, if set, is a whole number in [MIN, MAX]
check_count() {
	local v=${!1:-}
	[ -n "$v" ] || return 0
	if ! [[ $v =~ ^[0-9]{1,6}$ ]] || [ "$v" -lt "$2" ] || [ "$v" -gt "$3" ]; then
		inputs_die "$1" "a whole number from $2 to $3"
	fi
}

# check_mem: MEM, if set, is a QEMU memory size of at least 256M
check_mem() {
	local v=${MEM:-} mib
	[ -n "$v" ] || return 0
	[[ $v =~ ^([0-9]{1,6})([MG]?)$ ]] ||
		inputs_die MEM "a memory size such as 1G or 512M"
	mib=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" != G ] || mib=$((mib * 1024))
	[ "$mib" -ge 256 ] ||
		inputs_die MEM "enough memory for the guest: 256M or more, such as 1G"
}

# check_queue_tree PROJECT [VAR [needed]]: the tree given for
# patches/PROJECT/ (in VAR, by default PROJECT's), if any (with needed:
# it must be), is one the queue can go on: a git clone with the commit the series file
# pins (a follow-up's "# commit: <40 hex>"), or a checkout of the program
# with the first file the queue changes (a user's queue, which goes on the
# checkout's own commit)
check_queue_tree() {
	local project=$1 var dir queue=$TOP/patches/$1 pinned url file what
	# by default PROJECT's name without dashes, in capitals (MANPAGES)
	var=${2:-${project//-/}}
	var=${var^^}
	dir=${!var:-}
	[ -n "$dir" ] || [ "${3:-}" = needed ] || return 0
	pinned=$(sed -n 's/^# commit: \([0-9a-f]\{40\}\).*/\1/p' "$queue/series")
	url=$(sed -n 's/^# upstream: \([^ ]*\).*/\1/p' "$queue/series")
	what="a checkout of $project"
	[ -z "$url" ] || what="a git clone of $url that has commit ${pinned:0:12}"
	[ -n "$dir" ] ||
		die "no $project tree: give $what, as in 'make check-$project $var=/path/to/$project'"
	[ -d "$dir" ] ||
		die "$var=$dir is not a directory: give $what, as in 'make check-$project $var=/path/to/$project'"
	if [ -n "$pinned" ]; then
		git -C "$dir" cat-file -e "$pinned^{commit}" 2>/dev/null ||
			die "$var=$dir has no commit $pinned, which patches/$project/series pins: fetch it there ($url)"
		return 0
	fi
	file=$(sed -n 's|^--- a/||p' "$(list_patches "$queue" | head -n 1)" | head -n 1)
	[ -f "$dir/$file" ] ||
		die "$var=$dir is not a $project tree (no $file): point $var at the top of a checkout of $project"
}

# check_inputs: every value above, as given
check_inputs() {
	local p
	check_count SMP 1 64
	check_count TIMEOUT 1 86400
	check_count N 1 100000
	check_mem
	case ${ACCEL:-tcg} in
	tcg) ;;
	kvm) [ -w /dev/kvm ] || die "ACCEL=kvm, but /dev/kvm is missing or not writable here: leave ACCEL unset (QEMU's TCG)" ;;
	*) inputs_die ACCEL "tcg or kvm" ;;
	esac
	case ${TOOLCHAIN:-} in
	'' | 0 | 1) ;;
	*) inputs_die TOOLCHAIN "0 or 1 (unset: when gcc needs it)" ;;
	esac
	[ -z "${EXTRA_FRAGMENT:-}" ] || [ -f "$EXTRA_FRAGMENT" ] ||
		inputs_die EXTRA_FRAGMENT "a file: give a Kconfig fragment such as kconfig/Kconfig.debug.fragment"
	for p in ${ARCHES:-}; do
		[ -f "$ARCHES_DIR/$p" ] ||
			die "ARCHES=$ARCHES names '$p', which is not an arch (ARCHES= takes words of: $(cd "$ARCHES_DIR" && echo *))"
	done
	# a sender (lib/series.sh) if one is given, or if make b4-prep needs one
	[ -z "${SIGNOFF:-}${NEED_SENDER:-}" ] || sender >/dev/null
	# make check-PROJECT needs PROJECT's tree (the Makefile says which)
	[ -z "${QUEUE_TREE:-}" ] || check_queue_tree "$QUEUE_TREE" "" needed
	for p in "$TOP"/patches/*/series; do
		[ -f "$p" ] || continue
		p=${p%/series}
		p=${p##*/}
		case $p in v[0-9]*) continue ;; esac
		check_queue_tree "$p"
	done
}
