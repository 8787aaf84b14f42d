//! How big a task index may grow. Its paths, its lists and its words' and names' text are each
//! one buffer numbered by `u32` offsets (tasks/paths.rs, tasks/arena.rs, tasks/vocab.rs: 4 bytes
//! an offset rather than 8, at one or two offsets a file and a term), so none holds 4 GiB; a
//! tree that would pass that is refused by name (`TooBig`) before the offset is made, not met
//! by a panic: a file as it is read, and as it goes in or out of a held index. Past 4 GiB of
//! lists is about 5 million files of real code.

/// The most bytes a buffer numbered by `u32` offsets holds (lower in the core's own tests, so
/// a small tree meets it).
pub const MOST_BYTES: usize = if cfg!(test) {
    1 << 18
} else {
    u32::MAX as usize
};

/// The index would hold more than `MOST_BYTES` of what it names ("lists", "paths").
#[derive(Debug, PartialEq)]
pub struct TooBig(pub &'static str);

impl std::fmt::Display for TooBig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the task index is over 4 GiB of {}: this tree is too big for task context",
            self.0
        )
    }
}

impl std::error::Error for TooBig {}

impl From<TooBig> for std::io::Error {
    fn from(e: TooBig) -> std::io::Error {
        std::io::Error::other(e)
    }
}
