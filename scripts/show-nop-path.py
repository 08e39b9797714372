#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The jump-label sites of the capture's static keys in VMLINUX, each a
NOP (scripts/show-nop-path.sh, which says why, runs it).

usage: scripts/show-nop-path.py VMLINUX
"""
import re, struct, subprocess, sys

vmlinux = sys.argv[1]
KEYS = ("antinomie_capture_key", "antinomie_rings_key")
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
for key in KEYS:
    if key not in syms:
        sys.exit(f"error: show-nop-path: {key} is not in {vmlinux} (CONFIG_ANTINOMIE off?)")
base = syms.get("__start___jump_table", 0)
length = syms.get("__stop___jump_table", 0) - base
if length <= 0:
    sys.exit("error: show-nop-path: the jump table is empty: CONFIG_JUMP_LABEL is off, "
             "the static key is a load and a branch, not a NOP")
table = read(base, length)
def sites_of(key_addr):
    sites = []
    for i in range(0, length, 16):
        code, target, key = struct.unpack_from("<iiq", table, i)
        addr = base + i
        if (addr + 8 + key) & ~3 == key_addr:
            sites.append((addr + code, addr + 4 + target))
    return sites

def func_of(addr):
    for start, size, name in funcs:
        if start <= addr < start + size:
            return name, addr - start
    return "?", 0

for key in KEYS:
    sites = sites_of(syms[key])
    print(f"  {key}:")
    in_syscall = 0
    for code, target in sites:
        name, off = func_of(code)
        insn = read(code, 5)
        kind = next((k for b, k in NOPS.items() if insn.startswith(b)), None)
        print(f"    site {name}+{off:#x}: {kind or 'NOT A NOP: ' + insn.hex()}; "
              f"jumps to {func_of(target)[0]}+{func_of(target)[1]:#x} while the key is on")
        # Decode from the function's start so instructions are not cut in two;
        # print the few before the site.
        dis = run("objdump", "-d", "--no-show-raw-insn", f"--start-address={code - off:#x}",
                  f"--stop-address={code + 12:#x}", vmlinux)
        lines = [l.strip() for l in dis.splitlines() if re.match(r"\s*ffffffff[0-9a-f]+:", l)]
        for l in lines[-6:]:
            print("      " + l + ("   <-- capture hook" if l.startswith(f"{code:x}:") else ""))
        if kind is None:
            sys.exit(f"error: show-nop-path: the site of {key} at {name}+{off:#x} is not a NOP")
        if "perf_event_open" in name:
            in_syscall += 1
    if not in_syscall:
        sys.exit(f"error: show-nop-path: no jump-label site of {key} inside perf_event_open()")
    print(f"    {len(sites)} site(s), {in_syscall} in perf_event_open(): NOPs while the key is off")
