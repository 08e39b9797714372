// SPDX-License-Identifier: GPL-2.0-only
//! The `reader` binary's `--help`: the CLI reference page
//! (docs/reader-cli.md) is every command's `--help` as the binary prints
//! it, and the exit-status table in reader/README.md is the one `--help`
//! prints. Both are generated, compared here, and rewritten by
//! `ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader-cli` (review
//! the diff).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use crate::support::updating;

/// Every command, as `reader --help` lists them (clap's own `help` aside).
const COMMANDS: [&str; 5] = ["show", "fields", "diff", "describe", "dump-rings"];

/// The heading of the exit-status table, in `--help` and in the README.
const EXIT_STATUS: &str = "Exit status:";

/// `reader ARGS... --help`'s stdout, which must succeed, without the
/// spaces clap leaves at the end of the blank line before a default.
pub(crate) fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help: {}", out.status);
    let mut text = String::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
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

/// The reference page: a heading and a fenced block per command.
fn reference_page() -> String {
    let mut page = String::from(
        "# `reader`: command-line reference\n\
         \n\
         Every command's `reader ... --help`, as the binary prints it (spaces at\n\
         the ends of lines trimmed). Generated:\n\
         `ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader-cli` rewrites\n\
         this page, and the test `help::reference_page_is_current` fails when it\n\
         differs from the `--help` of the `reader` built from the same tree. The\n\
         manual is reader/README.md; its \"Exit status\" table is the one\n\
         below.\n",
    );
    for args in std::iter::once(None).chain(COMMANDS.map(Some)) {
        let args: Vec<&str> = args.into_iter().collect();
        let name = std::iter::once("reader")
            .chain(args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        write!(page, "\n## `{name}`\n\n```text\n{}```\n", help(&args)).unwrap();
    }
    page
}

#[test]
fn reference_page_is_current() {
    check_or_write("docs/reader-cli.md", &reference_page());
}

/// The page covers every command: `reader --help` lists no other.
#[test]
fn every_command_is_documented() {
    let text = help(&[]);
    let listed: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Subcommands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert_eq!(listed, COMMANDS);
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
    for command in COMMANDS {
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

/// README.md's sample of what the demo prints is made of lines of the
/// guest's golden output, the ones it names ("lines 1, 22 and 19 of
/// `reader/tests/data/guest/basic/expected.txt`"), as they are there.
#[test]
fn readme_sample_is_golden_output() {
    let golden_path = "reader/tests/data/guest/basic/expected.txt";
    let readme = std::fs::read_to_string(repo_file("README.md")).unwrap();
    let at = readme
        .find(golden_path)
        .unwrap_or_else(|| panic!("README.md's sample names no lines of {golden_path}"));
    let intro = &readme[readme[..at]
        .rfind("lines ")
        .expect("no `lines N, M` before the path")..at];
    let numbers: Vec<usize> = intro
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().unwrap())
        .collect();
    let open = at
        + readme[at..]
            .find("```\n")
            .expect("no sample block after the path")
        + "```\n".len();
    let close = open + readme[open..].find("```\n").unwrap();
    let sample: Vec<&str> = readme[open..close].lines().collect();
    let golden = std::fs::read_to_string(repo_file(golden_path)).unwrap();
    let golden: Vec<&str> = golden.lines().collect();
    assert_eq!(
        sample.len(),
        numbers.len(),
        "README.md names lines {numbers:?} for {} sample lines",
        sample.len()
    );
    for (line, n) in sample.iter().zip(&numbers) {
        assert_eq!(
            Some(line),
            golden.get(n - 1),
            "README.md's sample against line {n} of {golden_path}"
        );
    }
}
