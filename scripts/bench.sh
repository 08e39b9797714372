#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Capture cost, side by side with ftrace's syscall events, the BPF
# contender (qemu/bpf-contender/) and strace, in the QEMU guest (method and
# latest table in BENCHMARKS.md). Builds what it needs: the `bench` kernel
# (the guest's base config, the capture, ftrace's syscall events, the BPF
# syscall and BPF on tracepoints) and the `bench-off` kernel (the base
# config alone: CONFIG_ANTINOMIE=n), both without KUnit as a production
# kernel is (kconfig/variants), QEMU's insn plugin, an image with the
# host's strace and antinomie-bpf
# (scripts/build-bpf-contender.sh, which installs clang and libbpf); then
# boots:
#   1. the bench kernel once: capture off / capture on / ftrace events /
#      BPF on the syscall tracepoints / BPF on the raw tracepoints /
#      strace alternating, --rounds rounds, threads 1 and 4;
#   2. the off kernel once: the same loops, the baseline;
#   3. two boots per instruction-count cell, with N calls and with N/10:
#      (N boot - N/10 boot) / (N - N/10); on the bench kernel also capture
#      with lossless mode on (antinomie.lossless=1, rings that never fill:
#      what the mode costs when no call waits); with --before-patch, the
#      `before` kernel's capture off and on beside them, and both kernels'
#      text sizes;
#   4. the loss test, one boot of the bench kernel: per consumer, reader
#      --follow -w on capture's rings (the calls counted with -c, or
#      printed as text or as JSON) or the BPF contender draining its
#      ring buffer live to a file (4 x capture's per-CPU ring size: the
#      same bytes), recording while 4 threads call;
#   5. (--steps profile, not in the default) where the instructions go:
#      per path, boots of capture off and capture on (and of the off
#      kernel if counted; with --before-patch, of lossless mode on and the
#      before kernel's capture on) with N calls and with N/10, under the
#      insn-profile plugin (qemu/bench/insn-profile.c);
#      qemu/bench/insn-profile.py charges every instruction to its kernel
#      function (System.map) and prints per function, per call, what
#      capture on adds over capture off, capture off over the off kernel,
#      the bench kernel's capture on over the before kernel's, and lossless
#      mode on over off;
#   6. (--steps drain-profile, not in the default) what a consumer
#      executes: per consumer, boots of 4 threads calling unpaced with it
#      recording (nothing lost) and without it (the records left in the
#      rings, or in the contender's buffer), N/4 and N/40 calls a thread,
#      under the insn-profile plugin; per function, per call, what the
#      consumer adds, the reader's own instructions per reader function.
# Prints the tables (Markdown) and keeps everything in the run directory.
# What it runs is in qemu/bench/: the guest's scenario (scenario, booted as
# bench) and program (antinomie-bench.c), the insn-profile plugin, the
# plugins' builder and the table and profile scripts.
#
# usage: scripts/bench.sh [options]
#   --calls N          timing calls per thread and cell (default 2000)
#   --rounds R         alternating rounds (default 5)
#   --strace-calls N   calls per thread under strace (default 50)
#   --threads LIST     thread counts, comma-separated (default 1,4)
#   --paths LIST       default einval,e2big,swevent,big,getpid
#   --insn-calls N     calls per instruction-count boot (default 50000;
#                      0 skips the instruction counts)
#   --insn-threads LIST  thread counts for the instruction counts (default 1,4)
#   --insn-modes LIST  the bench kernel's modes in the instruction counts
#                      (default off,capture,lossless,ftrace,rawsys,bpf-tp,
#                      bpf-raw,strace)
#   --insn-mem SIZE    guest memory of the instruction-count boots (default
#                      qemu/run.sh's): more calls per boot need larger rings
#   --insn-strace-calls N  calls per instruction-count boot under strace
#                      (default 2000; 0 skips them): strace's cost counted
#                      exactly too, on the bench kernel, every path but getpid
#   --loss-calls N     unpaced loss-test calls per thread (default 40000; 0
#                      skips the loss test)
#   --loss-path P      the loss test's path (default einval)
#   --loss-secs S      length of each paced trial (default 2)
#   --loss-steps K     bisection steps for the paced rate (default 5)
#   --loss-sizes LIST  ring sizes of the unpaced trials, comma-separated,
#                      "default" for the size the kernel boots with
#                      (default default,4194304); the paced bisection runs
#                      at the last
#   --loss-consumers LIST  of reader-count,reader-text,reader-json,bpf-tp,
#                      bpf-raw (default: all that the kernel and image
#                      have; a given one that is missing fails the boot);
#                      also the drain profile's (default: all five)
#   --ring-size BYTES  rings of the timing and insn boots (default 64 MiB:
#                      nothing lost)
#   --jobs J           instruction-count boots run at once (default 1;
#                      counts do not depend on it, times are not taken there)
#   --steps LIST       of time-bench,time-off,insn,loss,profile,drain-profile
#                      (default: all but the two profiles); with --out,
#                      later steps add to an earlier run's directory
#   --profile-calls N  calls per profile boot (default 20000; the drain
#                      profile's 4 threads share them)
#   --insn-kernels LIST  kernels the insn and profile steps count: bench,off
#                      (default both); before with --before-patch
#   --before-patch FILE  also build and count the kernel `before`: the bench
#                      kernel with FILE applied on top of the series
#                      (KERNEL_TEST_PATCH, scripts/build-kernel.sh), a change
#                      that takes the series back to what to compare with,
#                      e.g. in the edit tree (scripts/kernel-tree.sh)
#                      `git diff HEAD HEAD~1` for the series without its
#                      last patch; implies `before` in --insn-kernels
#   --out DIR          run directory (default $ANTINOMIE_CACHE/bench/<UTC time>)
#   --table DIR        only print the tables of an earlier run
#   --skip-build       boot the kernels and image already built
#   --image IMG        boot this guest image in the timing and loss steps
#                      (e.g. one with another reader: loss test before/after);
#                      not with the insn or profile steps
#   --loss-counted     run the loss test under the instruction-count boots'
#                      clock (-icount): guest time follows guest
#                      instructions, so rates depend less on the host's load
# env: as scripts/build-kernel.sh (ANTINOMIE_CACHE, KERNEL_TARBALL, ...)
. "$(dirname "$0")/lib.sh"

