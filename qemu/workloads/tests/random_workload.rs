// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload random` on the host kernel: the same seed makes the
//! same calls with the same results (the host's answers are deterministic
//! too, whatever they are), another seed other calls, and no attr can
//! start counting (so none can signal the process or fire a breakpoint).

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// Per (thread, seq): what must repeat with the seed (not fds, addresses,
/// tids or times; a pid argument that is the caller's own pid or tid
/// counts as "own", as `reader diff` compares it).
fn run(seed: u64) -> BTreeMap<(u64, u64), (Value, Value)> {
    let out = Command::new(env!("CARGO_BIN_EXE_antinomie-workload"))
        .args([
            "random",
            "--seed",
            &seed.to_string(),
            "--calls",
            "600",
            "--threads",
            "3",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let id = (v["thread"].as_u64().unwrap(), v["seq"].as_u64().unwrap());
            let a = &v["args"];
            // The pid word: the caller's own ids (positive) as "own".
            let own = [v["pid"].as_u64(), v["tid"].as_u64()].contains(&a[1].as_u64());
            let pid = if own {
                Value::from("own")
            } else {
                a[1].clone()
            };
            let input = serde_json::json!([
                v["case"],
                pid,
                a[2],
                a[4],
                a[5],
                v["attr"]["hex"],
                v["attr"]["readable"],
                a[3].as_i64().map(|g| g >= 0),
            ]);
            let class = if v["ret"].as_i64().unwrap() >= 0 {
                Value::Null
            } else {
                v["errno"].clone()
            };
            let outcome = serde_json::json!([class, v["required_size"], v["size_after"]]);
            (id, (input, outcome))
        })
        .collect()
}

#[test]
fn one_seed_one_sequence() {
    let (a, b) = (run(7), run(7));
    assert_eq!(a.len(), 600);
    assert_eq!(a.keys().map(|k| k.0).max(), Some(3));
    for (id, x) in &a {
        assert_eq!(Some(x), b.get(id), "thread {} seq {}", id.0, id.1);
    }
    let c = run(8);
    let same = a
        .iter()
        .filter(|(id, x)| c.get(id).map(|y| &y.0) == Some(&x.0))
        .count();
    // Only the leaders (call 0 of each thread) are the same.
    assert_eq!(same, 3, "seed 8 repeats seed 7's calls");
}

#[test]
fn attrs_stay_disabled() {
    for (id, (input, _)) in run(11) {
        let Some(hex) = input[5].as_str() else {
            continue;
        };
        if hex.len() < 96 {
            continue;
        }
        let flags = u64::from_str_radix(&hex[80..96], 16).unwrap().swap_bytes();
        assert_eq!(flags & 1, 1, "thread {} seq {}: not disabled", id.0, id.1);
        // freq (10), enable_on_exec (12).
        let forbidden = (1 << 10) | (1 << 12);
        assert_eq!(
            flags & forbidden,
            0,
            "thread {} seq {}: {flags:#x}",
            id.0,
            id.1
        );
    }
}
