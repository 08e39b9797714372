// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-e2e device`: drives `/dev/antinomie` through its ioctls (the
//! reader has no switch to disable capture or resize the rings).

use std::path::Path;

use antinomie_workloads::device::Device;
use serde_json::Value;

pub(crate) fn device(op: &str, arg: Option<u64>, path: &Path) -> Result<(), String> {
    let dev = Device::open(path)?;
    // Read first for every operation: a device that cannot report its
    // geometry fails here, whatever was asked.
    let info = dev.info()?;
    match (op, arg) {
        ("info", None) => println!("{info:?}"),
        ("enable", None) => dev.enable()?,
        ("disable", None) => dev.disable()?,
        ("ring-size", Some(size)) => dev.set_ring_size(size)?,
        ("counters", None) => {
            let out = dev
                .counters()?
                .into_iter()
                .map(|c| {
                    serde_json::json!({
                        "cpu": c.cpu,
                        "producer_pos": c.producer_pos,
                        "consumer_pos": c.consumer_pos,
                        "produced": c.produced,
                        "lost": c.lost,
                    })
                })
                .collect();
            println!("{}", Value::Array(out));
        }
        _ => return Err(format!("unknown device operation {op} {arg:?}")),
    }
    Ok(())
}