calls=2000 rounds=5 strace_calls=50 threads=1,4
paths=einval,e2big,swevent,big,getpid
insn_calls=50000 insn_threads=1,4 insn_strace_calls=2000 insn_mem=""
all_modes=off,capture,lossless,ftrace,rawsys,bpf-tp,bpf-raw,strace insn_modes=$all_modes
loss_calls=40000 loss_path=einval loss_secs=2 loss_steps=5 loss_consumers="" loss_sizes=default,4194304
profile_calls=20000
ring=$((64 << 20)) out="" table_only="" skip_build=0 jobs=1 image="" loss_counted=0
steps=time-bench,time-off,insn,loss insn_kernels=bench,off before_patch=""
num() { [[ "$2" =~ ^[0-9]+$ ]] || die "$1 needs a number, got '$2'"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--calls) num "$1" "${2:-}"; calls=$2; shift ;;
	--rounds) num "$1" "${2:-}"; rounds=$2; shift ;;
	--strace-calls) num "$1" "${2:-}"; strace_calls=$2; shift ;;
	--threads) threads=${2:?--threads needs a list}; shift ;;
	--paths) paths=${2:?--paths needs a list}; shift ;;
	--insn-calls) num "$1" "${2:-}"; insn_calls=$2; shift ;;
	--insn-threads) insn_threads=${2:?--insn-threads needs a list}; shift ;;
	--insn-modes) insn_modes=${2:?--insn-modes needs a list}; shift ;;
	--insn-mem) insn_mem=${2:?--insn-mem needs a size}; shift ;;
	--insn-strace-calls) num "$1" "${2:-}"; insn_strace_calls=$2; shift ;;
	--loss-calls) num "$1" "${2:-}"; loss_calls=$2; shift ;;
	--loss-path) loss_path=${2:?--loss-path needs a path}; shift ;;
	--loss-secs) num "$1" "${2:-}"; loss_secs=$2; shift ;;
	--loss-steps) num "$1" "${2:-}"; loss_steps=$2; shift ;;
	--loss-sizes) loss_sizes=${2:?--loss-sizes needs a list}; shift ;;
	--loss-consumers) loss_consumers=${2:?--loss-consumers needs a list}; shift ;;
	--profile-calls) num "$1" "${2:-}"; profile_calls=$2; shift ;;
	--ring-size) num "$1" "${2:-}"; ring=$2; shift ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	--jobs) num "$1" "${2:-}"; jobs=$2; shift ;;
	--steps) steps=${2:?--steps needs a list}; shift ;;
	--insn-kernels) insn_kernels=${2:?--insn-kernels needs a list}; shift ;;
	--before-patch) before_patch=${2:?--before-patch needs a file}; shift ;;
	--table) table_only=${2:?--table needs a run directory}; shift ;;
	--skip-build) skip_build=1 ;;
	--image) image=${2:?--image needs a file}; shift ;;
	--loss-counted) loss_counted=1 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift
