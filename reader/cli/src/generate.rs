// SPDX-License-Identifier: GPL-2.0-only
//! `reader --generate KIND`: the man page and the shell completion
//! scripts, made from the command line's definition ([`args::command`])
//! by clap's own generators.
//!
//! As ripgrep 14 does, the binary prints them rather than a build script
//! writing them: the definition is this crate's code, which a build
//! script cannot use without building it twice, and a packager gets the
//! pages of the very binary it installs.

use std::io;

use anyhow::{Context, Result};
use clap::ArgAction;
use clap_complete::aot::{generate, Shell};
use clap_mangen::roff::{bold, roman, Inline, Roff};
use clap_mangen::Man;

use crate::args::{self, GenerateArg};
use crate::exit;

/// What `--generate KIND` prints.
pub(crate) fn generated(kind: GenerateArg) -> Result<String> {
    let mut cmd = args::command();
    let shell = match kind {
        GenerateArg::Man => return man_page(cmd).context("rendering the man page"),
        GenerateArg::Bash => Shell::Bash,
        GenerateArg::Zsh => Shell::Zsh,
        GenerateArg::Fish => Shell::Fish,
    };
    let mut script = Vec::new();
    let name = cmd.get_name().to_owned();
    generate(shell, &mut cmd, name, &mut script);
    String::from_utf8(script).context("the completion script is not UTF-8")
}

/// One page, reader.1: the live reader's options, then a section per
/// subcommand with its own options, then the exit statuses. `clap_mangen`
/// renders the description and option sections; the synopses are the
/// usage lines of `--help`, which show the `--` before COMMAND.
///
/// One page rather than `clap_mangen`'s reader-show.1 and the like: a
/// subcommand's page would repeat the global options for the one to
/// three of its own, and `man reader` is where one looks.
fn man_page(cmd: clap::Command) -> io::Result<String> {
    // clap's `help` subcommand is `--help` by another name.
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let man = Man::new(cmd.clone());

    let mut roff = Roff::new();
    // Written here: clap_mangen 0.2.32 writes an empty date as nothing,
    // which makes the source the date.
    let source = format!("reader {}", cmd.get_version().unwrap_or_default());
    roff.control("TH", ["READER", "1", "\"\"", &source]);
    let mut page = roff.render();
    page += &piece(|w| man.render_name_section(w))?;
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]);
    roff.text(synopsis(&mut cmd));
    page += &without_preamble(roff.render());
    page += &piece(|w| man.render_description_section(w))?;
    page += &piece(|w| man.render_options_section(w))?;

    let mut roff = Roff::new();
    roff.control("SH", ["SUBCOMMANDS"]);
    let global: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| match (a.get_short(), a.get_long()) {
            (Some(short), _) => format!("-{short}"),
            (None, Some(long)) => format!("--{long}"),
            (None, None) => a.get_id().to_string(),
        })
        .collect();
    roff.text([roman(format!(
        "The global options ({}) go before or after a subcommand; the other \
         options above are the live reader's and go with none.",
        global.join(", ")
    ))]);
    page += &without_preamble(roff.render());
    for sub in cmd.get_subcommands_mut() {
        page += &subcommand_section(sub)?;
    }

    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    // The table as --help prints it, under its own heading: laid out in
    // columns, so not filled.
    roff.control("nf", []);
    for line in exit::TABLE.lines().skip(1) {
        roff.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
    }
    roff.control("fi", []);
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman("perf_event_open(2), strace(1)")]);
    page += &without_preamble(roff.render());
    Ok(page)
}

/// A (built) command's usage line as `--help` prints it, its name in bold.
fn synopsis(cmd: &mut clap::Command) -> Vec<Inline> {
    let usage = cmd.render_usage().to_string();
    let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    match usage.strip_prefix(name) {
        Some(rest) => vec![bold(name), roman(rest)],
        None => vec![roman(usage)],
    }
}

/// A subcommand's part of the page: a subsection of its usage, its
/// description and its own options; the global options and -h are
/// described once, above.
fn subcommand_section(sub: &mut clap::Command) -> io::Result<String> {
    let mut roff = Roff::new();
    let name = sub
        .get_bin_name()
        .map_or_else(|| format!("reader {}", sub.get_name()), str::to_owned);
    // A control line's arguments are not escaped by roff: `\-` is a minus
    // sign, which a reader can copy, where `-` may be typeset as a hyphen.
    roff.control("SS", [name.replace('-', "\\-").as_str()]);
    roff.text(synopsis(sub));
    roff.control("PP", []);
    let mut text = without_preamble(roff.render());

    let shared: Vec<clap::Id> = sub
        .get_arguments()
        .filter(|a| a.is_global_set() || matches!(a.get_action(), ArgAction::Help))
        .map(|a| a.get_id().clone())
        .collect();
    let own = shared
        .into_iter()
        .fold(sub.clone(), |sub, id| sub.mut_arg(id, |a| a.hide(true)));
    let man = Man::new(own);
    text += &within_section(&piece(|w| man.render_description_section(w))?);
    text += &within_section(&piece(|w| man.render_options_section(w))?);
    Ok(text)
}

/// One of `clap_mangen`'s pieces, as [`without_preamble`].
fn piece(render: impl FnOnce(&mut dyn io::Write) -> io::Result<()>) -> io::Result<String> {
    let mut out = Vec::new();
    render(&mut out)?;
    let text = String::from_utf8(out).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(without_preamble(text))
}

/// Rendered roff without the apostrophe preamble that the roff crate
/// writes before each rendering: the page has it once, at its top.
fn without_preamble(text: String) -> String {
    let preamble = Roff::new().render();
    match text.strip_prefix(&preamble) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// A piece with its `.SH` headings dropped, to stand within a
/// subcommand's subsection: man pages nest no deeper.
fn within_section(piece: &str) -> String {
    piece
        .lines()
        .filter(|l| !l.starts_with(".SH "))
        .flat_map(|l| [l, "\n"])
        .collect()
}
