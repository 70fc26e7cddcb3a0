//! Tests of the budget derivation: every design stays within both budgets at every value size
//! the paper sweeps, spends its PM as its paper does, and a budget too small is refused.

use super::*;

const SIZES: [usize; 7] = [256, 512, 1024, 4096, 8192, 16384, 65536];
const DESIGNS: [(Profile, bool); 6] = [
    (Profile::FlatLsm, false),
    (Profile::Leveled, false),
    (Profile::Leveled, true),
    (Profile::NoveLsm, false),
    (Profile::MatrixKv, false),
    (Profile::SlmDb, false),
];

fn budget() -> Budget {
    Budget {
        dram: 512 << 20,
        pm: 1 << 30,
    }
}

fn entries(value: usize) -> Entries {
    Entries { key: 16, value }
}

/// The derived options, checked by the engine's own validation.
fn options(s: &Spending, profile: Profile) -> Options {
    let mut o = Options::for_profile(profile);
    apply(s, &mut o);
    o.validate().unwrap_or_else(|e| panic!("{profile}: {e}"));
    o
}

#[test]
fn every_design_spends_within_both_budgets_at_every_value_size() {
    for scale in [1.0, 1.0 / 64.0] {
        let b = budget().scaled(scale);
        for (profile, l0) in DESIGNS {
            for size in SIZES {
                let s = spend(b, profile, l0, entries(size)).unwrap();
                assert!(s.total(Memory::Dram) <= b.dram, "{profile} {size}: {s:?}");
                assert!(s.total(Memory::Pm) <= b.pm, "{profile} {size}: {s:?}");
                options(&s, profile);
            }
        }
    }
}

/// FlatLSM's PM goes to six PMTables (more, smaller ones for small entries) and nearly all of
/// it is used; its indexes come out of the DRAM, so small values leave a smaller block cache.
#[test]
fn flatlsm_spends_pm_on_six_pmtables_and_dram_on_their_indexes() {
    let small = spend(budget(), Profile::FlatLsm, false, entries(256)).unwrap();
    let large = spend(budget(), Profile::FlatLsm, false, entries(65536)).unwrap();
    let o = options(&large, Profile::FlatLsm);
    assert_eq!((o.max_write_buffer_number, o.flush_immutable_num), (6, 2));
    assert_eq!(
        options(&entries_spending(1024), Profile::FlatLsm).max_write_buffer_number,
        6
    );
    assert!(small.total(Memory::Pm) > budget().pm * 99 / 100);
    assert!(small.block_cache < large.block_cache);
    assert!(
        small.describe().contains("PMTable indexes"),
        "{}",
        small.describe()
    );
}

fn entries_spending(value: usize) -> Spending {
    spend(budget(), Profile::FlatLsm, false, entries(value)).unwrap()
}

/// At 256 B six PMTables of a gigabyte would each index over half a million entries: the PM
/// goes to twelve of half the size instead, flushing at four, and no table holds more than
/// `ENTRIES_PER_PMTABLE`.
#[test]
fn small_entries_spread_the_pm_over_more_smaller_pmtables() {
    let o = options(&entries_spending(256), Profile::FlatLsm);
    assert_eq!((o.max_write_buffer_number, o.flush_immutable_num), (12, 4));
    let per_table = o.pmtable_size as u64 / entries(256).log_bytes();
    assert!(per_table <= ENTRIES_PER_PMTABLE, "{per_table}");
}

/// MatrixKV: the container takes the PM the write-ahead log leaves, memtables stay in DRAM;
/// NoveLSM: two PM skiplists of half the PM; SLM-DB: a B+-tree beside two skiplists.
#[test]
fn peers_spend_pm_as_their_papers_do() {
    let m = spend(budget(), Profile::MatrixKv, false, entries(4096)).unwrap();
    let o = options(&m, Profile::MatrixKv);
    assert_eq!(
        o.matrixkv.container_size + 2 * o.pmtable_size as u64,
        m.total(Memory::Pm)
    );
    assert!(o.matrixkv.column_lower_bound < o.matrixkv.column_upper_bound);
    let n = options(
        &spend(budget(), Profile::NoveLsm, false, entries(4096)).unwrap(),
        Profile::NoveLsm,
    );
    assert_eq!((n.pmtable_size, n.max_write_buffer_number), (512 << 20, 2));
    let s = spend(budget(), Profile::SlmDb, false, entries(4096)).unwrap();
    assert_eq!(s.btree + 2 * (128 << 20), 1 << 30);
    let l0 = options(
        &spend(budget(), Profile::Leveled, true, entries(4096)).unwrap(),
        Profile::Leveled,
    );
    assert!(l0.leveled.level0_in_pm && l0.leveled.level0_stop_writes_trigger >= 4);
}

/// Leveled and MatrixKV get the same DRAM memtables, so the comparison varies the design only.
#[test]
fn leveled_and_matrixkv_get_the_same_memtables() {
    for size in SIZES {
        let l = spend(budget(), Profile::Leveled, false, entries(size)).unwrap();
        let m = spend(budget(), Profile::MatrixKv, false, entries(size)).unwrap();
        assert_eq!(l.write_buffer, m.write_buffer);
        assert_eq!(l.block_cache, m.block_cache);
    }
}

#[test]
fn a_budget_too_small_is_refused_with_the_reason() {
    let tiny = Budget {
        dram: 1 << 20,
        pm: 1 << 20,
    };
    let e = spend(tiny, Profile::MatrixKv, false, entries(256)).unwrap_err();
    assert!(e.contains("matrixkv"), "{e}");
    let no_dram = Budget {
        dram: 0,
        pm: 1 << 30,
    };
    let e = spend(no_dram, Profile::FlatLsm, false, entries(256)).unwrap_err();
    assert!(e.contains("DRAM budget"), "{e}");
}