done
for list in "$threads" "$insn_threads"; do
	[[ "$list" =~ ^[1-4](,[1-4])*$ ]] || die "thread counts must be 1..4 (one per vCPU), got '$list'"
done
for p in ${paths//,/ } $loss_path; do
	case "$p" in einval | e2big | swevent | big | getpid) ;; *) die "unknown path '$p'" ;; esac
done
[ "$rounds" -ge 1 ] || die "--rounds must be at least 1"
[ "$jobs" -ge 1 ] || die "--jobs must be at least 1"
for c in ${loss_consumers//,/ }; do
	case "$c" in reader-count | reader-text | reader-json | bpf-tp | bpf-raw) ;; *) die "unknown loss-test consumer '$c'" ;; esac
done
for st in ${steps//,/ }; do
	case "$st" in time-bench | time-off | insn | loss | profile | drain-profile) ;; *) die "unknown step '$st'" ;; esac
done
for m in ${insn_modes//,/ }; do
	[[ ",$all_modes," == *,$m,* ]] || die "unknown mode '$m' in --insn-modes (modes: $all_modes)"
done
if [ -n "$before_patch" ]; then
	[ -f "$before_patch" ] || die "no patch $before_patch (--before-patch)"
	before_patch=$(cd "$(dirname "$before_patch")" && pwd)/$(basename "$before_patch")
	# scripts/build-kernel.sh's link for a KERNEL_TEST_PATCH build.
	before_kernel=bench+$(basename "$before_patch" .patch)
	[[ ",$insn_kernels," == *,before,* ]] || insn_kernels=$insn_kernels,before
fi
for k in ${insn_kernels//,/ }; do
	case "$k" in
	bench | off) ;;
	before) [ -n "$before_patch" ] || die "--insn-kernels before needs --before-patch" ;;
	*) die "unknown kernel '$k' in --insn-kernels" ;;
	esac
done
step() { case ",$steps," in *,"$1",*) return 0 ;; esac; return 1; }
if [ -n "$image" ]; then
	[ -f "$image" ] || die "no guest image $image"
	image=$(cd "$(dirname "$image")" && pwd)/$(basename "$image")
	{ { step insn && [ "$insn_calls" -gt 0 ]; } || step profile; } &&
		die "--image is for the timing and loss steps (the counted steps derive a small image from the built one): give --steps"
fi

if [ -n "$table_only" ]; then
	[ -d "$table_only" ] || die "no run directory $table_only"
	python3 "$ANTINOMIE_ROOT/qemu/bench/bench-table.py" "$table_only"
	exit 0
fi

