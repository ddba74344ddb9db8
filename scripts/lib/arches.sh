# shellcheck shell=bash
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
