# shellcheck shell=bash
# Debian: its mirror, a sources list of our own, and the linux-source
# package a Debian base comes from.  A package from the
# machine's own apt sources is installed (scripts/steps/deps); one from another
# suite is fetched into the cache (scripts/steps/fetch).

debian_debs() { echo "$CACHE/debian/$DEBIAN_SUITE"; }
# The Debian mirror that serves the machine's own release, from its apt
# sources; empty if they name none
debian_mirror() {
	local codename
	codename=$(release_codename)
	# shellcheck disable=SC2016 # apt's $(...) fields, not the shell's
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v c="$codename" '$2 == c { print $1; exit }'
}
# private_apt DIR LINE: apt-get options for a sources list of our own in
# DIR holding LINE, with apt's lists and downloads kept there too: the
# machine's apt configuration is left alone.  Sets the array APT_OPTS.
private_apt() {
	rm -rf "$1"
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial"
	echo "$2" >"$1/sources.list"
	# shellcheck disable=SC2034 # the caller's
	APT_OPTS=(-q -o "Dir::Etc::SourceList=$1/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$1/lists"
		-o "Dir::Cache=$1/cache")
}
# release_codename: the machine's Debian release (bookworm)
release_codename() {
	# shellcheck source=/dev/null # the machine's file, not the project's
	(. /etc/os-release && echo "${VERSION_CODENAME:-}")
}

# debian_deb: the newest fetched package of the base; fails, saying what
# to run, if none is
debian_deb() {
	local deb
	# shellcheck disable=SC2012 # Debian's .deb names have no blanks
	deb=$(ls "$(debian_debs)/${DEBIAN_PKG}_"*.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$deb" ] ||
		die "$DEBIAN_PKG is not fetched yet: run 'make source${BASE:+ BASE=$BASE}'"
	echo "$deb"
}
# debian_version: the version of the base's package, fetched or installed
debian_version() {
	local deb
	if [ -n "$DEBIAN_SUITE" ]; then
		deb=$(debian_deb) || return 1
		dpkg-deb -f "$deb" Version
	else
		dpkg-query -W -f='${Version}' "$DEBIAN_PKG" 2>/dev/null ||
			die "$DEBIAN_PKG is not installed: run 'make deps${BASE:+ BASE=$BASE}'"
	fi
}