out=${out:-$ANTINOMIE_CACHE/bench/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage "run directory $out; host load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
{
	echo "date: $(date -u +%FT%TZ)"
	echo "commit: $(git -C "$ANTINOMIE_ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git -C "$ANTINOMIE_ROOT" diff --quiet HEAD -- 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "series: $(cd "$ANTINOMIE_ROOT/kernel-patch" && { cat series; xargs cat <series; } | sha256sum | cut -c1-12) (sha256 of the series file and its patches)"
	echo "qemu: $(qemu-system-x86_64 --version | head -n1)"
	echo "options: calls=$calls rounds=$rounds strace_calls=$strace_calls threads=$threads paths=$paths insn_calls=$insn_calls insn_threads=$insn_threads insn_strace_calls=$insn_strace_calls loss_calls=$loss_calls loss_path=$loss_path loss_secs=$loss_secs loss_steps=$loss_steps loss_consumers=${loss_consumers:-available} loss_sizes=$loss_sizes ring=$ring"
	echo "load before: $(uptime)"
	echo "steps: $steps; insn kernels: $insn_kernels; jobs: $jobs; loss counted: $loss_counted"
	echo "image: ${image:-built}${image:+ (sha256 $(sha256sum "$image" | cut -c1-16))}"
	[ -z "$before_patch" ] || echo "before: $before_kernel = bench + $before_patch (sha256 $(sha256sum "$before_patch" | cut -c1-16))"
} >>"$out/run.txt"

if [ $skip_build -eq 0 ]; then
	"$ANTINOMIE_ROOT/scripts/install-deps.sh" | grep '^==>' || die "scripts/install-deps.sh failed"
	need_cmd strace python3 size
	for v in bench bench-off; do
		[ $v = bench-off ] && ! { step time-off || { { step insn || step profile; } && [[ ",$insn_kernels," == *,off,* ]]; }; } && continue
		stage "kernel '$v' (scripts/build-kernel.sh $v)"
		"$ANTINOMIE_ROOT/scripts/build-kernel.sh" "$v" >"$out/build-$v.log" 2>&1 ||
			die "scripts/build-kernel.sh $v failed: $(grep -m1 '^error:' "$out/build-$v.log" || tail -n1 "$out/build-$v.log")"
	done
	if [ -n "$before_patch" ]; then
		stage "kernel '$before_kernel' (KERNEL_TEST_PATCH=$before_patch scripts/build-kernel.sh bench)"
		KERNEL_TEST_PATCH=$before_patch "$ANTINOMIE_ROOT/scripts/build-kernel.sh" bench >"$out/build-before.log" 2>&1 ||
			die "scripts/build-kernel.sh bench with $before_patch failed: $(grep -m1 '^error:' "$out/build-before.log" || tail -n1 "$out/build-before.log")"
	fi
	stage "QEMU's insn plugin (qemu/bench/build-insn-plugin.sh)"
	"$ANTINOMIE_ROOT/qemu/bench/build-insn-plugin.sh" >"$out/plugin.log" 2>&1 ||
		die "qemu/bench/build-insn-plugin.sh failed: $(grep -m1 '^error:' "$out/plugin.log" || tail -n1 "$out/plugin.log")"
	stage "the BPF contender (scripts/build-bpf-contender.sh)"
	contender=$ANTINOMIE_CACHE/bpf-contender
	"$ANTINOMIE_ROOT/scripts/build-bpf-contender.sh" "$contender" >"$out/bpf-contender.log" 2>&1 ||
		die "scripts/build-bpf-contender.sh failed: $(grep -m1 '^error:' "$out/bpf-contender.log" || tail -n1 "$out/bpf-contender.log")"
	stage "guest image with the host's strace ($(strace -V | head -n1)) and antinomie-bpf"
	extra=$ANTINOMIE_CACHE/bench-image
	rm -rf "$extra"
	"$ANTINOMIE_ROOT/qemu/add-program.sh" "$extra" strace >"$out/image.log" 2>&1 ||
		die "qemu/add-program.sh strace failed: $(tail -n1 "$out/image.log")"
	"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" "$extra" "$contender" >>"$out/image.log" 2>&1 ||
		die "qemu/build-initramfs.sh failed: $(grep -m1 '^error:' "$out/image.log" || tail -n1 "$out/image.log")"
else
	need_cmd python3 size
fi
plugin=$("$ANTINOMIE_ROOT/qemu/bench/build-insn-plugin.sh" 2>/dev/null | tail -n1)
[ -f "$plugin" ] || die "no insn plugin (run without --skip-build)"
initrd=${image:-$ANTINOMIE_CACHE/initramfs/initramfs.cpio}
[ -f "$initrd" ] || die "no guest image at $initrd (run without --skip-build)"
# The instruction-count boots use a small image: unpacking the full one
# (the Rust binaries and strace) is most of a boot's guest instructions;
# the insn cells need only busybox, init, the scenario and
# antinomie-bench.
insn_initrd=$ANTINOMIE_CACHE/initramfs/initramfs-insn.cpio.gz
if { step insn && [ "$insn_calls" -gt 0 ]; } || step profile; then
	small=$ANTINOMIE_CACHE/initramfs/root-insn
	rm -rf "$small"
	# qemu/build-initramfs.sh stages an image IMG in IMG.root.
	cp -a "$initrd.root" "$small" || die "cannot copy the image root ($initrd.root)"
	rm -rf "${small:?}"/bin/{reader,antinomie-workload,antinomie-e2e} "${small:?}/usr/local" "${small:?}/lib" "${small:?}/lib64" "${small:?}/opt"
	(cd "$small" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0 | gzip -1) >"$insn_initrd" ||
		die "cannot pack the instruction-count image"
fi
kernel_of() {
	local k=$ANTINOMIE_CACHE/kernels/$1/arch/x86/boot/bzImage
	[ -f "$k" ] || die "no $1 kernel at $k (run without --skip-build)"
	echo "$k"
}
kbench=$(kernel_of bench)
grep -qx 'CONFIG_FTRACE_SYSCALLS=y' "$(dirname "$kbench")/../../../.config" ||
	die "the bench kernel lacks CONFIG_FTRACE_SYSCALLS"
grep -qx 'CONFIG_BPF_EVENTS=y' "$(dirname "$kbench")/../../../.config" ||
	die "the bench kernel lacks CONFIG_BPF_EVENTS (the BPF contender's modes)"
kbefore=
[ -z "$before_patch" ] || kbefore=$(kernel_of "$before_kernel")
koff=
if step time-off || { { step insn || step profile; } && [[ ",$insn_kernels," == *,off,* ]]; }; then
	koff=$(kernel_of bench-off)
	grep -qx 'CONFIG_ANTINOMIE=y' "$(dirname "$koff")/../../../.config" &&
		die "the off kernel has CONFIG_ANTINOMIE=y"
fi

# boot NAME KERNEL TIMEOUT APPEND [QEMU ARG...]: one quiet guest run of the
# bench scenario, console in $out/NAME.log.
boot() {
	local name=$1 kernel=$2 timeout_s=$3 append=$4
	shift 4
	local qargs=() a
	for a in "$@"; do qargs+=(--qemu-arg "$a"); done
	"$ANTINOMIE_ROOT/qemu/run.sh" --kernel "$kernel" --initrd "$initrd" --scenario bench --accel tcg \
		--no-kunit --quiet --timeout "$timeout_s" --log "$out/$name.log" ${boot_mem:+--mem "$boot_mem"} \
		--append "$append" "${qargs[@]}" >"$out/$name.run" 2>&1 ||
		die "guest run '$name' failed: $(grep -m1 '^error:' "$out/$name.run" || tail -n1 "$out/$name.run")$(grep -m1 'bench: FAIL' "$out/$name.log" | sed 's/^/ -- /')"
}

# The rings' memory bound (an eighth of RAM by default): room for the
# rings of 4 CPUs twice, as SET_RING_SIZE holds the old set beside the new.
ringmem="antinomie.max_ring_memory=$((2 * 4 * (ring + 8192)))"
common="bench.calls=$calls bench.strace_calls=$strace_calls bench.rounds=$rounds bench.threads=$threads bench.paths=$paths bench.ring=$ring"
if step time-bench; then
	stage "timing boot of the bench kernel: $rounds rounds x threads $threads x off/capture/ftrace/bpf-tp/bpf-raw/strace, $calls calls ($strace_calls under strace)"
	boot time-bench "$kbench" 3600 "antinomie.ring_size=$ring $ringmem bench.kind=time $common bench.modes=off,capture,ftrace,rawsys,bpf-tp,bpf-raw,strace"
	info "$(grep -c 'ns_per_call' "$out/time-bench.log") cells measured; load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if step time-off; then
	stage "timing boot of the off kernel (the baseline): $rounds rounds"
	boot time-off "$koff" 1800 "bench.kind=time $common bench.modes=off"
	info "$(grep -c 'ns_per_call' "$out/time-off.log") cells measured; load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

# Every count is the difference of two boots that differ only in the
# number of calls: N and N/10, per call (I(N) - I(N/10)) / (N - N/10).
# Not N and 0: a boot that made no call can differ from one with calls in
# more than the calls (whether the device frees its rings at the last
# close depends on what they still hold; once that was a gigainstruction).
base_calls=$((insn_calls / 10))
profile_base=$((profile_calls / 10))

# The QEMU options of every boot whose instructions are counted. -icount:
# the guest's clock follows its instructions, not the host's (loaded)
# clock, so timer ticks and the boot's time-based loops come out the same
# in every boot (0-call boots differ by ~0.04 % instead of ~2 %), and a
# slow host cannot fail the boot's timer check ("IO-APIC + timer doesn't
# work"). -rtc clock=vm from a fixed date: the guest's wall clock, too,
# starts the same and follows the instructions (~0.012 %).
# shellcheck disable=SC2054 # QEMU's option values are comma-separated.
counted=(-icount shift=3,sleep=off -rtc base=2026-01-01T00:00:00,clock=vm)

if step insn && [ "$insn_calls" -gt 0 ]; then
	# insn_boot KERNEL_NAME KERNEL MODE T LABEL PATH N
	insn_boot() {
		local kname=$1 kernel=$2 mode=$3 t=$4 label=$5 path=$6 n=$7 name insns image=$insn_initrd lossless=
		name=insn-$kname-$mode-t$t-$label
		# strace and its libraries are only in the full image; what
		# unpacking it costs is the same in both boots of a cell.
		[ "$mode" = strace ] && image=$initrd
		[ "$mode" = lossless ] && lossless="antinomie.lossless=1 "
		boot_mem=$insn_mem initrd=$image boot "$name" "$kernel" 1800 \
			"${lossless}antinomie.ring_size=$ring $ringmem bench.kind=insn bench.mode=$mode bench.threads=$t bench.path=$path bench.calls=$n bench.ring=$ring" \
			"${counted[@]}" -plugin "$plugin,inline=on" -d plugin -D "$out/$name.insn"
		insns=$(sed -n 's/^insns: //p' "$out/$name.insn")
		[[ "$insns" =~ ^[0-9]+$ ]] || die "no instruction count in $out/$name.insn"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kname" "$mode" "$t" "$label" "$n" "$insns" >"$out/$name.tsv"
	}
	boots=()
	for t in ${insn_threads//,/ }; do
		for kname in ${insn_kernels//,/ }; do
			case "$kname" in
			bench) modes_k=${insn_modes//,/ } ;;
			before) modes_k="off capture" ;;
			off) modes_k=off ;;
			esac
			for m in $modes_k; do
				cell_paths=${paths//,/ } n=$insn_calls
				case "$m" in
				rawsys)
					case ",$paths," in *,getpid,*) cell_paths=getpid ;; *) continue ;; esac
					;;
				strace)
					[ "$insn_strace_calls" -gt 0 ] || continue
					cell_paths=${cell_paths//getpid/} n=$insn_strace_calls
					;;
				esac
				for p in $cell_paths; do
					boots+=("$kname $m $t base-$p $p $((n / 10))" "$kname $m $t $p $p $n")
				done
			done
		done
	done
	stage "instruction counts: ${#boots[@]} boots ($insn_calls calls and $base_calls per cell, $insn_strace_calls under strace), $jobs at a time"
	running=0 failed=0
	for b in "${boots[@]}"; do
		read -r kname m t label p n <<<"$b"
		case "$kname" in bench) k=$kbench ;; before) k=$kbefore ;; off) k=$koff ;; esac
		if [ $running -ge "$jobs" ]; then
			wait -n || failed=1
			running=$((running - 1))
		fi
		[ $failed -eq 0 ] || break
		(insn_boot "$kname" "$k" "$m" "$t" "$label" "$p" "$n") &
		running=$((running + 1))
	done
	while [ $running -gt 0 ]; do
		wait -n || failed=1
		running=$((running - 1))
	done
	[ $failed -eq 0 ] || die "an instruction-count boot failed (its reason is above)"
	cat "$out"/insn-*.tsv >"$out/insn.tsv"
	# The kernels' text (size(1)'s Berkeley text: code and read-only data).
	for kname in ${insn_kernels//,/ }; do
		case "$kname" in bench) k=$kbench ;; before) k=$kbefore ;; off) k=$koff ;; esac
		printf '%s\t%s\n' "$kname" "$(size -B "$(dirname "$k")/../../../vmlinux" | awk 'NR == 2 { print $1 }')"
	done >"$out/text.tsv"
	info "$(wc -l <"$out/insn.tsv") instruction counts; load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if step profile; then
	profiler=$(dirname "$plugin")/libinsn-profile.so
	[ -f "$profiler" ] || die "no $profiler (run without --skip-build)"
	# map_of KERNEL NAME: the kernel's System.map, kept as $out/NAME.
	map_of() {
		local map
		map=$(dirname "$1")/../../../System.map
		[ -f "$map" ] || die "no System.map beside $1"
		cp "$map" "$out/$2"
	}
	map_of "$kbench" System.map
	[ -z "$koff" ] || map_of "$koff" System-off.map
	[ -z "$kbefore" ] || map_of "$kbefore" System-before.map
	# profile_boot LABEL MODE PATH N KERNEL: one boot under the profile plugin.
	profile_boot() {
		local name=profile-$1-$3-$4 lossless=
		[ "$2" = lossless ] && lossless="antinomie.lossless=1 "
		initrd=$insn_initrd boot "$name" "$5" 1800 \
			"${lossless}antinomie.ring_size=$ring $ringmem bench.kind=insn bench.mode=$2 bench.threads=1 bench.path=$3 bench.calls=$4 bench.ring=$ring" \
			"${counted[@]}" -plugin "$profiler" -d plugin -D "$out/$name.prof"
	}
	# compare P FILE TITLE LABELS BASE_LABEL BASE_MAP TEST_LABEL: what the
	# TEST boots add per call and function over the BASE boots of path P.
	compare() {
		local p=$1 file=$2 title=$3 labels=$4 base=$5 base_map=$6 test=$7
		python3 "$ANTINOMIE_ROOT/qemu/bench/insn-profile.py" --map "$out/System.map" --base-map "$out/$base_map" \
			--labels "$labels" --calls "$profile_calls" --base-calls "$profile_base" --title "$title" \
			"$out/profile-$base-$p-$profile_base.prof" "$out/profile-$base-$p-$profile_calls.prof" \
			"$out/profile-$test-$p-$profile_base.prof" "$out/profile-$test-$p-$profile_calls.prof" \
			>"$out/$file" || die "qemu/bench/insn-profile.py failed on $file"
		info "$title: $(sed -n 's/^Total added: //p' "$out/$file")"
	}
	for p in ${paths//,/ }; do
		stage "profile: $p, capture off and on${koff:+, the off kernel}${kbefore:+, lossless mode on, capture on in the before kernel}; $profile_calls and $profile_base calls"
		for n in "$profile_base" "$profile_calls"; do
			[ -z "$koff" ] || profile_boot kernel-off off "$p" "$n" "$koff"
			profile_boot off off "$p" "$n" "$kbench"
			profile_boot capture capture "$p" "$n" "$kbench"
			if [ -n "$kbefore" ]; then
				profile_boot before-capture capture "$p" "$n" "$kbefore"
				profile_boot lossless lossless "$p" "$n" "$kbench"
			fi
		done
		compare "$p" "profile-$p.md" "$p" "capture off,capture on" off System.map capture
		[ -z "$koff" ] || compare "$p" "profile-$p-off.md" "$p, capture off against the off kernel" \
			"off kernel,capture off" kernel-off System-off.map off
		if [ -n "$kbefore" ]; then
			compare "$p" "profile-$p-before.md" "$p, capture on: the before kernel against the bench kernel" \
				"before,bench" before-capture System-before.map capture
			compare "$p" "profile-$p-lossless.md" "$p, capture on: lossless mode off against on" \
				"lossless off,lossless on" capture System.map lossless
		fi
	done
fi

if step drain-profile; then
	profiler=$(dirname "$plugin")/libinsn-profile.so
	[ -f "$profiler" ] || die "no $profiler (run without --skip-build)"
	cp "$(dirname "$kbench")/../../../System.map" "$out/System.map" || die "no System.map beside $kbench"
	drain_calls=$((profile_calls / 4)) drain_base=$((profile_base / 4))
	# Rings that hold every record of a boot (2 per call, a thread's calls
	# per CPU; a record is its header and words, ~120 bytes, and the attr
	# bytes the kernel copied: none on the EINVAL and E2BIG paths, the
	# attr's 136 on swevent, its 4096 on big), so that nothing is lost
	# and each boot counts every record's whole way, made, drained and
	# written.
	case "$loss_path" in
	einval | e2big) record_max=256 ;;
	swevent) record_max=512 ;;
	big) record_max=8192 ;;
	*) die "--loss-path $loss_path makes no perf_event_open call: the drain profile has nothing to drain" ;;
	esac
	drain_ring=$((8 << 20))
	while [ "$drain_ring" -lt $((drain_calls * 2 * record_max)) ]; do drain_ring=$((drain_ring * 2)); done
	# drain_boot CONSUMER N: one boot under the profile plugin, N calls
	# per thread. The full image (the reader, the contender): unpacking
	# it costs the same in both boots of a consumer.
	drain_boot() {
		boot_mem=$(((4 * drain_ring >> 20) + 2048))M initrd=$initrd boot "drain-$1-$2" "$kbench" 1800 \
			"antinomie.ring_size=$drain_ring antinomie.max_ring_memory=$((2 * 4 * (drain_ring + 8192))) bench.kind=drain bench.consumer=$1 bench.path=$loss_path bench.calls=$2 bench.ring=$drain_ring" \
			"${counted[@]}" -plugin "$profiler" -d plugin -D "$out/drain-$1-$2.prof"
		sed -n 's/^bench: drain reader_base=0x\([0-9a-f]*\).*/\1/p' "$out/drain-$1-$2.log" >"$out/drain-$1-$2.base"
		case "$1" in
		reader-*) [ -s "$out/drain-$1-$2.base" ] || die "boot drain-$1-$2 did not say where it loaded the reader" ;;
		esac
	}
	# base_of CONSUMER N: where the boot loaded the reader, or -.
	base_of() {
		local b
		b=$(cat "$out/drain-$1-$2.base")
		echo "${b:--}"
	}
	cp "$initrd.root/bin/reader" "$out/reader" || die "no reader in the image's root ($initrd.root)"
	consumers=${loss_consumers:-reader-count,reader-text,reader-json,bpf-tp,bpf-raw}
	# Each consumer against the same calls without it: the reader's
	# against capture's records left in the rings, the contender's
	# against its records left in its buffer.
	baselines=() pairs=()
	for c in ${consumers//,/ }; do
		case "$c" in reader-*) b=kept ;; *) b=$c-kept ;; esac
		[[ " ${baselines[*]} " == *" $b "* ]] || baselines+=("$b")
		pairs+=("$b $c")
	done
	stage "drain profile: $loss_path, 4 threads unpaced, ${baselines[*]} ${consumers//,/ }; $profile_calls and $profile_base calls"
	for c in "${baselines[@]}" ${consumers//,/ }; do
		for n in "$drain_base" "$drain_calls"; do
			drain_boot "$c" "$n"
		done
	done
	for pair in "${pairs[@]}"; do
		read -r b c <<<"$pair"
		python3 "$ANTINOMIE_ROOT/qemu/bench/insn-profile.py" --map "$out/System.map" --labels "$b,$c" \
			--calls $((4 * drain_calls)) --base-calls $((4 * drain_base)) --title "$loss_path, 4 threads: $c over $b" \
			--program "$out/reader" --top 40 \
			--program-bases="$(base_of "$b" "$drain_base"),$(base_of "$b" "$drain_calls"),$(base_of "$c" "$drain_base"),$(base_of "$c" "$drain_calls")" \
			"$out/drain-$b-$drain_base.prof" "$out/drain-$b-$drain_calls.prof" \
			"$out/drain-$c-$drain_base.prof" "$out/drain-$c-$drain_calls.prof" \
			>"$out/drain-profile-$c.md" || die "qemu/bench/insn-profile.py failed on $c"
		info "$c: $(sed -n 's/^Total added: //p' "$out/drain-profile-$c.md")"
	done
fi

if step loss && [ "$loss_calls" -gt 0 ]; then
	stage "loss test: 4 threads of $loss_path, per consumer (${loss_consumers:-reader-count,reader-text,reader-json,bpf-tp,bpf-raw if there}) recording, rings of $loss_sizes, then the paced bisection at the last"
	consumers_arg=
	[ -z "$loss_consumers" ] || consumers_arg=" bench.loss_consumers=$loss_consumers"
	loss_qemu=()
	[ $loss_counted -eq 1 ] && loss_qemu=("${counted[@]}")
	# 4 GiB: a trial's JSON lines and raw trace go to the guest's tmpfs
	# (~1.7 KB per call; 8-second trials at 60 000 calls/s fill 1 GiB).
	boot_mem=4G boot loss "$kbench" 3600 "bench.kind=loss bench.loss_calls=$loss_calls bench.loss_path=$loss_path bench.loss_secs=$loss_secs bench.loss_steps=$loss_steps bench.loss_sizes=$loss_sizes$consumers_arg" "${loss_qemu[@]}"
	grep 'bench: loss-paced' "$out/loss.log" | sed 's/^bench: //' | while read -r line; do info "$line"; done
fi

echo "load after: $(uptime)" >>"$out/run.txt"
if [[ ",$steps," =~ ,(time-bench|time-off|insn|loss), ]]; then
	stage "tables (also in $out/table.md)"
	python3 "$ANTINOMIE_ROOT/qemu/bench/bench-table.py" "$out" >"$out/table.md" ||
		die "qemu/bench/bench-table.py failed on $out"
	cat "$out/table.md"
fi
if step profile; then
	stage "profiles (also in $out/profile-*.md)"
	cat "$out"/profile-*.md
fi
if step drain-profile; then
	stage "drain profiles (also in $out/drain-profile-*.md)"
	cat "$out"/drain-profile-*.md
fi
