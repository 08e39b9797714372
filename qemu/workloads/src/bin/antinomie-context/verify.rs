// SPDX-License-Identifier: GPL-2.0-only
//! The read-back check: what the kernel reports about the calling process
//! (`/proc/self/status`, `/proc/self/uid_map`, the sysctl), parsed, and
//! compared with what a context claims. It shares nothing with the set-up
//! code but the context's name, so a set-up that went wrong cannot also
//! make the check agree.

use super::Context;

/// `CAP_PERFMON`, bit 38 of a capability set.
pub const CAP_PERFMON_BIT: u64 = 1 << 38;
/// Every capability of the pinned kernel (`CAP_LAST_CAP` 40): what root
/// holds, and what a user namespace's creator holds inside it.
pub const ALL_CAPS: u64 = (1 << 41) - 1;

/// The initial user namespace's uid map, as `/proc/self/uid_map` shows it.
const INITIAL_UID_MAP: &str = "0 0 4294967295";

/// What the kernel reports about the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// Real, effective, saved and filesystem uid, as `/proc/self/status`
    /// shows them (translated into the process's own user namespace).
    pub uids: [u32; 4],
    pub cap_eff: u64,
    pub cap_prm: u64,
    pub paranoid: i32,
    /// The uid map's lines: (first uid inside, first uid outside, count).
    pub uid_map: Vec<(u32, u32, u32)>,
}

impl Observed {
    /// Reads it from `/proc`.
    pub fn read() -> Result<Self, String> {
        let read = |path: &str| {
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
        };
        // A kernel without user namespaces has no uid_map: every process
        // is in the initial namespace, whose map is the identity.
        let uid_map = match std::fs::read_to_string("/proc/self/uid_map") {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => INITIAL_UID_MAP.to_owned(),
            _ => read("/proc/self/uid_map")?,
        };
        Self::parse(
            &read("/proc/self/status")?,
            &uid_map,
            &read("/proc/sys/kernel/perf_event_paranoid")?,
        )
    }

    /// Parses the three files' text.
    pub fn parse(status: &str, uid_map: &str, paranoid: &str) -> Result<Self, String> {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
                .ok_or(format!("/proc/self/status has no {name} line"))
        };
        let caps = |name: &str| {
            let v = field(name)?;
            u64::from_str_radix(v, 16).map_err(|e| format!("{name} {v:?}: {e}"))
        };
        let uid_words: Vec<u32> = field("Uid")?
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("Uid line: {e}"))?;
        let uids: [u32; 4] = uid_words
            .try_into()
            .map_err(|w: Vec<u32>| format!("Uid line has {} values, not 4", w.len()))?;
        let uid_map = uid_map
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let w: Vec<u32> = l
                    .split_whitespace()
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("uid_map line {l:?}: {e}"))?;
                match w[..] {
                    [inside, outside, count] => Ok((inside, outside, count)),
                    _ => Err(format!("uid_map line {l:?}: not 3 numbers")),
                }
            })
            .collect::<Result<_, String>>()?;
        Ok(Observed {
            uids,
            cap_eff: caps("CapEff")?,
            cap_prm: caps("CapPrm")?,
            paranoid: paranoid
                .trim()
                .parse()
                .map_err(|e| format!("perf_event_paranoid {:?}: {e}", paranoid.trim()))?,
            uid_map,
        })
    }

    /// Whether the process is in a user namespace other than the initial
    /// one: the initial namespace's map is the whole identity range.
    pub fn in_userns(&self) -> bool {
        self.uid_map != [(0, 0, u32::MAX)]
    }

    /// The uid in the initial namespace: through the map when in a user
    /// namespace (uid 0 inside maps to the creator's uid outside).
    pub fn outer_uid(&self) -> Option<u32> {
        let uid = self.uids[0];
        self.uid_map
            .iter()
            .find(|(inside, _, count)| uid >= *inside && uid - inside < *count)
            .map(|(inside, outside, _)| outside + (uid - inside))
    }

    /// The one line logged with every run.
    pub fn describe(&self, context: Context) -> String {
        format!(
            "context: {} uid={} caps={:016x} paranoid={} userns={}",
            context.name(),
            self.outer_uid()
                .map_or_else(|| "unmapped".to_owned(), |u| u.to_string()),
            self.cap_eff,
            self.paranoid,
            u8::from(self.in_userns())
        )
    }
}

