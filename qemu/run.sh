#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot the test guest under QEMU (x86-64, -smp 4, serial console) and judge
# the run: scenario exit status (via isa-debug-exit), kernel splats, KUnit.
#
# usage: qemu/run.sh [options]
#   --variant NAME       boot the last build of kernel variant NAME (default:
#                        normal; see scripts/build-kernel.sh)
#   --kernel BZIMAGE     boot this kernel instead
#   --initrd CPIO        default: the last qemu/build-initramfs.sh image
#   --scenario NAME      run /scenarios/NAME in the guest (default: smoke)
#   --interactive        a shell on the serial console instead (Ctrl-a x quits)
#   --timeout SECS       kill a guest that has not finished (default: 300)
#   --append ARGS        extra kernel command-line arguments
#   --accel auto|kvm|tcg default: auto (KVM only if it really runs a guest)
#   --log FILE           console log (default: $ANTINOMIE_CACHE/console.log)
#   --quiet              do not echo the console while it runs
#   --console all|scenario  what to echo: everything (default), or only the
#                        scenario's own output (no kernel messages; the log
#                        keeps them all and the run is judged on the log)
#   --mem SIZE           guest memory (default: 1G)
#   --qemu-arg ARG       one more QEMU argument (repeat for more), e.g. a TCG
#                        plugin: --qemu-arg -plugin --qemu-arg PATH,inline=on
#   --no-kunit           boot with kunit.enable=0 and do not judge KUnit
#                        (benchmarks: their boots should not run the suites)
# Exits 0 only if the scenario passed, KUnit passed, and the console holds
# no kernel splat; otherwise prints one line with the reason, then the tail
# of the console.
. "$(dirname "$0")/../scripts/lib.sh"

kernel=$ANTINOMIE_CACHE/kernels/normal/arch/x86/boot/bzImage
initrd=$ANTINOMIE_CACHE/initramfs/initramfs.cpio
scenario=smoke interactive=0 timeout_s=300 append="" accel=auto quiet=0 kunit=1
console=all mem=1G extra_qemu=()
log=$ANTINOMIE_CACHE/console.log
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) kernel=$ANTINOMIE_CACHE/kernels/$2/arch/x86/boot/bzImage; shift ;;
	--kernel) kernel=$2; shift ;;
	--initrd) initrd=$2; shift ;;
	--scenario) scenario=$2; shift ;;
	--interactive) interactive=1 scenario=shell ;;
	--timeout) timeout_s=$2; shift ;;
	--append) append=$2; shift ;;
	--accel) accel=$2; shift ;;
	--log) log=$2; shift ;;
	--quiet) quiet=1 ;;
	--console) console=$2; shift ;;
	--mem) mem=$2; shift ;;
	--qemu-arg) extra_qemu+=("$2"); shift ;;
	--no-kunit) kunit=0 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift
done
case "$console" in all | scenario) ;; *) die "--console must be all or scenario" ;; esac
need_cmd qemu-system-x86_64 timeout
[ -f "$kernel" ] || die "no kernel at $kernel (run scripts/build-kernel.sh)"
[ -f "$initrd" ] || die "no initramfs at $initrd (run qemu/build-initramfs.sh)"
kconfig=$(dirname "$kernel")/../../../.config

