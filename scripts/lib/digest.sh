# shellcheck shell=bash
# Names for content: what keys a tree, a build or a program to its inputs.

# A short, stable name for some content: hash of files, or of stdin
# shellcheck disable=SC2120 # files, or stdin when none is named
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
