#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# One LAVA job: the antinomie-corpus test definition
# (lava/automated/linux/antinomie-corpus/) on one kernel, booted in QEMU by
# tuxrun (--runtime null: the host's qemu and the distribution's
# lava-dispatcher, no container, no network), with a bundle
# (scripts/regress.sh --bundle) as the root file system. What a lab would
# run on a board, here on the build host; two jobs per kernel (a run and
# its rerun) give `scripts/regress.sh --compare A B --rerun A2 B2` what it
# reads.
#
# usage: scripts/lava-corpus-job.sh --kernel BZIMAGE --bundle DIR --out OUT
#            [--timeout MINUTES]
#   --kernel BZIMAGE  the kernel to boot (the patched one: a normal-variant
#                     bzImage, no modules, virtio-blk built in)
#   --bundle DIR      what scripts/regress.sh --bundle wrote; it becomes the
#                     initramfs (its /init gives LAVA a shell on the console)
#   --out OUT         a new directory: job/ (the job as run, its inputs),
#                     lava-log.txt and lava-log.yaml (the job's log),
#                     lava-results.json (tuxrun's results: every
#                     lava-test-case), antinomie-results.tar.gz and
#                     SHA256SUMS (the artifact, as the job wrote it) and
#                     results/ (it unpacked: give it to regress.sh --compare)
#   --timeout MINUTES the test action's limit (default 30)
# Prints one line per test case. Exit status: 0 every test case passed, 1
# one failed (the job ran), 125 the job did not run or left no artifact.
# Installs what it needs: lava-dispatcher (Debian) and tuxrun (PyPI, in a
# venv under the cache).
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"
failures_cannot_test
# tuxrun and the tuxlava it renders the job's device dictionary with
# (its qemu template and the qemu-lava device), pinned together.
TUXRUN_VERSION=1.11.0
TUXLAVA_VERSION=0.28.0

kernel="" bundle="" out="" test_minutes=30
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value (see the header of $0)"
	case "$1" in
	--kernel) kernel=$2 ;;
	--bundle) bundle=$2 ;;
	--out) out=$2 ;;
	--timeout) test_minutes=$2 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift 2
done
{ [ -n "$kernel" ] && [ -n "$bundle" ] && [ -n "$out" ]; } || die "--kernel, --bundle and --out are needed (see the header of $0)"
[ -f "$kernel" ] || die "--kernel $kernel: no such file"
[ -x "$bundle/run-corpus" ] || die "--bundle $bundle: not a bundle (no run-corpus; scripts/regress.sh --bundle makes one)"
[[ "$test_minutes" =~ ^[0-9]+$ ]] || die "--timeout $test_minutes: not a number of minutes"
[ ! -e "$out" ] || die "--out $out exists; give a new directory"

# lava-run and the qemu it starts; cpio and gzip for the root file system.
apt_install_missing lava-dispatcher qemu-system-x86 cpio gzip python3-venv
venv_name=tuxrun-$TUXRUN_VERSION-tuxlava-$TUXLAVA_VERSION
python_venv "$venv_name" 'import tuxrun, tuxlava' "tuxrun==$TUXRUN_VERSION" "tuxlava==$TUXLAVA_VERSION"
venv=$ANTINOMIE_CACHE/venv/$venv_name

mkdir -p "$out/job"
out=$(cd "$out" && pwd)
job=$out/job
stage "the job's inputs in $job"
# A copy: the kernel cache is rebuilt by other runs, the job reads it later.
cp "$kernel" "$job/bzImage"
(cd "$bundle" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0 | gzip -1) >"$job/rootfs.cpio.gz" ||
	die "packing the bundle $bundle as a cpio archive failed"
# The test definitions, as tuxrun hands Linaro's to LAVA: a tarball of
# the repository's layout (from: url).
tar -czf "$job/definitions.tar.gz" -C "$ANTINOMIE_ROOT/lava" automated ||
	die "packing the test definitions failed"
# The guest's /dev/vda: the definition writes the artifact there (the
# kernel has no network and no 9p). Sparse: it costs what is written.
truncate -s 2G "$job/artifact.img"
sed -e "s|@KERNEL@|$job/bzImage|" -e "s|@ROOTFS@|$job/rootfs.cpio.gz|" \
	-e "s|@DEFINITIONS@|$job/definitions.tar.gz|" -e "s|@ARTIFACT_DISK@|$job/artifact.img|" \
	-e "s|@TEST_MINUTES@|$test_minutes|" -e "s|@JOB_MINUTES@|$((test_minutes + 15))|" \
	"$ANTINOMIE_ROOT/lava/automated/linux/antinomie-corpus/tuxrun-job.yaml" >"$job/job.yaml"
! grep -q '^[^#]*@[A-Z_]*@' "$job/job.yaml" || die "$job/job.yaml has a placeholder left"

stage "tuxrun: the job on $(basename "$kernel") ($(file -b "$kernel" | grep -o 'version [^ ]*' || echo "unknown version"))"
# tuxrun's own exit status says nothing here: with --job-definition it
# expects none of the job's test definitions (they are not its own
# --tests), so it exits 2 even when every test case passed; the results
# file is what is read.
# From $out: lava-run writes its output directory ("output") in the
# current one.
rc=0
(cd "$out" && exec "$venv/bin/tuxrun" --runtime null --device qemu-lava --job-definition "file://$job/job.yaml" \
	--results "$out/lava-results.json" --log-file-text "$out/lava-log.txt" \
	--log-file-yaml "$out/lava-log.yaml") >"$out/tuxrun.log" 2>&1 || rc=$?
[ -s "$out/lava-results.json" ] ||
	die "tuxrun exited $rc and wrote no results: $(tail -n 5 "$out/tuxrun.log")"

# Every test case of the job: "SUITE CASE RESULT" per line; then the
# job's own verdict.
cases=$(python3 "$ANTINOMIE_ROOT/scripts/lava-results.py" "$out/lava-results.json") || die "cannot read $out/lava-results.json"
while read -r suite name result; do
	[ "$suite" = lava ] || info "lava-test-case $name: $result"
done <<<"$cases"
job_result=$(sed -n 's/^lava job //p' <<<"$cases")
[ "$job_result" = pass ] ||
	die "the LAVA job did not finish (job: $job_result, tuxrun exited $rc): $(grep -i 'error' "$out/lava-log.txt" | tail -n 3)"
grep -q '^antinomie-corpus antinomie-corpus ' <<<"$cases" ||
	die "the job reported no antinomie-corpus test case: did the definition run? (see $out/lava-log.txt)"

stage "the artifact from the job's disk"
tar -xf "$job/artifact.img" -C "$out" ||
	die "no artifact on the job's disk $job/artifact.img (see the artifact test case in $out/lava-log.txt)"
(cd "$out" && sha256sum -c --quiet SHA256SUMS) || die "the artifact does not match its SHA256SUMS"
tar -xzf "$out/antinomie-results.tar.gz" -C "$out" || die "cannot unpack $out/antinomie-results.tar.gz"
[ -f "$out/results/entries" ] || die "the artifact holds no results/entries"
rm -f "$job/artifact.img" "$job/rootfs.cpio.gz" "$job/bzImage"
info "results in $out/results (kernel $(cat "$out/results/kernel"))"
if grep -qv ' pass$' <<<"$cases"; then
	stage "a test case did not pass"
	exit 1
fi
stage "every test case passed"
