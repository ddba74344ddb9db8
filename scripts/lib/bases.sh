# shellcheck shell=bash
# The bases: one file each in scripts/bases/ (v7.3, v6.12, ...), saying
# where the base comes from and what it has; the scripts read them and
# know no base by name.  make run builds the first of DEFAULT_BASES, make
# test covers them all; BASE= picks any base Debian ships as source, KSRC=
# takes a tree of any base.
BASES_DIR=$TOP/scripts/bases
DEFAULT_BASES="7.3 6.12 6.1"
# conf_get KEY FILE: the values of KEY in a base file, a line each, in
# REPLY (read in the shell: lib.sh loads in every step)
conf_get() {
	local line
	REPLY=
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line != "$1="* ]] || REPLY+=${REPLY:+$'\n'}${line#*=}
	done <"$2"
}
# base_conf_in KEY FILE: the value of KEY in a base file
base_conf_in() {
	conf_get "$@"
	[ -z "$REPLY" ] || printf '%s\n' "$REPLY"
}
SUPPORTED=$(cd "$BASES_DIR" && printf '%s\n' v* | sed 's/^v//' | sort -rV | xargs)
# debian_bases: the bases Debian ships as source (their file names a
# package)
debian_bases() {
	local b
	DEBIAN_BASES=
	for b in $SUPPORTED; do
		conf_get package "$BASES_DIR/v$b"
		[ -z "$REPLY" ] || DEBIAN_BASES+=${DEBIAN_BASES:+ }$b
	done
}
debian_bases
if [ -n "$BASE" ]; then
	case " $DEBIAN_BASES " in
	*" $BASE "*) ;;
	*) die "BASE=$BASE is not a Debian base of the series (BASE= takes one of: $DEBIAN_BASES); for a tree of your own use KSRC=/path/to/linux" ;;
	esac
	[ -z "$KSRC" ] ||
		die "BASE=$BASE and KSRC=$KSRC both given: BASE picks Debian's linux-source-$BASE, KSRC your own tree; give one"
	[ -z "${LINUX_TARBALL:-}" ] ||
		die "BASE=$BASE and LINUX_TARBALL=$LINUX_TARBALL both given: BASE picks Debian's linux-source-$BASE, LINUX_TARBALL a release tarball; give one"
fi
# The Debian base this run uses, when it uses one
DEBIAN_BASE=${BASE:-${DEFAULT_BASES%% *}}
conf_get package "$BASES_DIR/v$DEBIAN_BASE"
# shellcheck disable=SC2034 # for debian.sh and the steps
DEBIAN_PKG=$REPLY
conf_get suite "$BASES_DIR/v$DEBIAN_BASE"
# shellcheck disable=SC2034 # for debian.sh and the steps
DEBIAN_SUITE=$REPLY

# kernel_version DIR: "6.12.118" from a tree's top-level Makefile; fails,
# printing nothing, if DIR has no kernel Makefile
kernel_version() {
	awk -F' *= *' '
		$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 }
		END {
			if (v == "" || p == "") exit 1
			print v "." p "." (s == "" ? 0 : s)
		}
	' "$1/Makefile" 2>/dev/null
}

# base_of VERSION: the series that fits a kernel version, e.g. "v6.12"
base_of() {
	local mm=${1%.*} b
	for b in $SUPPORTED; do
		[ "$mm" = "$b" ] && { echo "v$b"; return; }
	done
	die "Linux $1 is not a supported base (supported: $SUPPORTED); see README"
}

# base_conf KEY: what the file of the base in use says of KEY
base_conf() {
	local v b
	v=$(base_version) || return 1
	b=$(base_of "$v") || return 1
	base_conf_in "$1" "$BASES_DIR/$b"
}

# base_lacks TREE: what the series needs of its base that the version does
# not tell, as the base file's "requires=FILE<tab>TEXT<tab>WHY" lines say:
# prints the WHY of the first TEXT that TREE's FILE lacks, and fails
base_lacks() {
	local file text why reqs
	reqs=$(base_conf requires) || return 1
	while IFS=$'\t' read -r file text why; do
		[ -n "$file" ] || continue
		grep -qF -- "$text" "$1/$file" 2>/dev/null || { echo "$why"; return 1; }
	done <<<"$reqs"
}

# KSRC= is checked where it comes in, as BASE= is above, so that every
# step, the first included, stops at once on a tree the series cannot
# use (lib.sh calls this once it has made KSRC of LINUX_TARBALL).
# kernel_version fails on a directory without a kernel Makefile: it is
# tested in the if, where set -e would end the script without a word.
check_ksrc() {
	local v
	[ -n "$KSRC" ] || return 0
	[ -d "$KSRC" ] ||
		die "KSRC=$KSRC is not a directory: point KSRC at the top of a Linux source tree"
	if ! v=$(kernel_version "$KSRC") || [ ! -f "$KSRC/fs/eventpoll.c" ]; then
		die "KSRC=$KSRC is not a kernel tree (no Makefile with VERSION and PATCHLEVEL, or no fs/eventpoll.c): point KSRC at the top of a Linux source tree"
	fi
	base_of "$v" >/dev/null
}