# KVM is used only if it really runs guest code: /dev/kvm can exist and even
# open while vCPUs cannot run. The probe is a 64 KiB BIOS whose reset vector
# writes 0x2a to isa-debug-exit (QEMU then exits with 0x2a * 2 + 1 = 85).
kvm_works() {
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	local bios rc=0
	bios=$(mktemp)
	# 64 KiB of hlt (0xf4), and at the reset vector 0xfff0: mov al,0x2a;
	# out 0xf4,al; hlt; hlt.
	{
		head -c 65520 /dev/zero | tr '\0' '\364'
		printf '\260\052\346\364\364'
		head -c 11 /dev/zero | tr '\0' '\364'
	} >"$bios"
	# Same CPU model, count and memory as the real boot: KVM here has been
	# seen to run real-mode code yet abort on -cpu host's MSRs.
	(timeout 10 qemu-system-x86_64 -accel kvm -cpu host -smp 4 -m 1G -M pc \
		-nodefaults -display none \
		-no-reboot -monitor none -serial none -bios "$bios" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x01
	# A second command keeps bash from exec'ing timeout, so the report of
	# a QEMU killed by a signal goes to this subshell's silenced stderr.
	exit $?) >/dev/null 2>&1 || rc=$?
	rm -f "$bios"
	[ $rc -eq 85 ]
}
# A vCPU that runs real-mode code can still hang a Linux boot (seen here:
# the BIOS probe passed, the kernel never reached userspace). So KVM must
# also boot this kernel to userspace, where guest-exit reports through
# isa-debug-exit; the verdict holds until the host reboots.
kvm_boots_linux() {
	local boot_id verdict
	boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	verdict=$ANTINOMIE_CACHE/kvm-verdict.$boot_id
	if [ -f "$verdict" ]; then
		[ "$(cat "$verdict")" = yes ]
		return
	fi
	local rc=0
	(timeout -k 5 30 qemu-system-x86_64 -accel kvm -cpu host -smp 4 -m 1G -nodefaults \
		-display none -no-reboot -monitor none -serial none \
		-kernel "$kernel" -initrd "$initrd" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-append "console=ttyS0 panic=-1 rdinit=/bin/guest-exit -- 41"
	exit $?) >/dev/null 2>&1 </dev/null || rc=$?
	mkdir -p "$ANTINOMIE_CACHE"
	# Whole or absent: another run.sh may be reading it.
	if [ $rc -eq 85 ]; then echo yes; else echo no; fi >"$verdict.$$"
	mv "$verdict.$$" "$verdict"
	[ $rc -eq 85 ]
}
case "$accel" in
auto)
	if kvm_works && kvm_boots_linux; then
		accel=kvm
	else
		accel=tcg
		info "KVM is not usable here (probe guests failed); using TCG"
	fi
	;;
kvm | tcg) ;;
*) die "--accel must be auto, kvm or tcg" ;;
esac
cpu=max
if [ "$accel" = kvm ]; then
	cpu=host
else
	# One host thread for all vCPUs: multi-threaded TCG in QEMU < 8.1
	# (Debian 12 has 7.2) can run stale code while the guest patches its
	# own text (jump labels: "Oops: int3" in __schedule, seen here in 2 of
	# 25 boots); fixed upstream by "accel/tcg: Always lock pages before
	# translation". With thread=single, 10 of 10 boots passed.
	accel=tcg,thread=single
fi

