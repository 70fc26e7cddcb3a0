//! The committed index of measured results, docs/results/README.md, is exactly what
//! `flatlsm results-page` generates from the files it lists.

use std::path::Path;
use std::process::Command;

#[test]
fn results_page_is_regenerated_from_the_files_it_lists() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results");
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .arg("results-page")
        .arg(&results)
        .arg("--check")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "docs/results/README.md is out of date: run `cargo run -p flatlsm-cli -- results-page` \
         from the repository root and commit the page\n{stderr}"
    );
}
