//! The `reader` binary's `--help`: the exit-status table in
//! reader/README.md is the one every `--help` prints. It is generated,
//! compared here, and rewritten by `ANTINOMIE_UPDATE_GOLDEN=1 cargo test
//! -p antinomie-reader-cli` (review the diff).

use std::path::PathBuf;
use std::process::Command;

use crate::support::updating;

/// The heading of the exit-status table, in `--help` and in the README.
const EXIT_STATUS: &str = "Exit status:";

/// `reader ARGS... --help`'s stdout, which must succeed.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help: {}", out.status);
    String::from_utf8(out.stdout).unwrap()
}

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// Compares `path` with `text`, or rewrites it when updating.
fn check_or_write(path: &str, text: &str) {
    let file = repo_file(path);
    if updating() {
        std::fs::write(&file, text).unwrap();
    }
    let checked_in = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        checked_in == text,
        "{path} is stale: run `ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader-cli` and review the diff"
    );
}

/// Every command's `--help` ends with the same exit-status table, and
/// reader/README.md's "Exit status" section holds it in its first fenced
/// block.
#[test]
fn one_exit_status_table() {
    let table = |text: &str| -> String {
        let at = text
            .find(EXIT_STATUS)
            .unwrap_or_else(|| panic!("no `{EXIT_STATUS}` in {text}"));
        text[at..].to_owned()
    };
    let top = table(&help(&[]));
    for command in ["show", "fields", "diff", "describe", "dump-rings"] {
        assert_eq!(table(&help(&[command])), top, "reader {command} --help");
    }

    let path = "reader/README.md";
    let readme = std::fs::read_to_string(repo_file(path)).unwrap();
    let section = readme
        .find("\n## Exit status\n")
        .expect("reader/README.md has no `## Exit status` section");
    let open = section + readme[section..].find("```text\n").unwrap() + "```text\n".len();
    let close = open + readme[open..].find("```\n").unwrap();
    let mut updated = readme.clone();
    updated.replace_range(open..close, &top);
    check_or_write(path, &updated);
}
