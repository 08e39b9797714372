// SPDX-License-Identifier: GPL-2.0-only
//! "Did you mean …?": the closest candidate by edit distance.
//!
//! Hand-written rather than a crate: the optimal string alignment distance
//! (Levenshtein plus adjacent transpositions, so `sampel` is one edit from
//! `sample`) is twenty lines, and the candidates are a few hundred short
//! names, only ever scored when a filter is rejected.

/// Edits (insert, delete, substitute, swap two adjacent characters) from
/// `a` to `b`, comparing ASCII case-insensitively.
#[must_use]
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    // Three rows of the dynamic-programming table: i-2, i-1, i.
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `wanted`, if it is close enough to be a
/// plausible typo: at most a third of the longer name's length (and at
/// least 1 edit allowed, at most 4). Ties go to the first candidate.
pub fn closest<'a, I>(wanted: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(wanted, c);
        let limit = (wanted.len().max(c.len()) / 3).clamp(1, 4);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("sampel_type", "sample_type"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("EINVAL", "einval"), 0);
        assert_eq!(distance("ca", "abc"), 3);
    }

    #[test]
    fn closest_is_plausible() {
        let c = ["syscall.errno", "syscall.success", "ret"];
        assert_eq!(closest("syscall.errnoo", c), Some("syscall.errno"));
        assert_eq!(closest("rte", c), Some("ret"));
        assert_eq!(closest("banana", c), None);
    }
}
