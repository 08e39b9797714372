// SPDX-License-Identifier: GPL-2.0-only
//! The dynamic PMU types that name `type` and the kprobe/uprobe aliases.

use std::collections::BTreeMap;

/// Types of dynamic PMUs (`/sys/bus/event_source/devices/*/type`), so that
/// `type` and the kprobe/uprobe aliases of `config1`/`config2` can be
/// named. Empty means: no names for dynamic types.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PmuTypes {
    by_type: BTreeMap<u32, String>,
}

impl PmuTypes {
    /// No dynamic PMU known.
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// Reads `<root>/bus/event_source/devices/*/type` (`root` is normally
    /// `/sys`). A missing or unreadable directory gives an empty map.
    #[must_use]
    pub fn from_sysfs(root: &std::path::Path) -> Self {
        let mut by_type = BTreeMap::new();
        let dir = root.join("bus/event_source/devices");
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Ok(text) = std::fs::read_to_string(entry.path().join("type")) {
                    if let Ok(t) = text.trim().parse::<u32>() {
                        by_type.insert(t, name);
                    }
                }
            }
        }
        PmuTypes { by_type }
    }

    /// Builds a map from `(type, name)` pairs.
    pub fn from_pairs<I: IntoIterator<Item = (u32, String)>>(pairs: I) -> Self {
        PmuTypes {
            by_type: pairs.into_iter().collect(),
        }
    }

    /// The `(type, name)` pairs, by type.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, &str)> {
        self.by_type.iter().map(|(t, n)| (*t, n.as_str()))
    }

    /// The name of the PMU with this type.
    #[must_use]
    pub fn name(&self, ty: u32) -> Option<&str> {
        self.by_type.get(&ty).map(String::as_str)
    }

    pub(super) fn is(&self, ty: u64, pmu: &str) -> bool {
        u32::try_from(ty).ok().and_then(|t| self.name(t)) == Some(pmu)
    }
}
