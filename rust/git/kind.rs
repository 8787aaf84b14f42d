//! The kinds of entry git compares: a file, an executable, a symlink, a submodule (gitlink).

/// What a tree or index entry is, as `git diff` compares it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    File,
    Exec,
    Link,
    Gitlink,
}
