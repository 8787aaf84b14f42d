//! The project file's module scan (`modscan`): key files and imports per module.

pub mod modscan;
