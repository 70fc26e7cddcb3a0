//! Tests of value-log redirects in [`Version`]: the GC edit, reference rules, no chains, live
//! bytes credited to the target, dropping a redirect, and snapshots.

use super::tests::file;
use super::*;

const V: u64 = 7;
const N: u64 = 8;

fn vlog(number: u64) -> VlogMeta {
    VlogMeta {
        number,
        total_bytes: 1000,
    }
}

fn redirect(victim: u64, target: u64) -> RedirectMeta {
    RedirectMeta {
        victim,
        number: 100 + victim,
        file_size: 68,
        target,
    }
}

/// Files 1 (refs 300 bytes of V) and 2 (refs 50 bytes of V and 20 of log 9), logs V and 9.
fn before_gc() -> Version {
    let mut a = file(1, "a", "b");
    a.vlog_refs = vec![(V, 300)];
    let mut b = file(2, "c", "d");
    b.vlog_refs = vec![(V, 50), (9, 20)];
    let edit = VersionEdit {
        new_vlogs: vec![vlog(V), vlog(9)],
        new_files: vec![(1, a), (2, b)],
        ..VersionEdit::default()
    };
    Version::default().apply(&edit).unwrap()
}

/// The edit a GC of V commits: N, the redirect, and V leaves the live logs.
fn gc_edit() -> VersionEdit {
    VersionEdit {
        new_vlogs: vec![VlogMeta {
            number: N,
            total_bytes: 350,
        }],
        new_redirects: vec![redirect(V, N)],
        deleted_vlogs: vec![V],
        ..VersionEdit::default()
    }
}

#[test]
fn gc_edit_redirects_the_victim_and_credits_its_references_to_the_target() {
    let v = before_gc().apply(&gc_edit()).unwrap();
    assert!(!v.vlogs.contains_key(&V) && v.vlogs.contains_key(&N));
    assert_eq!(v.redirects.get(&V), Some(&redirect(V, N)));
    let live: Vec<_> = v.vlog_live_bytes().into_iter().collect();
    assert_eq!(live, vec![(N, 350), (9, 20)]);
    assert!(v.is_redirect_target(N) && !v.is_redirect_target(9));
    assert_eq!(v.redirect_file_numbers(), vec![100 + V]);
    assert!(v.unreferenced_redirects().is_empty());
}

#[test]
fn files_may_name_a_redirected_log_but_not_an_unknown_one() {
    let v = before_gc().apply(&gc_edit()).unwrap();
    let mut named = file(3, "e", "f");
    named.vlog_refs = vec![(V, 10)];
    v.apply(&VersionEdit {
        new_files: vec![(1, named.clone())],
        ..VersionEdit::default()
    })
    .unwrap();
    named.vlog_refs = vec![(55, 10)];
    let unknown = VersionEdit {
        new_files: vec![(1, named)],
        ..VersionEdit::default()
    };
    assert!(v.apply(&unknown).is_err());
}

#[test]
fn redirect_rules_refuse_chains_live_victims_and_missing_targets() {
    let v = before_gc().apply(&gc_edit()).unwrap();
    let refused = |edit: VersionEdit| v.apply(&edit).is_err();
    let chain = VersionEdit {
        new_vlogs: vec![vlog(20)],
        new_redirects: vec![redirect(N, 20)],
        deleted_vlogs: vec![N],
        ..VersionEdit::default()
    };
    assert!(refused(chain), "a redirect target cannot be redirected");
    let live_victim = VersionEdit {
        new_redirects: vec![redirect(9, N)],
        ..VersionEdit::default()
    };
    assert!(refused(live_victim), "victim still live");
    let target_dropped = VersionEdit {
        deleted_vlogs: vec![N],
        ..VersionEdit::default()
    };
    assert!(refused(target_dropped), "target of a live redirect");
    let twice = VersionEdit {
        new_redirects: vec![redirect(V, 9)],
        ..VersionEdit::default()
    };
    assert!(refused(twice));
    let into_itself = VersionEdit {
        new_redirects: vec![redirect(9, 9)],
        deleted_vlogs: vec![9],
        ..VersionEdit::default()
    };
    assert!(before_gc().apply(&into_itself).is_err());
    let unknown = VersionEdit {
        deleted_redirects: vec![9],
        ..VersionEdit::default()
    };
    assert!(refused(unknown));
}

#[test]
fn redirect_leaves_only_once_no_file_names_the_victim() {
    let v = before_gc().apply(&gc_edit()).unwrap();
    let drop = VersionEdit {
        deleted_redirects: vec![V],
        ..VersionEdit::default()
    };
    assert!(v.apply(&drop).is_err(), "files 1 and 2 name V");
    let mut rewritten = file(3, "a", "b");
    rewritten.vlog_refs = vec![(N, 300)];
    let compacted = VersionEdit {
        deleted_files: vec![(1, 1)],
        new_files: vec![(1, rewritten)],
        ..VersionEdit::default()
    };
    let v = v.apply(&compacted).unwrap();
    assert!(
        v.unreferenced_redirects().is_empty(),
        "file 2 still names V"
    );
    let v = v
        .apply(&VersionEdit {
            deleted_files: vec![(2, 2)],
            ..VersionEdit::default()
        })
        .unwrap();
    assert_eq!(v.unreferenced_redirects(), vec![V]);
    let v = v.apply(&drop).unwrap();
    assert!(v.redirects.is_empty());
    assert_eq!(v.vlog_live_bytes().get(&N), Some(&300));
}

#[test]
fn snapshot_edit_recreates_redirects() {
    let v = before_gc().apply(&gc_edit()).unwrap();
    let again = Version::default().apply(&v.snapshot_edit()).unwrap();
    assert_eq!(again, v);
    let bytes = v.snapshot_edit().encode();
    let decoded = VersionEdit::decode(&bytes, std::path::Path::new("m"), 0).unwrap();
    assert_eq!(decoded, v.snapshot_edit());
}
