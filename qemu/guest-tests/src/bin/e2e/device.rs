//! `antinomie-e2e device`: drives `/dev/antinomie` through its ioctls (the
//! reader has no switch to disable capture or resize the rings).

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use antinomie_abi as abi;
use serde_json::Value;

pub(crate) fn device(op: &str, arg: Option<u64>, path: &Path) -> Result<(), String> {
    let f: File = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let fd = f.as_raw_fd();
    let ioctl = |cmd: u32, p: *mut libc::c_void, what: &str| -> Result<(), String> {
        // SAFETY: cmd is one of the device's ioctls and p points to the
        // argument type its _IOC_SIZE names (or is unused for _IO).
        let rc = unsafe { libc::ioctl(fd, libc::Ioctl::from(cmd), p) };
        if rc < 0 {
            Err(format!("{what}: {}", std::io::Error::last_os_error()))
        } else {
            Ok(())
        }
    };
    let mut info = abi::Info::default();
    ioctl(
        abi::IOC_GET_INFO,
        std::ptr::from_mut(&mut info).cast(),
        "ANTINOMIE_IOC_GET_INFO",
    )?;
    match (op, arg) {
        ("info", None) => println!("{info:?}"),
        ("enable", None) => ioctl(
            abi::IOC_ENABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_ENABLE",
        )?,
        ("disable", None) => ioctl(
            abi::IOC_DISABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_DISABLE",
        )?,
        ("ring-size", Some(mut size)) => {
            ioctl(
                abi::IOC_SET_RING_SIZE,
                std::ptr::from_mut(&mut size).cast(),
                "ANTINOMIE_IOC_SET_RING_SIZE",
            )?;
        }
        ("counters", None) => {
            let mut out = Vec::new();
            for cpu in 0..info.cpu_id_limit {
                let mut c = abi::Counters {
                    cpu,
                    ..abi::Counters::default()
                };
                // A CPU that is not possible has no ring: ENODEV.
                if ioctl(
                    abi::IOC_GET_COUNTERS,
                    std::ptr::from_mut(&mut c).cast(),
                    "ANTINOMIE_IOC_GET_COUNTERS",
                )
                .is_err()
                {
                    continue;
                }
                out.push(serde_json::json!({
                    "cpu": cpu,
                    "producer_pos": c.producer_pos,
                    "consumer_pos": c.consumer_pos,
                    "produced": c.produced,
                    "lost": c.lost,
                }));
            }
            println!("{}", Value::Array(out));
        }
        _ => return Err(format!("unknown device operation {op} {arg:?}")),
    }
    Ok(())
}
