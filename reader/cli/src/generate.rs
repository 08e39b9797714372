//! `reader --generate KIND`: the shell completion scripts, made from the
//! command line's definition ([`args::command`]) by clap's own generator.
//!
//! As ripgrep 14 does, the binary prints them rather than a build script
//! writing them: the definition is this crate's code, which a build
//! script cannot use without building it twice, and a packager gets the
//! pages of the very binary it installs.

use anyhow::{Context, Result};
use clap_complete::aot::{generate, Shell};

use crate::args::{self, GenerateArg};

/// What `--generate KIND` prints.
pub(crate) fn generated(kind: GenerateArg) -> Result<String> {
    let mut cmd = args::command();
    let shell = match kind {
        GenerateArg::Bash => Shell::Bash,
        GenerateArg::Zsh => Shell::Zsh,
        GenerateArg::Fish => Shell::Fish,
    };
    let mut script = Vec::new();
    let name = cmd.get_name().to_owned();
    generate(shell, &mut cmd, name, &mut script);
    String::from_utf8(script).context("the completion script is not UTF-8")
}
