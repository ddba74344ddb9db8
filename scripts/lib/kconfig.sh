# shellcheck shell=bash
# The test kernel's config: the base's Kconfig targets, the fragments,
# and which of their options a .config has.

# kconfig_start, kconfig_update: the Kconfig targets that make the config
# to start from and that fill in a .config's missing symbols (the base
# file's config=, two words)
kconfig_start() {
	local c
	c=$(base_conf config) || return 1
	echo "${c%% *}"
}
kconfig_update() {
	local c
	c=$(base_conf config) || return 1
	echo "${c#* }"
}

# The test kernel's options: the fragments the tests need, each line of
# which must stick (Kconfig.fragment, then EXTRA_FRAGMENT, a later one
# overriding an earlier), and kconfig/Kconfig.trim.fragment, merged first, which
# only makes the kernel smaller: a base may not honour all of it
# shellcheck disable=SC2086 # no word when EXTRA_FRAGMENT is unset
needed_fragments() { echo "$TOP/Kconfig.fragment" ${EXTRA_FRAGMENT:-}; }
trim_fragments() { echo "$TOP/kconfig/Kconfig.trim.fragment"; }

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