/// Checks `seen` against what `context` claims; the error says the first
/// thing that differs.
pub fn check(context: Context, seen: &Observed) -> Result<(), String> {
    let same_uids = seen.uids.iter().all(|&u| u == seen.uids[0]);
    if !same_uids {
        return Err(format!(
            "real, effective, saved and fs uids differ: {:?}",
            seen.uids
        ));
    }
    let outer = seen
        .outer_uid()
        .ok_or(format!("uid {} is not in the uid map", seen.uids[0]))?;
    let want_userns = matches!(context, Context::Userns);
    if seen.in_userns() != want_userns {
        return Err(format!(
            "in a user namespace: {}, the context wants {want_userns} (uid map {:?})",
            seen.in_userns(),
            seen.uid_map
        ));
    }
    let (want_outer_root, want_caps) = match context {
        Context::Root => (true, ALL_CAPS),
        Context::Perfmon => (false, CAP_PERFMON_BIT),
        Context::User(_) => (false, 0),
        // All caps, but only inside the namespace: its uid 0 is an
        // unprivileged uid outside.
        Context::Userns => (false, ALL_CAPS),
    };
    if (outer == 0) != want_outer_root {
        return Err(format!("uid {outer} in the initial user namespace"));
    }
    if want_userns && seen.uids[0] != 0 {
        return Err(format!(
            "uid {} inside the user namespace, not 0",
            seen.uids[0]
        ));
    }
    if seen.cap_eff != want_caps || seen.cap_prm != want_caps {
        return Err(format!(
            "CapEff {:016x} CapPrm {:016x}, the context wants {want_caps:016x}",
            seen.cap_eff, seen.cap_prm
        ));
    }
    let want_paranoid = context.paranoid();
    if seen.paranoid != want_paranoid {
        return Err(format!(
            "perf_event_paranoid {}, the context wants {want_paranoid}",
            seen.paranoid
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CAP_SYS_ADMIN`, bit 21.
    const CAP_SYS_ADMIN_BIT: u64 = 1 << 21;
    const IDENTITY: &str = "         0          0 4294967295\n";

    #[test]
    fn the_initial_map_is_the_identity() {
        assert_eq!(
            seen(0, ALL_CAPS, 2, INITIAL_UID_MAP),
            seen(0, ALL_CAPS, 2, IDENTITY)
        );
        assert!(!seen(0, ALL_CAPS, 2, INITIAL_UID_MAP).in_userns());
    }

    fn status(uid: u32, eff: u64, prm: u64) -> String {
        format!(
            "Name:\tx\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nCapInh:\t0000000000000000\n\
             CapPrm:\t{prm:016x}\nCapEff:\t{eff:016x}\n"
        )
    }

    fn seen(uid: u32, caps: u64, paranoid: i32, map: &str) -> Observed {
        Observed::parse(&status(uid, caps, caps), map, &format!("{paranoid}\n")).unwrap()
    }

    #[test]
    fn every_context_accepts_what_it_claims() {
        let ok = [
            (Context::Root, seen(0, ALL_CAPS, 2, IDENTITY)),
            (Context::Perfmon, seen(1000, CAP_PERFMON_BIT, 2, IDENTITY)),
            (Context::User(2), seen(1000, 0, 2, IDENTITY)),
            (Context::User(1), seen(1000, 0, 1, IDENTITY)),
            (Context::User(0), seen(1000, 0, 0, IDENTITY)),
            (Context::User(-1), seen(1000, 0, -1, IDENTITY)),
            (Context::Userns, seen(0, ALL_CAPS, 2, "0 1000 1\n")),
        ];
        for (context, observed) in ok {
            check(context, &observed).unwrap();
        }
        assert_eq!(
            seen(0, ALL_CAPS, 2, "0 1000 1\n").describe(Context::Userns),
            "context: userns uid=1000 caps=000001ffffffffff paranoid=2 userns=1"
        );
    }

    #[test]
    fn a_context_that_is_not_what_it_claims_fails() {
        let bad = [
            // Root where an unprivileged uid is claimed.
            (Context::User(2), seen(0, ALL_CAPS, 2, IDENTITY)),
            // CAP_SYS_ADMIN left beside CAP_PERFMON.
            (
                Context::Perfmon,
                seen(1000, CAP_PERFMON_BIT | CAP_SYS_ADMIN_BIT, 2, IDENTITY),
            ),
            // CAP_PERFMON held as root.
            (Context::Perfmon, seen(0, CAP_PERFMON_BIT, 2, IDENTITY)),
            // The sysctl not set.
            (Context::User(-1), seen(1000, 0, 2, IDENTITY)),
            // No user namespace.
            (Context::Userns, seen(0, ALL_CAPS, 2, IDENTITY)),
            // A user namespace whose uid 0 is root outside.
            (Context::Userns, seen(0, ALL_CAPS, 2, "0 0 1\n")),
            // Caps left over in a user context.
            (Context::User(1), seen(1000, 1, 1, IDENTITY)),
            // A user namespace where an ordinary user is claimed.
            (Context::User(2), seen(0, 0, 2, "0 1000 1\n")),
        ];
        for (context, observed) in bad {
            assert!(
                check(context, &observed).is_err(),
                "{context:?} accepted {observed:?}"
            );
        }
        // Effective and saved uid differ (a setuid that was not complete).
        let half = Observed::parse(
            "Uid:\t1000\t0\t1000\t1000\nCapPrm:\t0\nCapEff:\t0\n",
            IDENTITY,
            "2",
        )
        .unwrap();
        assert!(check(Context::User(2), &half).is_err());
    }

    #[test]
    fn unreadable_input_is_an_error() {
        assert!(Observed::parse("Uid:\t0\t0\t0\n", IDENTITY, "2").is_err());
        assert!(Observed::parse(&status(0, 0, 0), "0 0\n", "2").is_err());
        assert!(Observed::parse(&status(0, 0, 0), IDENTITY, "two").is_err());
    }
}
