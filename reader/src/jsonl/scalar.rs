// SPDX-License-Identifier: GPL-2.0-only
//! The scalar pieces of a JSON line: strings escaped as `serde_json`
//! escapes them, unsigned and signed numbers, booleans and hex, each
//! appended straight to the line buffer.

/// Whether any byte of `bytes` needs escaping in a JSON string: `"`, `\`
/// or a control character (below 0x20). Eight bytes at a time, by the
/// classic word tests (Bit Twiddling Hacks, "hasless" and "haszero"),
/// which are exact for "some byte is": a borrow that crosses into a
/// byte only starts at a byte that is itself below the bound. A byte-by-
/// byte test cost ~15 % of the full JSON line, which escapes every name
/// rendering it writes.
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // Some byte of `x` is below `n` (n <= 0x80).
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGHS != 0;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(w);
        let x = u64::from_le_bytes(eight);
        // A byte equal to `c` is a zero byte of `x ^ (ONES * c)`.
        if below(x, 0x20)
            || below(x ^ (ONES * u64::from(b'"')), 1)
            || below(x ^ (ONES * u64::from(b'\\')), 1)
        {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends `s` as a JSON string: `"`, `\` and control characters escaped
/// as `serde_json` does (short forms where JSON has them, else `\u00XX`).
pub(super) fn string(buf: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    let bytes = s.as_bytes();
    // Most strings (names, numbers in hex) need no escape: one copy.
    if !needs_escape(bytes) {
        buf.extend_from_slice(bytes);
        buf.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ],
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// "00" to "99": two digits per division.
pub(super) const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// 10^i for i in 0..20: the powers [`decimal_len`] compares with.
pub(super) const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// How many decimal digits `v` has (1 for 0), without a division: the
/// bit length times log10(2) (as 1233 / 4096) gives the digit count or
/// one less, and one comparison with a power of ten tells which.
pub(super) fn decimal_len(v: u64) -> usize {
    // `| 1`: 0 has one digit; it changes no other answer, since the
    // powers compared with (10 and up) are even.
    let v = v | 1;
    let bits = 64 - v.leading_zeros();
    // At most 64 * 1233 >> 12 = 19: an index of POW10.
    let t = ((bits * 1233) >> 12) as usize;
    t + usize::from(v >= POW10[t])
}

/// Appends `v` in decimal, as `itoa` and `serde_json` print it. The
/// digits are written straight into `buf`'s spare room, two at a time
/// from a table, back to front: no copy of the digits, no `memcpy` call,
/// no bounds check per pair (a profile of the compact line put ~25 % of
/// its instructions in the safe version of this, ~120 per number).
// Every cast is of a number below 10 000, said where it is made.
#[allow(clippy::cast_possible_truncation)]
pub(super) fn u64(buf: &mut Vec<u8>, v: u64) {
    let len = decimal_len(v);
    buf.reserve(len);
    let at = buf.len();
    let pairs = DIGIT_PAIRS.as_ptr();
    // SAFETY: `reserve` made room for `len` bytes after `at`, and every
    // write below is to `out + i` with `i < len`: `end` starts at `len`
    // and drops by the digits written, which are exactly `len` in all
    // (`decimal_len`), so it never goes below 0. Every read of `pairs`
    // is of 2 bytes at an even index below 200. After the writes the
    // `len` bytes are initialised, so the length may cover them.
    unsafe {
        let out = buf.as_mut_ptr().add(at);
        let mut end = len;
        let mut rest = v;
        // Four digits per 64-bit division, then two from 32-bit
        // arithmetic.
        while rest >= 10_000 {
            // < 10 000.
            let four = (rest % 10_000) as u32;
            rest /= 10_000;
            let (high, low) = ((four / 100) as usize * 2, (four % 100) as usize * 2);
            std::ptr::copy_nonoverlapping(pairs.add(high), out.add(end - 4), 2);
            std::ptr::copy_nonoverlapping(pairs.add(low), out.add(end - 2), 2);
            end -= 4;
        }
        // < 10 000 from here.
        let mut rest = rest as u32;
        if rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            std::ptr::copy_nonoverlapping(pairs.add(pair), out.add(end - 2), 2);
            end -= 2;
        }
        if rest >= 10 {
            std::ptr::copy_nonoverlapping(pairs.add(rest as usize * 2), out.add(end - 2), 2);
        } else {
            // < 10.
            *out.add(end - 1) = b'0' + rest as u8;
        }
        buf.set_len(at + len);
    }
}

pub(super) fn i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    u64(buf, v.unsigned_abs());
}

pub(super) fn bool(buf: &mut Vec<u8>, v: bool) {
    // Two copies of constant length: one of a length chosen at run time
    // is a `memcpy` call.
    if v {
        buf.extend_from_slice(b"true");
    } else {
        buf.extend_from_slice(b"false");
    }
}

/// Appends `v` in hex as `{v:#x}` formats it.
pub(super) fn hex(buf: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 16];
    let mut n = 0;
    let mut rest = v;
    loop {
        digits[15 - n] = HEX[(rest & 0xf) as usize];
        n += 1;
        rest >>= 4;
        if rest == 0 {
            break;
        }
    }
    buf.extend_from_slice(b"0x");
    buf.extend_from_slice(&digits[16 - n..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut all = String::new();
        for c in (0u8..0x80)
            .map(char::from)
            .chain(['é', '€', '\u{2028}', '😀'])
        {
            all.push(c);
        }
        for s in [all.as_str(), "", "plain", "a\"b\\c\u{7f}"] {
            let mut buf = Vec::new();
            string(&mut buf, s);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
    }

    #[test]
    fn the_word_test_finds_what_the_byte_test_does() {
        let byte_test = |b: &[u8]| b.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        // Every byte value at every place of a 17-byte string (two words
        // and a rest), among bytes on either side of the bounds.
        for base in [b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff] {
            for at in 0..17 {
                for b in 0..=255u8 {
                    let mut s = vec![base; 17];
                    s[at] = b;
                    assert_eq!(needs_escape(&s), byte_test(&s), "{s:?}");
                }
            }
        }
        assert!(!needs_escape(b""));
    }

    #[test]
    fn hex_prints_as_format_does() {
        for v in [0u64, 1, 0xf, 0x10, 0xdead_beef, u64::MAX] {
            let mut buf = Vec::new();
            hex(&mut buf, v);
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{v:#x}"));
        }
    }

    #[test]
    fn random_numbers_of_every_length_print_as_format_does() {
        // splitmix64 over every bit length, so that every digit count
        // is hit many times.
        let mut state = 0x5eed_u64;
        let mut buf = Vec::new();
        for i in 0..200_000u32 {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let v = (z ^ (z >> 31)) >> (i % 64);
            buf.clear();
            u64(&mut buf, v);
            assert_eq!(buf, v.to_string().as_bytes());
        }
    }

    #[test]
    fn numbers_print_as_serde_json_does() {
        let mut powers: Vec<u64> = (0..20).map(|e| 10u64.pow(e)).collect();
        powers.extend(powers.clone().iter().map(|p| p - 1));
        powers.extend(powers.clone().iter().map(|p| p + 1));
        // Every bit length's ends too: where `decimal_len`'s estimate steps.
        powers.extend((0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1, (1u64 << b) + 1]));
        powers.push(u64::MAX - 1);
        for v in powers.into_iter().chain([0u64, 1, 9, 10, 12_345, u64::MAX]) {
            let mut buf = Vec::new();
            u64(&mut buf, v);
            assert_eq!(buf, serde_json::to_vec(&v).unwrap());
        }
        for v in [0i64, -1, i64::MIN, i64::MAX, -22, -100, 99, i64::MIN + 1] {
            let mut buf = Vec::new();
            i64(&mut buf, v);
            assert_eq!(buf, serde_json::to_vec(&v).unwrap());
        }
    }
}
