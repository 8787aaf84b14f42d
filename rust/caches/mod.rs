//! The context engine's caches: build and verified load of a cache's documents (`cache`),
//! scoring and budgeted selection over a view held in memory (`select`), and the contract's
//! words and token counts (`tokens`).

pub mod cache;
pub mod select;
pub mod tokens;