# shellcheck disable=SC2054 # QEMU's option values are comma-separated.
qemu=(qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 4 -m "$mem"
	-nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$initrd"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 "${extra_qemu[@]}")
# no_timer_check: under TCG on a busy host the boot-time check that the
# IO-APIC timer ticks can miss its window and panic ("IO-APIC + timer
# doesn't work"); virtual machines skip it.
cmdline="console=ttyS0 panic=-1 no_timer_check antinomie.scenario=$scenario $append"
[ $kunit -eq 1 ] || cmdline="$cmdline kunit.enable=0"

if [ $interactive -eq 1 ]; then
	stage "interactive guest ($accel, -smp 4); Ctrl-a x quits QEMU"
	exec "${qemu[@]}" -serial mon:stdio -append "$cmdline"
fi

mkdir -p "$(dirname "$log")"
log=$(cd "$(dirname "$log")" && pwd)/$(basename "$log")
# The run is judged on its log: one guest at a time writes it.
hold_lock "console-$(printf '%s' "$log" | sha256sum | cut -c1-12)" "the console log $log"
stage "booting scenario '$scenario' ($accel, -smp 4, timeout ${timeout_s}s)"
rc=0
t0=$(date +%s)
if [ $quiet -eq 1 ]; then
	timeout -k 5 "$timeout_s" "${qemu[@]}" -monitor none -serial stdio \
		-append "$cmdline" </dev/null >"$log" 2>&1 || rc=$?
elif [ "$console" = scenario ]; then
	# From init's first line on, without the kernel's timestamped lines.
	timeout -k 5 "$timeout_s" "${qemu[@]}" -monitor none -serial stdio \
		-append "$cmdline" </dev/null 2>&1 | tee "$log" |
		sed -u -e 's/\r$//' -e '/^\[ *[0-9]*\.[0-9]*\] /d' | sed -u -n '/^antinomie-init:/,$p' ||
		rc=${PIPESTATUS[0]}
else
	timeout -k 5 "$timeout_s" "${qemu[@]}" -monitor none -serial stdio \
		-append "$cmdline" </dev/null 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
fi
elapsed=$(($(date +%s) - t0))
# Kernel messages carry "[    1.234567] " stamps; judge the text after them.
clean=$(sed -e 's/\r$//' -e 's/^\[ *[0-9]*\.[0-9]*\] //' "$log")

fail() {
	# A test's own failure report may be far above the tail.
	local reports
	reports=$(grep -aE '^(not ok|# .*(FAIL|Expected))' <<<"$clean" | tail -n 20 || true)
	if [ -n "$reports" ]; then
		echo "---- the console's test failure lines ($log) ----" >&2
		echo "$reports" >&2
	fi
	echo "---- last 40 console lines ($log) ----" >&2
	tail -n 40 "$log" >&2
	echo "----" >&2
	die "$*"
}

case $rc in
124 | 137) fail "guest hung: no result after ${timeout_s}s (scenario '$scenario')" ;;
0)
	why=$(grep -m1 -E 'Kernel panic - not syncing' <<<"$clean" || true)
	[ -n "$why" ] && fail "guest panicked: $why"
	fail "guest stopped without reporting a result (rebooted or powered off)"
	;;
esac
if [ $((rc % 2)) -ne 1 ] || [ "$rc" -lt 3 ]; then
	fail "qemu failed with exit status $rc"
fi
guest_rc=$(((rc >> 1) - 1))

# Any kernel splat fails the run, whatever the scenario said.
splat=$(kernel_reports "$log" | sed -n "1s/^[0-9]*://p")
[ -n "$splat" ] && fail "kernel splat in the console: $splat"

# KUnit: parse the KTAP the kernel printed (printk lines, which carry a
# timestamp: a userspace test's TAP on the console is not KUnit's).
kmsg=$(sed -n -e 's/\r$//' -e 's/^\[ *[0-9]*\.[0-9]*\] //p' "$log")
ktap_suites=$(grep -E '^(not )?ok [0-9]+ [^ #]+' <<<"$kmsg" || true)
kunit_failed=$(grep -E '^not ok ' <<<"$ktap_suites" | awk '{print $4}' || true)
[ -n "$kunit_failed" ] && fail "KUnit suite(s) failed: $(echo "$kunit_failed" | tr -s ' \n' ' ')"
missing=()
while [ $kunit -eq 1 ] && read -r suite sym; do
	case "$suite" in '' | \#*) continue ;; esac
	if [ -n "${sym:-}" ] && ! grep -qx "$sym=y" "$kconfig" 2>/dev/null; then
		continue
	fi
	grep -qE "^ok [0-9]+ $suite( |$)" <<<"$ktap_suites" || missing+=("$suite")
done <"$ANTINOMIE_ROOT/qemu/kunit-suites"
[ ${#missing[@]} -eq 0 ] || fail "KUnit suite(s) missing from the console: ${missing[*]}"
nsuites=$(grep -c . <<<"$ktap_suites" || true)
ntests=$(grep -cE '^ +ok [0-9]+ ' <<<"$kmsg" || true)

grep -q "ANTINOMIE-SCENARIO-END $scenario rc=$guest_rc" <<<"$clean" ||
	fail "guest exited with status $guest_rc but never printed the scenario's end marker"
[ "$guest_rc" -eq 0 ] || fail "scenario '$scenario' failed with status $guest_rc"
stage "scenario '$scenario' passed in ${elapsed}s; KUnit: $nsuites suite(s), $ntests test(s) ok; no kernel splat"
