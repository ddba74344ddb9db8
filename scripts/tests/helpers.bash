# shellcheck shell=bash
# Shared by the .bats files here: lib.sh's functions in the test's shell,
# with none of the variables that the steps pass between them (make test
# runs these tests, and its RESULTS must not count them twice).
# shellcheck disable=SC2034 # DATA, TAG, OTHER_TAG: for the .bats files
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DATA=$TESTS/data
SCRIPTS=$(dirname "$TESTS")
# The nonce of the boot the console logs in data/ were cut from (a make
# run of 7.3), and of an earlier one
TAG="@@ 5c347874b2848b5d"
OTHER_TAG="@@ 9b1e64c0d2a7f315"

unset RESULTS BASE_LABEL LABEL KCSAN EXPECT_SPLAT UNPATCHED MUTANT \
	MUTANT_SET EXTRA_FRAGMENT GUEST_ENV KSRC BASE TOOLCHAIN _recorded \
	LINUX_TARBALL BASES SECOND_KERNEL

load_lib() {
	# shellcheck source=../lib.sh
	. "$SCRIPTS/lib.sh"
	set +u
}

# on_base VERSION: lib.sh's functions answer for that base, with no tree
on_base() {
	eval "base_version() { echo $1; }"
}

# not CMD...: fails if CMD succeeds (a bare '! CMD' never fails a test:
# bash's errexit ignores it)
not() {
	if "$@"; then
		echo "expected to fail: $*" >&2
		return 1
	fi
}
