#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write the BPF contender's records as a capture trace file.

usage: scripts/bpf-to-trace.py RECORDS TRACE

RECORDS is the file `antinomie-bpf --out` wrote (qemu/bpf-contender/
contender.h); TRACE an `ANTI-TRC` trace file (reader/src/trace/mod.rs), so
that `reader show TRACE` prints the contender's view of the calls and
`reader diff CAPTURE_TRACE TRACE` compares it with capture's, call by
call. Each record becomes the ENTRY or EXIT capture would have written on
the same CPU, holding what the contender knows: the argument words, the
attr's size word and the bytes it read (status COMPLETE, NULL_PTR, FAULT
with the size word or the attr unreadable, INVALID_SIZE for a size the
kernel refuses before reading on, or TRUNCATED at 136 bytes), the return
value and the duration. What it cannot know stays unset: the tail's
verdict, the size the kernel wrote back, whether the kernel read the
same bytes. An EXIT takes the call id of the last ENTRY of its thread,
and that ENTRY's position in its ring; an EXIT without one is
dropped and counted on stderr, as is an ENTRY without an EXIT. The
contender's per-CPU counters at the end of the file become each ring's
final counters (its failed reservations as ring_full losses), so the
reader's summary accounts for every record; a file whose records do not
add up to them is refused.
"""

import struct
import sys

ATTR_MAX = 136
FILE_MAGIC = 0x31465042544E41
FILE_HEADER = struct.Struct("<QII")
HEADER = struct.Struct("<IIQIIII")  # size type time pid tid cpu flags
ENTRY_BODY = struct.Struct("<6QIIIi")  # args, declared, copied, status, read_error
EXIT_BODY = struct.Struct("<q")

ABI_VERSION = 4
TRACE_VERSION = 2
FRAME_RECORDS, FRAME_DONE, FRAME_END, FRAME_START = 1, 4, 5, 6
NR_PERF_EVENT_OPEN = 298
REC_ENTRY, REC_EXIT, REC_COUNTS = 1, 2, 3
COUNTS_BODY = struct.Struct("<QQ")  # produced, lost
KIND_PERF_EVENT_ATTR = 1
STATUS_COMPLETE, STATUS_NULL, STATUS_FAULT, STATUS_TRUNCATED, STATUS_INVALID_SIZE = 1, 2, 3, 4, 5
CAPTURE_F_SIZE_FAULT = 1 << 2
EXIT_F_ATTR_COPIED = 1 << 2
PERF_ATTR_SIZE_VER0, PAGE_SIZE = 64, 4096
BPF_F_SIZE_FAULT = 1 << 0
REC_HEADER_SIZE = 48
WINDOW_NS = 50_000_000


def pad8(n):
    return (n + 7) & ~7


def record_header(size, rtype, call_id, time_ns, pid, tid, cpu):
    return struct.pack("<IIIIQQIIII", size, rtype, REC_HEADER_SIZE, 0, call_id, time_ns, pid, tid, cpu,
                       NR_PERF_EVENT_OPEN)


def entry_record(call_id, h, body, attr):
    args, declared, copied, status, _ = body[:6], body[6], body[7], body[8], body[9]
    size_fault = status == STATUS_NULL or h["flags"] & BPF_F_SIZE_FAULT
    flags = CAPTURE_F_SIZE_FAULT if size_fault else 0
    # The size the kernel goes by: the size word, 0 taken as VER0; none
    # when the word could not be read.
    eff = 0 if size_fault else declared or PERF_ATTR_SIZE_VER0
    data = attr[:copied]
    if not size_fault and not PERF_ATTR_SIZE_VER0 <= eff <= PAGE_SIZE:
        # The kernel refuses such a size before reading further.
        status, data = STATUS_INVALID_SIZE, b""
    # The offset of the first unreadable byte: BPF reports only that a
    # read failed; the size word's is 4, the body's is unknown (0).
    fault_offset = 4 if status == STATUS_FAULT and size_fault else 0
    item_size = 40 + pad8(len(data))
    items = struct.pack("<10I", item_size, 40, 0, KIND_PERF_EVENT_ATTR, status, flags, eff, len(data),
                        fault_offset, 0)
    items += data + b"\0" * (pad8(len(data)) - len(data))
    # struct antinomie_entry: its start_ns is the contender's one time.
    entry = struct.pack("<II6QQ", 64, 1, *args, h["time"])
    size = REC_HEADER_SIZE + len(entry) + len(items)
    return record_header(size, REC_ENTRY, call_id, h["time"], h["pid"], h["tid"], h["cpu"]) + entry + items


def exit_record(call_id, h, ret, duration, entry_pos):
    # A call that succeeded got past perf_copy_attr(); of a failed one
    # the contender cannot tell.
    flags = EXIT_F_ATTR_COPIED if ret >= 0 else 0
    body = struct.pack("<IIqQIIQ", 40, flags, ret, duration, 0, 0, entry_pos)
    return record_header(REC_HEADER_SIZE + len(body), REC_EXIT, call_id, h["time"], h["pid"], h["tid"],
                         h["cpu"]) + body


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: scripts/bpf-to-trace.py RECORDS TRACE")
    data = open(sys.argv[1], "rb").read()
    magic, header_size, attr_max = FILE_HEADER.unpack_from(data, 0)
    if magic != FILE_MAGIC or header_size != HEADER.size or attr_max != ATTR_MAX:
        sys.exit(f"error: {sys.argv[1]} is not a BPF contender records file")
    pos = FILE_HEADER.size
    seq, pending, out, counts = {}, {}, [], {}
    # Where the next record goes in each CPU's ring, as written below.
    ring_pos = {}
    unpaired_exits = 0
    while pos < len(data):
        if len(data) - pos < HEADER.size:
            sys.exit(f"error: {sys.argv[1]}: truncated record at byte {pos}")
        size, rtype, time_ns, pid, tid, cpu, flags = HEADER.unpack_from(data, pos)
        if size < HEADER.size or pos + size > len(data):
            sys.exit(f"error: {sys.argv[1]}: bad record at byte {pos} (size {size})")
        h = {"time": time_ns, "pid": pid, "tid": tid, "cpu": cpu, "flags": flags}
        body = data[pos + HEADER.size: pos + size]
        if rtype == REC_ENTRY:
            fields = ENTRY_BODY.unpack_from(body, 0)
            attr = body[ENTRY_BODY.size: ENTRY_BODY.size + ATTR_MAX]
            seq[cpu] = seq.get(cpu, 0) + 1
            call_id = cpu << 48 | seq[cpu]
            rec = entry_record(call_id, h, fields, attr)
            pending[tid] = (call_id, time_ns, ring_pos.get(cpu, 0))
            out.append((cpu, rec))
            ring_pos[cpu] = ring_pos.get(cpu, 0) + len(rec)
        elif rtype == REC_EXIT:
            (ret,) = EXIT_BODY.unpack_from(body, 0)
            if tid not in pending:
                unpaired_exits += 1
            else:
                call_id, t0, entry_pos = pending.pop(tid)
                rec = exit_record(call_id, h, ret, time_ns - t0, entry_pos)
                out.append((cpu, rec))
                ring_pos[cpu] = ring_pos.get(cpu, 0) + len(rec)
        elif rtype == REC_COUNTS:
            counts[cpu] = COUNTS_BODY.unpack_from(body, 0)
        else:
            sys.exit(f"error: {sys.argv[1]}: unknown record type {rtype} at byte {pos}")
        pos += size
    if not counts:
        sys.exit(f"error: {sys.argv[1]} has no counters (antinomie-bpf did not finish writing it)")
    cpus = sorted({c for c, _ in out} | set(seq) | set(counts))
    header = b"ANTI-TRC" + struct.pack("<IIII", TRACE_VERSION, ABI_VERSION, 0, len(cpus)) + struct.pack("<Q", WINDOW_NS)
    header += b"".join(struct.pack("<I", c) for c in cpus) + struct.pack("<I", 0)
    header = header[:16] + struct.pack("<I", len(header)) + header[20:]
    produced = {c: 0 for c in cpus}
    nbytes = {c: 0 for c in cpus}
    # Records the contender wrote per CPU, the dropped unpaired exits too.
    written = {c: 0 for c in cpus}
    pos = FILE_HEADER.size
    while pos < len(data):
        size, rtype, _, _, _, cpu, _ = HEADER.unpack_from(data, pos)
        if rtype in (REC_ENTRY, REC_EXIT):
            written[cpu] += 1
        pos += size
    for c in cpus:
        p, lost = counts.get(c, (0, 0))
        if written[c] != p - lost:
            sys.exit(f"error: cpu {c}: {written[c]} records in the file, but the contender made {p} and lost {lost}")
    with open(sys.argv[2], "wb") as f:
        f.write(header)
        # Every ring is read from its start: no ENTRY went to an earlier reader.
        for c in cpus:
            f.write(struct.pack("<IIQQ", FRAME_START, c, 8, 0))
        # One frame per record, in the order the contender's ring buffer
        # delivered them, as a live drain would.
        for cpu, rec in out:
            f.write(struct.pack("<IIQ", FRAME_RECORDS, cpu, len(rec)) + rec)
            produced[cpu] += 1
            nbytes[cpu] += len(rec)
        for c in cpus:
            lost = counts.get(c, (0, 0))[1]
            done = [0, nbytes[c], nbytes[c], produced[c], lost] + [0] * 7 + [produced[c], 0, nbytes[c]]
            f.write(struct.pack("<IIQ", FRAME_DONE, c, 8 * len(done)) + struct.pack(f"<{len(done)}Q", *done))
        f.write(struct.pack("<IIQ", FRAME_END, 0, 0))
    print(f"bpf-to-trace: {sum(produced.values())} records, {len(pending)} entries without an exit, "
          f"{unpaired_exits} exits without an entry (dropped)", file=sys.stderr)


if __name__ == "__main__":
    main()
