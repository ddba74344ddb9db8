#!/usr/bin/env bats
# The arch files of scripts/arches/, as check-arches and boot read them:
# arch_file_errors on each committed file and on broken ones, and
# arch_conf's answers.

load helpers

setup() {
	load_lib
	F=$BATS_TEST_TMPDIR/arch
}

@test "arches: every file in scripts/arches/ is right" {
	local f
	for f in "$SCRIPTS"/arches/*; do
		run arch_file_errors "$f"
		printf '%s\n' "$output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "arches: every fragment= an arch file names is there" {
	local f g
	for f in "$SCRIPTS"/arches/*; do
		ARCH_FILE=$f
		for g in $(arch_conf fragment); do
			[ -f "$(dirname "$SCRIPTS")/$g" ] || { echo "$f: no $g"; return 1; }
		done
	done
}

@test "arches: check-arches' default arches each have a file" {
	local defaults a
	# shellcheck disable=SC2016 # the script's own text, not an expansion
	defaults=$(sed -n 's/^arches=${ARCHES:-\(.*\)}$/\1/p' "$SCRIPTS/checks/check-arches")
	[ -n "$defaults" ]
	for a in $defaults; do
		[ -f "$SCRIPTS/arches/$a" ]
	done
}

@test "arches: an unknown key, a repeated one, a line that is not KEY=value" {
	printf '%s\n' '# a comment' '' ARCH=arm target=zImage \
		image=arch/arm/boot/zImage target=Image Arch=arm 'option CONFIG_X=y' >"$F"
	run arch_file_errors "$F"
	printf '%s\n' "$output"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "$F:6: target given twice" ]
	[ "${lines[1]}" = "$F:7: unknown key Arch" ]
	[ "${lines[2]}" = "$F:8: not KEY=value: option CONFIG_X=y" ]
}

@test "arches: a file without a needed key" {
	printf '%s\n' ARCH=arm option=CONFIG_X=y option=CONFIG_Y=y >"$F"
	run arch_file_errors "$F"
	[ "$output" = "$F: no target=
$F: no image=" ]
}

@test "arches: arch_conf gives every option= line, and values as written" {
	printf '%s\n' ARCH=arm CROSS_COMPILE= target=zImage image=i \
		'option=# CONFIG_THUMB2_KERNEL is not set' option=CONFIG_AEABI=y \
		'qemu=qemu-system-aarch64 -machine virt' >"$F"
	ARCH_FILE=$F
	[ "$(arch_conf option)" = "# CONFIG_THUMB2_KERNEL is not set
CONFIG_AEABI=y" ]
	[ "$(arch_conf qemu)" = "qemu-system-aarch64 -machine virt" ]
	[ -z "$(arch_conf CROSS_COMPILE)" ]
	[ -z "$(arch_conf console)" ]
	# the options as the config check reads them
	[ "$(arch_conf option | wanted_options /dev/stdin)" = "CONFIG_THUMB2_KERNEL is not set
CONFIG_AEABI=y" ]
}

@test "arches: boot's arch file for x86_64 is the machine it always booted" {
	# shellcheck disable=SC2034 # arch_conf reads it
	ARCH_FILE=$SCRIPTS/arches/x86_64
	[ "$(arch_conf qemu)" = "qemu-system-x86_64 -machine pc" ]
	[ "$(arch_conf image)" = arch/x86/boot/bzImage ]
	[ "$(arch_conf console)" = ttyS0 ]
}
