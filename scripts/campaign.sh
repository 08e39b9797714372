#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The randomized campaign on the debug kernel (KASAN, UBSAN, lockdep,
# KFENCE): boots qemu/scenarios/campaign, which runs `antinomie-workload
# campaign` (qemu/workloads/src/bin/antinomie-workload/campaign.rs)
# twice over the same seeded calls, capture off then on, and fails on a
# kernel splat, an accounting mismatch or any call whose result, user memory,
# userfaultfd faults or injected fault differ between the passes. On the
# debug variant the campaign must inject faults (one call in ten, through
# /proc/thread-self/fail-nth, into user copies and slab and page
# allocations, with the stack filter that keeps a call's injection points
# the same from run to run): a debug kernel without them fails the run
# rather than skip those draws.
#
# usage: scripts/campaign.sh [--calls N] [--seed S] [--burst B] [--timeout SECS]
#                            [--variant V | --kernel PATH] [--passes off,on,bpf,on+bpf]
#                            [--require-fault-injection]
#                            [--test-break outcome|accounting]
#                            [--bpf-variant tp|raw] [--log FILE]
#   --calls N    calls per pass (default 20000, the test command's size);
#                the full campaign: --calls 1000000 (docs/design.md, "Tiers")
#   --burst B    calls per thread between two device changes (default 1000)
#   --timeout    guest timeout (default: 600 + N/40 s)
#   --variant    kernel variant to boot (default: debug; build it first with
#                scripts/build-kernel.sh debug, and the image with
#                qemu/build-initramfs.sh)
#   --kernel     the bzImage to boot instead of a variant of this cache; a
#                kernel whose build's .config (three folders above a
#                bzImage in arch/x86/boot) has CONFIG_FAULT_INJECTION=y is
#                held to fault injection as the debug variant is
#   --require-fault-injection
#                fail unless the campaign injects faults of every kind (the
#                default for --variant debug)
#   --passes     the passes, compared with the first (default off,on); bpf:
#                capture off, the BPF contender attached (qemu/bpf-contender/:
#                a kernel with CONFIG_BPF_EVENTS, e.g. --variant bench, and an
#                image with antinomie-bpf: scripts/build-bpf-contender.sh DIR,
#                then qemu/build-initramfs.sh DIR); on+bpf: capture on in
#                every epoch and the contender attached, the fidelity of
#                both tracers' attrs call by call (needs both)
#   --bpf-variant the contender's placement in a pass bpf (default tp)
#   --test-break a check fails on purpose (to see its message); the run
#                must then fail
#   --log FILE   the console log (default $ANTINOMIE_CACHE/campaign-console.log)
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

calls=20000 seed=1 burst=1000 timeout_s='' variant=debug kernel='' passes=off,on brk='' bpf_variant=tp
require_fi=0
log=$ANTINOMIE_CACHE/campaign-console.log
while [ $# -gt 0 ]; do
	case "$1" in
	--calls) calls=$2; shift ;;
	--seed) seed=$2; shift ;;
	--burst) burst=$2; shift ;;
	--timeout) timeout_s=$2; shift ;;
	--variant) variant=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--passes) passes=$2; shift ;;
	--log) log=$2; shift ;;
	--bpf-variant) bpf_variant=$2; shift ;;
	--test-break) brk=$2; shift ;;
	--require-fault-injection) require_fi=1 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift
done
for n in "$calls" "$seed" "$burst"; do
	[[ $n =~ ^[0-9]+$ ]] || die "--calls, --seed and --burst take a number, not '$n'"
done
[ -n "$timeout_s" ] || timeout_s=$((600 + calls / 40))
pass_re='(off|on|bpf|on\+bpf)'
[[ $passes =~ ^$pass_re(,$pass_re)*$ ]] || die "--passes takes off/on/bpf/on+bpf, comma-separated, not '$passes'"
[[ $bpf_variant =~ ^(tp|raw)$ ]] || die "--bpf-variant takes tp or raw, not '$bpf_variant'"
append="campaign.seed=$seed campaign.calls=$calls campaign.burst=$burst campaign.passes=$passes campaign.bpf_variant=$bpf_variant"
[ -z "$brk" ] || append="$append campaign.break=$brk"
boot=(--variant "$variant")
if [ -n "$kernel" ]; then
	[ -f "$kernel" ] || die "--kernel $kernel: no such file"
	boot=(--kernel "$kernel")
	config=$(dirname "$kernel")/../../../.config
	! grep -qx 'CONFIG_FAULT_INJECTION=y' "$config" 2>/dev/null || require_fi=1
elif [ "$variant" = debug ]; then
	require_fi=1
fi
# The debug kernel has fault injection: a campaign there must use it. Its
# KASAN records each allocation's stack in the stack depot, which refills
# its pool with page allocations when it runs low, at moments no call
# controls: those would be injection points some runs of a call take and
# others not, so the stack depot is off for these runs (KASAN's reports
# then lack the allocation and free stacks).
[ $require_fi -eq 0 ] || append="$append campaign.require_fault_injection=1 stack_depot_disable=on"
rc=0
qemu/run.sh --quiet "${boot[@]}" --scenario campaign --no-kunit --timeout "$timeout_s" \
	--append "$append" --log "$log" || rc=$?
# The campaign's own lines, whatever the verdict.
sed -e 's/\r$//' "$log" | grep -E '^campaign: ' || true
exit $rc
