// SPDX-License-Identifier: GPL-2.0-only
//! `reader --generate KIND`, hidden from `--help`: the man page and the
//! shell completion scripts are made from the clap definition `--help`
//! prints, and name every subcommand and long option it lists; the man
//! page gives each option the help text `--help` does.

use std::collections::HashSet;
use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::help::help;

/// `reader ARGS...`, which must exit 2 (bad usage), with its stderr.
fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// `reader --generate KIND`'s stdout, which must succeed.
fn generate(kind: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["--generate", kind])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "--generate {kind}: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `reader --help` lists, each with its description,
/// clap's `help` aside (it is `--help` by another name).
fn subcommands() -> Vec<(String, String)> {
    help(&[])
        .lines()
        .skip_while(|l| *l != "Subcommands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            let (name, about) = l.trim_start().split_once(' ')?;
            Some((name.to_owned(), about.trim().to_owned()))
        })
        .filter(|(name, _)| name != "help")
        .collect()
}

/// The long options `reader --help` and each subcommand's `--help` list
/// (`--format`, without its value), each with its help text; a global
/// option, which every command lists, once.
fn long_options() -> Vec<(String, String)> {
    let mut listed = Vec::new();
    let commands = subcommands();
    let args = std::iter::once(vec![]).chain(commands.iter().map(|(c, _)| vec![c.as_str()]));
    for args in args {
        let text = help(&args);
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            // An option's first line (`  -o, --output <FILE>`,
            // `      --tid <TID>`); its help is the next.
            if !(line.starts_with("  -") || line.starts_with("      --")) {
                continue;
            }
            let Some(long) = line.split_whitespace().find(|w| w.starts_with("--")) else {
                continue;
            };
            let long = long.trim_end_matches(',').trim_end_matches("...");
            let help = lines.next().unwrap_or_default().trim();
            listed.push((long.to_owned(), help.to_owned()));
        }
    }
    listed.sort();
    listed.dedup();
    assert!(listed.len() > 30, "too few options parsed: {listed:?}");
    listed
}

/// The words of a script: runs of letters, digits, `-` and `_`.
fn words(script: &str) -> HashSet<&str> {
    script
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .collect()
}

/// What roff source says as text: escapes undone (those roff's writer
/// makes: `\-`, `\\`, `\&`, `\*(Aq`) and font changes (`\fB`) dropped.
fn roff_text(source: &str) -> String {
    let mut text = String::new();
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('f') => {
                chars.next();
            }
            Some('*') => {
                let name: String = chars.by_ref().skip(1).take(2).collect();
                assert_eq!(name, "Aq", "an unknown roff string in {source}");
                text.push('\'');
            }
            Some('&') => {}
            Some('e') => text.push('\\'),
            Some(c) => text.push(c),
            None => panic!("a lone backslash ends {source}"),
        }
    }
    text
}

/// Each kind is made, with the line its reader acts on.
#[test]
fn every_kind_is_generated() {
    for (kind, line) in [
        ("man", ".TH READER 1 "),
        ("complete-bash", "complete -F _reader "),
        ("complete-zsh", "#compdef reader"),
        ("complete-fish", "complete -c reader "),
    ] {
        let text = generate(kind);
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(line)),
            "--generate {kind}: no `{line}` line:\n{text}"
        );
    }
}

/// `--generate` is not in `--help`, takes one of its kinds, and goes
/// with no other option or subcommand.
#[test]
fn generate_is_hidden_and_alone() {
    assert!(!help(&[]).contains("--generate"));
    assert!(!generate("man").contains(r"\-\-generate"));
    let e = refused(&["--generate", "roff"]);
    assert!(e.contains("complete-bash"), "{e}");
    refused(&["--generate", "man", "--follow"]);
    refused(&["--follow", "--generate", "complete-bash"]);
    refused(&["--generate", "man", "fields"]);
    refused(&["fields", "--generate", "complete-bash"]);
}

/// The man page has a section for every subcommand `reader --help`
/// lists, with its description, and gives every long option that
/// `--help` lists the help text `--help` gives it (its first sentence, at
/// least: a subcommand's `--filter` is not the live reader's).
#[test]
fn the_man_page_is_the_help() {
    let page = generate("man");
    let sections: Vec<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".SS "))
        .map(|name| roff_text(name.trim_matches('"')))
        .collect();
    let text = roff_text(&page);
    for (name, about) in subcommands() {
        assert!(
            sections.contains(&format!("reader {name}")),
            "reader.1: no `reader {name}` section in {sections:?}"
        );
        assert!(text.contains(&about), "reader.1: no `{about}`");
    }

    // An option's entry: `.TP`, a line of its names and value, a line of
    // its help.
    let entries: Vec<(String, String)> = page
        .split("\n.TP\n")
        .skip(1)
        .map(|entry| {
            let mut lines = entry.lines().map(roff_text);
            (lines.next().unwrap(), lines.next().unwrap_or_default())
        })
        .collect();
    for (long, help) in long_options() {
        let sentence = help.split(". ").next().unwrap();
        assert!(
            entries.iter().any(|(names, text)| {
                names.split([' ', ',']).any(|w| w == long) && text.starts_with(sentence)
            }),
            "reader.1: no `{long}` whose text starts `{sentence}`"
        );
    }
}

/// The man page's EXIT STATUS section is the table `--help` ends with.
#[test]
fn the_man_page_has_the_exit_statuses() {
    let page = roff_text(&generate("man"));
    let section = page
        .split("\n.SH \"EXIT STATUS\"\n")
        .nth(1)
        .expect("reader.1 has no EXIT STATUS section");
    let help = help(&[]);
    let table = help
        .split("Exit status:\n")
        .nth(1)
        .expect("--help has no exit-status table");
    for row in table.lines() {
        let row = row.strip_prefix("  ").unwrap_or(row);
        assert!(
            section.lines().any(|l| l == row),
            "reader.1's EXIT STATUS has no line `{row}`"
        );
    }
}

/// Every completion script names every subcommand and long option
/// `--help` lists (fish as `-l NAME`).
#[test]
fn completions_name_every_subcommand_and_long_option() {
    let commands = subcommands();
    let options = long_options();
    for kind in ["complete-bash", "complete-zsh", "complete-fish"] {
        let script = generate(kind);
        let words = words(&script);
        for (name, _) in &commands {
            assert!(words.contains(name.as_str()), "{kind}: no `{name}`");
        }
        for (long, _) in &options {
            let named = if kind == "complete-fish" {
                script.contains(&format!(" -l {} ", &long[2..]))
            } else {
                words.contains(long.as_str())
            };
            assert!(named, "{kind}: no `{long}`");
        }
    }
}

/// bash parses its script.
#[test]
fn bash_accepts_its_completion_script() {
    let script = generate("complete-bash");
    let mut bash = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    bash.stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = bash.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
