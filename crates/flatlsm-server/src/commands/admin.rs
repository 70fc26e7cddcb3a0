//! Server commands: INFO, BGSAVE and SAVE (checkpoints of the database), LASTSAVE, SHUTDOWN.

use super::{is, syntax_error, Ctx};
use crate::reply::Reply;
use crate::shared::{unix_now, Shared};
use bytes::Bytes;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// INFO [section...].
pub fn info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let sections: Vec<String> = args[1..]
        .iter()
        .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
        .collect();
    Reply::Verbatim(crate::info::render(ctx.shared, &sections))
}

/// LASTSAVE: Unix time of the last successful checkpoint (the start time before one).
pub fn lastsave(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Reply {
    Reply::Int(ctx.shared.saves.last_save_unix.load(Ordering::Relaxed) as i64)
}

/// BGSAVE [SCHEDULE]: a checkpoint (an openable copy, hard links where possible) written by a
/// background thread into a new directory under `--dir`.
pub fn bgsave(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    if args.len() > 2 || args.get(1).is_some_and(|a| !is(a, "schedule")) {
        return syntax_error();
    }
    let target = match claim_checkpoint(ctx.shared) {
        Ok(target) => target,
        Err(reply) => return reply,
    };
    let shared = Arc::clone(ctx.shared);
    let spawned = std::thread::Builder::new()
        .name("flatlsm-bgsave".into())
        .spawn(move || finish_checkpoint(&shared, &target));
    match spawned {
        Ok(_) => Reply::Simple("Background saving started".into()),
        Err(e) => {
            ctx.shared.saves.in_progress.store(false, Ordering::SeqCst);
            Reply::err(format!("could not start the checkpoint thread: {e}"))
        }
    }
}

/// SAVE: the checkpoint of BGSAVE, written before the reply.
pub fn save(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Reply {
    match claim_checkpoint(ctx.shared) {
        Ok(target) => match finish_checkpoint(ctx.shared, &target) {
            Ok(_) => Reply::ok(),
            Err(e) => Reply::err(e),
        },
        Err(reply) => reply,
    }
}

/// Marks a checkpoint in progress and names its directory; refused without `--dir` or while
/// another is running.
fn claim_checkpoint(shared: &Shared) -> Result<PathBuf, Reply> {
    let Some(dir) = &shared.config.checkpoint_dir else {
        return Err(Reply::err(
            "no checkpoint directory: start flatlsm serve with --dir DIR",
        ));
    };
    if shared.saves.in_progress.swap(true, Ordering::SeqCst) {
        return Err(Reply::err("Background save already in progress"));
    }
    let n = shared.saves.made.fetch_add(1, Ordering::Relaxed);
    Ok(dir.join(format!("checkpoint-{}-{n}", unix_now())))
}

/// Writes the checkpoint, records the outcome (LASTSAVE, INFO) and ends the claim.
fn finish_checkpoint(shared: &Shared, target: &std::path::Path) -> Result<String, String> {
    let made = target
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .map_err(|e| e.to_string())
        .and_then(|()| shared.db.checkpoint(target).map_err(|e| e.to_string()));
    let saves = &shared.saves;
    match &made {
        Ok(()) => saves.last_save_unix.store(unix_now(), Ordering::Relaxed),
        Err(e) => log::error!("checkpoint into {} failed: {e}", target.display()),
    }
    saves.last_failed.store(made.is_err(), Ordering::Relaxed);
    saves.in_progress.store(false, Ordering::SeqCst);
    made.map(|()| target.display().to_string())
}

/// SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE]: stops accepting, lets every connection finish its
/// batch, closes the database. The caller's connection closes without a reply, as with
/// redis-server (clients treat the closed connection as success).
pub fn shutdown(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let known = ["nosave", "save", "now", "force"];
    if args[1..].iter().any(|a| !known.iter().any(|k| is(a, k))) {
        return syntax_error();
    }
    if args[1..].iter().any(|a| is(a, "save")) {
        if let Err(reply) = save_before_shutdown(ctx.shared) {
            return reply;
        }
    }
    log::info!("SHUTDOWN requested by client {}", ctx.session.client.addr);
    ctx.shared.begin_shutdown();
    ctx.session.close = true;
    ctx.session.silent = true;
    Reply::ok()
}

fn save_before_shutdown(shared: &Shared) -> Result<(), Reply> {
    let target = claim_checkpoint(shared)?;
    finish_checkpoint(shared, &target)
        .map(drop)
        .map_err(|e| Reply::err(format!("Errors trying to SHUTDOWN. Check logs. ({e})")))
}
