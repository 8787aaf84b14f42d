//! Contextia's artifacts: annotations in source comments (`annotate`), the annotation index
//! of a tree (`srcindex`), and real BPE token counts for the budgets of bundles and
//! `mcp_context` (`bpe`).

pub mod annotate;
pub mod bpe;
pub mod srcindex;
