//! Stable-Rust companion of the cargo-fuzz targets (fuzz/): every seed in fuzz/corpus (real
//! files from `cargo run -p flatlsm --example make_fuzz_corpus`) must decode, and random
//! mutations of it must be rejected with a corruption error or accepted, never panic (each
//! checked as given and resealed, `fuzz_api::check`). Inputs named `regression-*` once made a
//! decoder panic: they are only checked.

use flatlsm::fuzz_api::{check, decode, TARGETS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// Mutations tried per seed file.
const MUTATIONS: usize = 150;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

fn mutate(seed: &[u8], rng: &mut StdRng) -> Vec<u8> {
    let mut b = seed.to_vec();
    match rng.gen_range(0..5) {
        0 if !b.is_empty() => {
            let i = rng.gen_range(0..b.len());
            b[i] ^= 1 << rng.gen_range(0..8);
        }
        1 if !b.is_empty() => {
            for _ in 0..rng.gen_range(1..8) {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
        }
        2 => b.truncate(rng.gen_range(0..=b.len())),
        3 => b.extend((0..rng.gen_range(1..64)).map(|_| rng.gen::<u8>())),
        _ if b.len() >= 8 => {
            // Large values in length-like positions.
            let i = rng.gen_range(0..b.len() - 4);
            b[i..i + 4].copy_from_slice(&rng.gen_range(u32::MAX - 64..=u32::MAX).to_le_bytes());
        }
        _ => b.push(0),
    }
    b
}

#[test]
fn every_decoder_accepts_real_files_and_survives_mutations() {
    let mut rng = StdRng::seed_from_u64(42);
    for target in TARGETS {
        let (mut tried, mut rejected) = (0usize, 0usize);
        for (path, seed) in corpus(target) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            // A `regression-*` input made a decoder panic once (tests/fuzz_regressions.rs).
            if !name.starts_with("regression-") {
                let real = decode(target, &seed);
                real.unwrap_or_else(|e| panic!("{target}: real file {name} rejected: {e}"));
            }
            for _ in 0..MUTATIONS {
                let input = mutate(&seed, &mut rng);
                let run = catch_unwind(AssertUnwindSafe(|| check(target, &input)));
                if run.is_err() {
                    let kept = std::env::temp_dir().join(format!("flatlsm-crash-{target}"));
                    std::fs::write(&kept, &input).unwrap();
                    panic!(
                        "{target} panicked on a mutation of {}, saved to {}",
                        path.display(),
                        kept.display()
                    );
                }
                tried += 1;
                rejected += usize::from(decode(target, &input).is_err());
            }
        }
        println!("{target}: {tried} mutations, {rejected} rejected as corruption");
    }
}
