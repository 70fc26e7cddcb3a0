//! A first FlatLSM program: open, write, read, iterate, batch, snapshot, stats.
//!
//! Run with `cargo run --example basic`. It uses a temporary directory with PM persisted by
//! msync (the safe default); see README.md for the PM modes.

use flatlsm::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

fn main() -> flatlsm::Result<()> {
    let dir = std::env::temp_dir().join(format!("flatlsm-example-{}", std::process::id()));
    let db = Db::open(&dir, Options::default())?;

    db.put_opt(
        b"apple",
        b"red",
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )?;
    db.put(b"banana", b"yellow")?;

    let mut batch = WriteBatch::new();
    batch.put(b"cherry", b"dark red").delete(b"banana");
    db.write(&batch)?;

    let snapshot = db.snapshot();
    db.put(b"apple", b"green")?;

    let latest = db.get(b"apple")?;
    let before = db.get_opt(
        b"apple",
        &ReadOptions {
            snapshot: Some(&snapshot),
            ..Default::default()
        },
    )?;
    println!(
        "apple now {:?}, at the snapshot {:?}",
        latest.map(String::from_utf8),
        before.map(String::from_utf8)
    );

    for entry in db.iter()? {
        let (k, v) = entry?;
        println!(
            "{} = {}",
            String::from_utf8_lossy(&k),
            String::from_utf8_lossy(&v)
        );
    }
    db.flush()?;
    println!("{}", db.stats());
    drop(snapshot);
    db.close()?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
