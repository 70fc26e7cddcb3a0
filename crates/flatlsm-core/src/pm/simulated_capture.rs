//! Crash images of a [`super::SimulatedPmDevice`]: what a power loss or a process crash leaves
//! of its regions.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{CrashKind, Image, RegionData, CACHE_LINE};

/// The durable images plus a seeded random subset of dirty lines, and within each kept line a
/// random subset of its aligned 8-byte words.
pub(super) fn capture(regions: &BTreeMap<String, Arc<RegionData>>, seed: u64) -> Image {
    let mut rng = SplitMix64(seed);
    let mut image = Image::new();
    for (name, data) in regions {
        let lines = data.lines.lock();
        let mut bytes = lines.durable.clone();
        let len = bytes.len();
        for &line in &lines.dirty {
            if !rng.coin() {
                continue;
            }
            let start = line * CACHE_LINE;
            for word in (start..(start + CACHE_LINE).min(len)).step_by(8) {
                if rng.coin() {
                    let end = (word + 8).min(len);
                    bytes[word..end].copy_from_slice(data.volatile.read(word, end - word));
                }
            }
        }
        image.insert(name.clone(), bytes);
    }
    image
}

/// What a crash of `kind` leaves (`seed` chooses for a power loss).
pub(super) fn capture_of(
    kind: CrashKind,
    regions: &BTreeMap<String, Arc<RegionData>>,
    seed: u64,
) -> Image {
    match kind {
        CrashKind::PowerLoss => capture(regions, seed),
        CrashKind::ProcessCrash => capture_all(regions),
    }
}

/// Every region's volatile image: what a process crash leaves.
pub(super) fn capture_all(regions: &BTreeMap<String, Arc<RegionData>>) -> Image {
    regions
        .iter()
        .map(|(name, data)| {
            (
                name.clone(),
                data.volatile.read(0, data.volatile.len()).to_vec(),
            )
        })
        .collect()
}

/// Small deterministic PRNG (the crate has no runtime dependency on `rand`).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}
