// SPDX-License-Identifier: GPL-2.0-only
//! `reader show`: a trace file (streamed) or golden ring images.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use antinomie_reader::decode::PmuTypes;
use antinomie_reader::filter::Filter;
use antinomie_reader::pipeline::{self, Assembler, DrainMsg, Summary};
use antinomie_reader::ring::ImageRing;
use antinomie_reader::trace;

use crate::args::CommonArgs;
use crate::live::{line_sink, with_counts};

pub(crate) fn parse_pmus(specs: &[String]) -> Result<PmuTypes> {
    let mut pairs = Vec::new();
    for spec in specs {
        let Some((name, ty)) = spec.split_once('=') else {
            bail!("--pmu {spec}: expected NAME=TYPE");
        };
        let ty: u32 = ty
            .parse()
            .with_context(|| format!("--pmu {spec}: bad type"))?;
        pairs.push((ty, name.to_owned()));
    }
    Ok(PmuTypes::from_pairs(pairs))
}

/// What `reader show` decodes: a trace file streamed frame by frame, or
/// ring images read whole.
pub(crate) enum ShowInput {
    Trace(trace::TraceReader<Box<dyn io::Read>>),
    Image(ImageRing),
}

/// Opens `path` (`-`: standard input) and tells a trace file from a ring
/// image by its first bytes.
pub(crate) fn open_input(path: &Path) -> Result<ShowInput> {
    let name = path.display();
    let mut input: Box<dyn io::Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(io::BufReader::new(
            File::open(path).with_context(|| format!("opening {name}"))?,
        ))
    };
    let mut head = Vec::new();
    io::Read::read_to_end(
        &mut io::Read::take(&mut input, trace::TRACE_MAGIC.len() as u64),
        &mut head,
    )
    .with_context(|| format!("reading {name}"))?;
    let is_trace = trace::is_trace(&head);
    let mut input: Box<dyn io::Read> = Box::new(io::Read::chain(io::Cursor::new(head), input));
    if is_trace {
        return Ok(ShowInput::Trace(
            trace::TraceReader::new(input).with_context(|| format!("decoding {name}"))?,
        ));
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut input, &mut bytes).with_context(|| format!("reading {name}"))?;
    match ImageRing::from_bytes(bytes) {
        Ok(image) => Ok(ShowInput::Image(image)),
        // A ring image, of another ABI: the error says so by itself.
        Err(e @ antinomie_reader::Error::AbiVersion { .. }) => Err(e).context(name.to_string()),
        Err(e) => Err(e).with_context(|| format!("{name}: neither a trace file nor a ring image")),
    }
}

/// `reader show`; returns the summary, and whether the trace file was cut
/// inside a frame. A trace file is streamed: memory does not grow with it.
pub(crate) fn show(
    files: &[PathBuf],
    pmu: &[String],
    common: &CommonArgs,
    filter: Option<Filter>,
) -> Result<(Summary, bool)> {
    let mut images = Vec::new();
    let mut traces = Vec::new();
    for path in files {
        match open_input(path)? {
            ShowInput::Trace(t) => traces.push((path, t)),
            ShowInput::Image(i) => images.push(i),
        }
    }
    let (cpus, window_ns, pmus, realtime_offset_ns, trace, msgs) =
        match (traces.len(), images.is_empty()) {
            (1, true) => {
                let (path, t) = traces.remove(0);
                let h = t.header().clone();
                let pmus = if pmu.is_empty() {
                    h.pmus
                } else {
                    parse_pmus(pmu)?
                };
                (
                    h.cpus,
                    h.window_ns,
                    pmus,
                    h.realtime_offset_ns,
                    Some((path, t)),
                    Vec::new(),
                )
            }
            (0, false) => {
                let (cpus, msgs) = drain_images(images)?;
                (cpus, 0, parse_pmus(pmu)?, None, None, msgs)
            }
            _ => bail!("give one trace file, or one or more ring images (not both)"),
        };
    let sink = line_sink(common, pmus.clone(), false, realtime_offset_ns)?;
    let mut trace = trace;
    // An undecodable frame fails the run before -c's table is written.
    let summary = with_counts(common, sink, |sink| {
        let mut assembler = Assembler::new(&cpus, window_ns, sink);
        if let Some(f) = filter {
            assembler.set_filter(Box::new(f.with_pmus(pmus)));
        }
        let Some((path, t)) = &mut trace else {
            return Ok(pipeline::replay(msgs, assembler)?);
        };
        let mut failed = None;
        let msgs = t
            .by_ref()
            .map_while(|m| m.map_err(|e| failed = Some(e)).ok());
        let summary = pipeline::replay(msgs, assembler)?;
        match failed {
            Some(e) => Err(e).with_context(|| format!("decoding {}", path.display())),
            None => Ok(summary),
        }
    })?;
    let Some((path, t)) = trace else {
        return Ok((summary, false));
    };
    let truncated = t.truncated_at();
    if let Some(at) = truncated {
        tracing::warn!(
            "{}: cut short inside the frame at byte {at}: decoded up to the last complete frame",
            path.display()
        );
    } else if !t.complete() {
        tracing::warn!("the trace file has no END frame: the recording was cut short");
    }
    Ok((summary, truncated.is_some()))
}

/// Drains ring images, one after the other, into the messages a live
/// drain would have produced.
pub(crate) fn drain_images(images: Vec<ImageRing>) -> Result<(Vec<u32>, Vec<DrainMsg>)> {
    let mut cpus: Vec<u32> = images.iter().map(|i| i.meta().cpu).collect();
    cpus.sort_unstable();
    if cpus.windows(2).any(|w| w[0] == w[1]) {
        bail!("two ring images of the same CPU");
    }
    Ok((cpus, antinomie_reader::pipeline::drain_once(images)))
}
