//! The core's build identity: a hash of its sources (every file under rust/), Cargo.lock and
//! the crate version, as `REPOCTX_BUILD_ID`. What the core saves on disk for a later process
//! (the task index, rust/tasks/store.rs) carries it and is used only by the same build: facts
//! extracted by other code (a changed tokenizer, a new import grammar) are never read back.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => files(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=rust");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let mut all = Vec::new();
    files(Path::new("rust"), &mut all);
    all.push(PathBuf::from("Cargo.lock"));
    all.sort();
    // SipHash with fixed keys: the same sources give the same identity on every machine.
    let mut h = DefaultHasher::new();
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    for p in &all {
        h.write(p.to_string_lossy().as_bytes());
        h.write(&std::fs::read(p).unwrap_or_default());
    }
    println!(
        "cargo:rustc-env=REPOCTX_BUILD_ID={}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        h.finish()
    );
}
