# shellcheck shell=bash
# Shared by the scripts: where things live, how a step talks to a person.
# Each step sources this file and nothing else; it sources lib/*.sh, one
# file per concern:
#
#   bases.sh    the base files of scripts/bases/, BASE= and KSRC=
#   debian.sh   Debian's mirror, a sources list of our own, its packages
#   paths.sh    every tree and build, derived from the inputs alone
#   series.sh   the series and the queues, git am
#   trees.sh    worktrees of a base, and the scratch tree
#   kconfig.sh  the fragments and which options a .config has
#   run.sh      what a run uses of the cache, locks, the CPU lock
#   digest.sh   names for content: the keys of trees, builds, programs
#   prune.sh    the cache's cap and its pruning
#   tap.sh      TAP records, plans and their verdicts, kernel reports
#   arches.sh   the arch files of scripts/arches/
#   tarball.sh  LINUX_TARBALL=, a base given as a release tarball
#   inputs.sh   the other values a person passes (SMP=, GLIBC=, ...)
#
# The library calls no step: a step runs the steps it needs itself.  What
# passes between steps is the environment, the variables scripts/README
# lists under "The variables".  A command substitution fails as its last
# failing command does (inherit_errexit), and a path function that cannot
# derive its path fails without printing one (lib/paths.sh).
set -eu
shopt -s inherit_errexit

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

# need TOOL PACKAGE: stop with the fix if a tool is missing
need() {
	command -v "$1" >/dev/null 2>&1 ||
		die "$1 not found: run 'make deps' (it installs $2)"
}

# Each file's top level uses only what is above and its own functions
# shellcheck source=lib/bases.sh
. "$TOP/scripts/lib/bases.sh"
# shellcheck source=lib/debian.sh
. "$TOP/scripts/lib/debian.sh"
# shellcheck source=lib/paths.sh
. "$TOP/scripts/lib/paths.sh"
# shellcheck source=lib/series.sh
. "$TOP/scripts/lib/series.sh"
# shellcheck source=lib/trees.sh
. "$TOP/scripts/lib/trees.sh"
# shellcheck source=lib/kconfig.sh
. "$TOP/scripts/lib/kconfig.sh"
# shellcheck source=lib/run.sh
. "$TOP/scripts/lib/run.sh"
# shellcheck source=lib/digest.sh
. "$TOP/scripts/lib/digest.sh"
# shellcheck source=lib/prune.sh
. "$TOP/scripts/lib/prune.sh"
# shellcheck source=lib/tap.sh
. "$TOP/scripts/lib/tap.sh"
# shellcheck source=lib/arches.sh
. "$TOP/scripts/lib/arches.sh"
# shellcheck source=lib/tarball.sh
. "$TOP/scripts/lib/tarball.sh"
# shellcheck source=lib/inputs.sh
. "$TOP/scripts/lib/inputs.sh"

# Every value given, checked before the script does anything: a tarball
# becomes the tree it holds, which the steps then take as KSRC
if [ -n "${LINUX_TARBALL:-}" ]; then
	[ -z "$KSRC" ] ||
		die "KSRC=$KSRC and LINUX_TARBALL=$LINUX_TARBALL both given: KSRC is a tree, LINUX_TARBALL a release tarball; give one"
	KSRC=$(tarball_tree)
	export KSRC
	unset LINUX_TARBALL
fi
check_ksrc
check_inputs
