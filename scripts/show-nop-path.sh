#!/usr/bin/env bash
# Show, from the built kernel itself, that perf_event_open() with capture off
# pays one NOP: the static key antinomie_capture_key must have a jump-label
# site inside the syscall, and the instruction there must be a NOP (the
# kernel patches it into a jump only while capture is on).
#
# usage: scripts/show-nop-path.sh [VMLINUX]   (default: the 'normal' build)
# Reads the jump table (__start___jump_table..__stop___jump_table; struct
# jump_entry: s32 code, s32 target, long key, each relative to its own
# address), prints every site of the key
# with the disassembly around it, and fails if one is missing or not a NOP.
. "$(dirname "$0")/lib.sh"

vmlinux=${1:-$ANTINOMIE_CACHE/kernels/normal/vmlinux}
[ -f "$vmlinux" ] || die "no vmlinux at $vmlinux (run scripts/build-kernel.sh)"
need_cmd readelf nm objdump python3
stage "jump-label sites of antinomie_capture_key in $(basename "$(dirname "$vmlinux")")"
python3 - "$vmlinux" <<'PY' || exit 1
import re, struct, subprocess, sys

vmlinux = sys.argv[1]
KEY = "antinomie_capture_key"
NOPS = {bytes.fromhex("0f1f440000"): "nop5", bytes.fromhex("6690"): "nop2"}

def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

sections = {}
for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s+([0-9a-f]+)\s+([0-9a-f]+)",
                     run("readelf", "-SW", vmlinux)):
    sections[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16))

def read(addr, size):
    for name, (base, off, length) in sections.items():
        if base and base <= addr < base + length and name != ".bss":
            with open(vmlinux, "rb") as f:
                f.seek(off + addr - base)
                return f.read(size)
    raise SystemExit(f"error: address {addr:#x} is in no section of {vmlinux}")

funcs, syms = [], {}
for line in run("nm", "-S", "--defined-only", vmlinux).splitlines():
    parts = line.split()
    if len(parts) == 4 and parts[2] in "tT":
        funcs.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms[parts[-1]] = int(parts[0], 16)
key_addr = syms.get(KEY)
if key_addr is None:
    sys.exit(f"error: show-nop-path: {KEY} is not in {vmlinux} (CONFIG_ANTINOMIE off?)")
base = syms.get("__start___jump_table", 0)
length = syms.get("__stop___jump_table", 0) - base
if length <= 0:
    sys.exit("error: show-nop-path: the jump table is empty: CONFIG_JUMP_LABEL is off, "
             "the static key is a load and a branch, not a NOP")
table = read(base, length)
sites = []
for i in range(0, length, 16):
    code, target, key = struct.unpack_from("<iiq", table, i)
    addr = base + i
    if (addr + 8 + key) & ~3 == key_addr:
        sites.append((addr + code, addr + 4 + target))

def func_of(addr):
    for start, size, name in funcs:
        if start <= addr < start + size:
            return name, addr - start
    return "?", 0

in_syscall = 0
for code, target in sites:
    name, off = func_of(code)
    insn = read(code, 5)
    kind = next((k for b, k in NOPS.items() if insn.startswith(b)), None)
    print(f"    site {name}+{off:#x}: {kind or 'NOT A NOP: ' + insn.hex()}; "
          f"jumps to {func_of(target)[0]}+{func_of(target)[1]:#x} while capture is on")
    # Decode from the function's start so instructions are not cut in two.
    dis = run("objdump", "-d", "--no-show-raw-insn", f"--start-address={code - off:#x}",
              f"--stop-address={code + 12:#x}", vmlinux)
    for l in dis.splitlines():
        if re.match(r"\s*ffffffff[0-9a-f]+:", l):
            print("      " + l.strip() + ("   <-- capture hook" if l.strip().startswith(f"{code:x}:") else ""))
    if kind is None:
        sys.exit(f"error: show-nop-path: the jump-label site at {name}+{off:#x} is not a NOP")
    if "perf_event_open" in name:
        in_syscall += 1
if not in_syscall:
    sys.exit(f"error: show-nop-path: no jump-label site of {KEY} inside perf_event_open()")
print(f"    {len(sites)} site(s), {in_syscall} in perf_event_open(): a NOP while capture is off")
PY
stage "perf_event_open() pays a NOP while capture is off"
