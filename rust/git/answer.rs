//! The one failure of git's view (`CannotTell`) and the result every step of a question returns.

/// Why a question has no answer: git could not tell either, or we refuse to look.
#[derive(Debug)]
pub struct CannotTell;

pub(super) type Answer<T> = Result<T, CannotTell>;

pub(super) fn cannot<T>(_: T) -> CannotTell {
    CannotTell
}
