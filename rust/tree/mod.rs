//! The repository as a tree of files: which paths count (`ignore`: the one ignore policy of
//! every walk; not the `ignore` crate, which some walks still use to list directories), the
//! parallel walk into a table of directories (`walk`, with dotcontext's `fingerprint`, and each
//! directory's files as it listed them when a reader asks: `listing`, and its running `count` of
//! files for a reader beside it), that table kept true by
//! file-system events (`live` over `watch`), and the one confined way to
//! read and write a repository's files (`fs`), over the vocabulary of paths and names (`paths`,
//! `names`). Every OS call of the core is made in this folder, its differences behind `cfg` in
//! `os`; git/ reads repositories through it.

pub mod count;
pub mod fingerprint;
pub mod fs;
pub mod ignore;
pub mod listing;
pub mod live;
pub mod names;
pub mod os;
pub mod paths;
pub mod scratch;
pub mod walk;
pub mod watch;
