//! Layers point one way: a module of either crate imports only modules of lower layers.
//!
//! The order is written once, in each crate's `lib.rs` documentation ("Layers, bottom first:
//! `a` < `b` < ..."); this test reads it there and checks every `crate::x` path of every
//! source file against it. Test code is exempt (files named `tests.rs` or `*_tests.rs`, files
//! under a `tests/` directory, and everything after a file's `#[cfg(test)] mod`), as are
//! comments (an intra-doc link names what it explains, it does not depend on it). A module
//! missing from the list fails too, so a new module has to take a place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A crate's source root and its layer order.
struct Crate {
    src: PathBuf,
    layers: Vec<String>,
}

impl Crate {
    fn load(dir: &str) -> Crate {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join("src");
        let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
        Crate {
            layers: layer_order(&lib),
            src,
        }
    }

    fn rank(&self, module: &str) -> Option<usize> {
        self.layers.iter().position(|m| m == module)
    }
}

/// The backticked names of the "Layers, bottom first" paragraph of a `lib.rs`, in order.
fn layer_order(lib: &str) -> Vec<String> {
    let doc: Vec<&str> = lib.lines().filter_map(|l| l.strip_prefix("//!")).collect();
    let start = doc
        .iter()
        .position(|l| l.contains("Layers, bottom first"))
        .expect("lib.rs states its layers");
    let paragraph: String = doc[start..]
        .iter()
        .take_while(|l| !l.trim().is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let order = &paragraph[paragraph.find(':').expect("a colon before the list")..];
    let names = order.split('`').skip(1).step_by(2);
    names.map(str::to_string).collect()
}

/// Every `.rs` file under `dir`, with test files left out.
fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && name != "tests" {
            source_files(&path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// The code of a file a layer check reads: no comment lines, nothing after its test module.
fn checked_code(text: &str) -> String {
    let mut code = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let next = lines.peek().map_or("", |l| l.trim_start());
        if line.trim() == "#[cfg(test)]" && (next.contains("mod ") || next.starts_with("#[path")) {
            break;
        }
        if !line.trim_start().starts_with("//") {
            code.push(line);
        }
    }
    code.join("\n")
}

/// The first path segment after every `crate::` in `code` (not `$crate::`).
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The top-level module a source file belongs to (`None` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib").then_some(name)
}

/// Every violation in `krate`: "file: module `a` imports `b` (layer above it)" and the like.
/// `below` is the layer list of the crates under this one (paths into them are re-exports).
fn violations(krate: &Crate, below: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    source_files(&krate.src, &mut files);
    let mut found = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&krate.src, &file) else {
            continue;
        };
        let shown = file.strip_prefix(&krate.src).unwrap().display().to_string();
        let Some(rank) = krate.rank(&module) else {
            found.insert(
                shown,
                format!("module `{module}` has no place in lib.rs's layers"),
            );
            continue;
        };
        let code = checked_code(&std::fs::read_to_string(&file).unwrap());
        for target in crate_paths(&code) {
            let problem = match krate.rank(&target) {
                Some(r) if r > rank => format!("`{module}` imports `{target}`, a layer above it"),
                Some(_) => continue,
                None if below.contains(&target) => continue,
                None if target.starts_with(char::is_uppercase) => {
                    format!("`{module}` names the root re-export `{target}`: use its module path")
                }
                None => format!("`{module}` imports `{target}`, which has no layer"),
            };
            found.insert(format!("{shown} ({target})"), problem);
        }
    }
    found
        .into_iter()
        .map(|(f, p)| format!("{f}: {p}"))
        .collect()
}

#[test]
fn the_core_crate_imports_only_downward() {
    let core = Crate::load("../flatlsm-core");
    assert!(core.layers.len() > 10, "{:?}", core.layers);
    let bad = violations(&core, &[]);
    assert!(
        bad.is_empty(),
        "upward imports in flatlsm-core:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_engine_imports_only_downward_and_core_only_through_its_modules() {
    let core = Crate::load("../flatlsm-core");
    let engine = Crate::load(".");
    assert!(
        engine.layers.contains(&"db".to_string()),
        "{:?}",
        engine.layers
    );
    let bad = violations(&engine, &core.layers);
    assert!(
        bad.is_empty(),
        "upward imports in flatlsm:\n{}",
        bad.join("\n")
    );
}

/// The checker itself: it sees an upward import, skips comments and test modules.
#[test]
fn an_upward_import_is_reported_and_test_code_is_not_checked() {
    let code = checked_code(
        "use crate::db::Db;\n// crate::fuzz_api in a comment\n#[cfg(test)]\nmod tests {\nuse crate::inspect;\n}",
    );
    assert_eq!(crate_paths(&code), vec!["db".to_string()]);
    assert_eq!(crate_paths("$crate::x + notcrate::y"), Vec::<String>::new());
    let order = layer_order("//! Layers, bottom first: `a` < `b` <\n//! `c`.\n//!\n//! `d`");
    assert_eq!(order, ["a", "b", "c"]);
}
