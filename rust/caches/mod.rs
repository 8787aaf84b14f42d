//! The context engine's caches: build and verified load of a cache's documents (`cache`, on the
//! I/O threads of `pool`), when a view held in memory is still true (`fresh`), scoring and
//! budgeted selection over that view (`select`), and the contract's words and token counts
//! (`tokens`).

pub mod cache;
pub mod fresh;
pub mod pool;
pub mod select;
pub mod tokens;
