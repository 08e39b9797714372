#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Capture golden ring images in the guest and write them, with the
# workload's log, under reader/tests/data/guest/NAME/ (NAME: basic, lossy;
# see qemu/scenarios/golden-capture). The files cross the serial console as
# base64 between markers, each checked against the sha256 the guest printed.
# Then regenerate and review the expected output:
#   ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader
#
# usage: scripts/capture-golden.sh [--kernel BZIMAGE] [--console LOG]
#   --kernel BZIMAGE  boot this kernel (default: qemu/run.sh's)
#   --console LOG     do not boot: extract from the console log of an
#                     earlier golden-capture run
# The initramfs is the last qemu/build-initramfs.sh image.
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

kernel_args=() console=""
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel_args=(--kernel "$2"); shift ;;
	--console) console=$2; shift ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift
done
need_cmd base64 sha256sum awk

if [ -z "$console" ]; then
	console=$ANTINOMIE_CACHE/golden-console.log
	qemu/run.sh --quiet "${kernel_args[@]}" --scenario golden-capture --timeout 600 --log "$console"
fi
[ -f "$console" ] || die "no console log at $console"

stage "extracting the images from $console"
dest=reader/tests/data/guest
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each file's base64 lines go to $work/NAME/FILE.b64, its sha256 to
# FILE.sha256. Kernel messages ("[    1.23] ...") that interleave are dropped.
sed -e 's/\r$//' "$console" | awk -v work="$work" '
	/^ANTINOMIE-GOLDEN-FILE / {
		name = $2; file = $3; out = work "/" name "/" file ".b64"
		system("mkdir -p " work "/" name)
		print $4 > (work "/" name "/" file ".sha256")
		printf "" > out
		next
	}
	/^ANTINOMIE-GOLDEN-END$/ { out = ""; next }
	out != "" && /^[A-Za-z0-9+\/=]+$/ { print >> out }'
kernel=$(sed -e 's/\r$//' "$console" | sed -n 's/^antinomie-init: \([^,]*\),.*/\1/p' | head -1)

n=0
for d in "$work"/*/; do
	[ -d "$d" ] || continue
	name=$(basename "$d")
	mkdir -p "$dest/$name"
	rm -f "$dest/$name"/cpu*.ring
	for b in "$d"*.b64; do
		file=$(basename "$b" .b64)
		base64 -d "$b" >"$dest/$name/$file" || die "$name/$file: bad base64"
		want=$(cat "$d$file.sha256")
		got=$(sha256sum "$dest/$name/$file" | cut -d' ' -f1)
		[ "$want" = "$got" ] || die "$name/$file: sha256 $got, the guest said $want (console damaged?)"
		info "$dest/$name/$file ($(stat -c %s "$dest/$name/$file") bytes, sha256 ok)"
		n=$((n + 1))
	done
	case "$name" in
	basic) mode="exact" ;;
	*) mode="--subset" ;;
	esac
	cat >"$dest/$name/capture.txt" <<-EOF
		Captured in the guest by scripts/capture-golden.sh (qemu/scenarios/golden-capture, image set "$name").
		kernel: $kernel
		workload.jsonl: what antinomie-workload passed and got back, one call per line
		cpuN.ring: reader dump-rings of the same capture (reader/README.md, "Golden ring image")
		compare: $mode
	EOF
done
[ $n -gt 0 ] || die "no ANTINOMIE-GOLDEN-FILE in $console"
stage "wrote $n files; now: ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader, and review expected.*"
