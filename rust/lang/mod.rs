//! What source files say, language by language: the import grammar of each language
//! (`imports`, shared by `init` and `project scan`) and the extractors of purposes and
//! exported signatures (`extract`).

pub mod extract;
pub mod imports;
