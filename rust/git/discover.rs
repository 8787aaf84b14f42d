//! Where git metadata may be read (docs/security.md, "git's own files"): the git directory of a
//! worktree, whether gix may open it, and whether a directory holds a repository of its own.

use crate::git::bounds::MAX_GIT_FILE_BYTES;
use crate::git::files::{read_open, read_regular};
use crate::git::paths::{clean_path, os_path, split};
use crate::tree::os::{PlainDir as Dir, Stat as St};
use crate::tree::paths::lexical;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

/// The git directory and the common directory (canonical paths) of the worktree whose top is
/// `top` (canonical), when git's view may read them:
/// - `top/.git` a directory (not a link) with no `commondir`: itself, for both;
/// - `top/.git` a file naming a git directory git made for this worktree: a linked worktree's
///   `<common>/worktrees/<id>`, whose `gitdir` names `top/.git` back and whose `commondir`
///   names `<common>`; or a submodule's `<super>/.git/modules/<name>` of a superproject
///   `<super>` whose worktree holds `top`.
///
/// Anything else (a `.git` link, a gitdir file naming another place, a `commondir` of a
/// repository's own): None, and git's view cannot tell.
pub(super) fn git_dirs(top: &Path) -> Option<(PathBuf, PathBuf)> {
    let dot_git = top.join(".git");
    let md = fs::symlink_metadata(&dot_git).ok()?;
    if md.is_dir() {
        return fs::symlink_metadata(dot_git.join("commondir"))
            .is_err()
            .then(|| (dot_git.clone(), dot_git));
    }
    if !md.is_file() {
        return None;
    }
    let named = |base: &Path, file: &Path| -> Option<PathBuf> {
        let (text, _) = read_regular(file, 64 << 10).ok()?;
        let text = text.strip_prefix(b"gitdir:").unwrap_or(&text).trim_ascii();
        fs::canonicalize(base.join(os_path(text))).ok()
    };
    let git_dir = named(top, &dot_git)?;
    let parent = git_dir.parent()?;
    if parent.file_name() == Some(OsStr::new("worktrees")) {
        let common = parent.parent()?;
        let back = named(&git_dir, &git_dir.join("gitdir"))?;
        let shared = named(&git_dir, &git_dir.join("commondir"))?;
        return (back == dot_git && shared == common)
            .then(|| (git_dir.clone(), common.to_path_buf()));
    }
    let modules = git_dir
        .ancestors()
        .find(|a| a.file_name() == Some(OsStr::new("modules")))?;
    let superproject = modules
        .parent()
        .filter(|p| p.file_name() == Some(OsStr::new(".git")))?
        .parent()?;
    let own = fs::symlink_metadata(git_dir.join("commondir")).is_err();
    (top.starts_with(superproject) && own).then(|| (git_dir.clone(), git_dir))
}

/// Whether a git directory's files can be read by gix without leaving it or hanging: every
/// entry of it and of the directories read when a repository is opened and HEAD resolved
/// (`info`, `objects`, `objects/info`, `objects/pack`, `refs`, `refs/heads`) is a regular file
/// of bounded size (a pack of any), a directory, or a socket (fsmonitor's, never opened): never a link, a
/// FIFO or a device. No `objects/info/alternates` (they name object stores elsewhere). HEAD's
/// branch, reached with no link on the way, is a regular file or absent.
pub(super) fn git_dir_is_sound(dir: &Path) -> bool {
    let Some(top) = Dir::top(dir) else {
        return false;
    };
    // Pack files and their indexes are mapped, never read whole (each object read from them is
    // bounded: git/bounds.rs), and one pack of several GiB is what a fresh clone of a large
    // history has: their size is no reason to stop.
    let sound = |sub: &[u8], st: &St| {
        let bounded = sub == b"objects/pack" || st.size <= MAX_GIT_FILE_BYTES;
        (st.is_file() && bounded) || st.is_dir() || st.is_socket()
    };
    for sub in [
        &b""[..],
        b"info",
        b"objects",
        b"objects/info",
        b"objects/pack",
        b"refs",
        b"refs/heads",
    ] {
        // (each directory's parent was listed first: it is a directory or absent, never a link)
        let Some(d) = top.open(sub) else { continue };
        let mut ok = true;
        d.entries(|name, _| {
            let hooks = sub.is_empty() && name == b"hooks"; // never read; a link to shared hooks is common
            ok &= hooks || d.stat(name).is_none_or(|st| sound(sub, &st));
        });
        if !ok {
            return false;
        }
    }
    if top.stat(b"objects/info/alternates").is_some()
        || top
            .open(b"objects/info")
            .is_some_and(|d| d.stat(b"alternates").is_some())
    {
        return false;
    }
    // HEAD names a branch whose loose file is read next.
    if let Some(head) = top.open_file(b"HEAD").and_then(|f| read_open(f, 4096)) {
        if let Some(name) = head.strip_prefix(b"ref:") {
            let name = name.trim_ascii();
            if !clean_path(name) {
                return false;
            }
            let (parent, file) = split(name);
            if let Some(st) = top.open(parent).and_then(|d| d.stat(file)) {
                return st.is_file() && st.size <= MAX_GIT_FILE_BYTES;
            }
        }
    }
    true
}

/// Whether `dir` is a repository of its own, as git's `is_nonbare_repository_dir` sees it: its
/// `.git` a directory with a valid HEAD, objects and refs, or a file naming one.
/// Nothing outside `within` (the worktree's top) is read: a `.git` file naming a place outside
/// it (a submodule's git directory in the superproject, or anywhere) counts as a repository
/// unread, as git would take a valid one.
pub(super) fn holds_repository(dir: &Path, within: &Path) -> bool {
    let dot_git = dir.join(".git");
    match fs::symlink_metadata(&dot_git) {
        Ok(md) if md.is_dir() => is_git_dir(&dot_git, within),
        Ok(md) if md.is_file() => match read_regular(&dot_git, 64 << 10) {
            Ok((text, _)) => text.strip_prefix(b"gitdir:").is_some_and(|p| {
                let p = lexical(&dir.join(os_path(p.trim_ascii())));
                !p.starts_with(within) || is_git_dir(&p, within)
            }),
            Err(_) => false,
        },
        _ => false,
    }
}

pub(super) fn is_git_dir(dir: &Path, within: &Path) -> bool {
    // (a link on the way out of the worktree: not read, and not a repository)
    if !fs::canonicalize(dir).is_ok_and(|d| d.starts_with(within)) {
        return false;
    }
    let Ok((head, _)) = read_regular(&dir.join("HEAD"), 4096) else {
        return false;
    };
    let head = head.trim_ascii();
    let valid_head = head
        .strip_prefix(b"ref:")
        .is_some_and(|r| r.trim_ascii().starts_with(b"refs/"))
        || (head.len() >= 40 && head.iter().all(u8::is_ascii_hexdigit));
    if !valid_head {
        return false;
    }
    let common = match read_regular(&dir.join("commondir"), 4096) {
        Ok((text, _)) => lexical(&dir.join(os_path(text.trim_ascii()))),
        Err(_) => dir.to_path_buf(),
    };
    common.starts_with(within) && common.join("objects").is_dir() && common.join("refs").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::TempTree;
    use crate::tree::os;
    #[test]
    #[cfg(unix)] // FIFOs and /dev/zero
    fn a_fifo_or_device_in_the_git_directory_is_not_sound() {
        let tree = TempTree::new("git-sound");
        let dir = tree.path().to_path_buf();
        let git = dir.join(".git");
        fs::create_dir_all(git.join("objects/pack")).unwrap();
        fs::create_dir_all(git.join("refs/heads")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(git_dir_is_sound(&git));
        os::symlink("/dev/zero", git.join("config")).unwrap();
        assert!(!git_dir_is_sound(&git));
        fs::remove_file(git.join("config")).unwrap();
        os::make_fifo(&git.join("refs/heads/main"));
        assert!(!git_dir_is_sound(&git), "HEAD's branch is a FIFO");
        fs::remove_file(git.join("refs/heads/main")).unwrap();
        // A FIFO or a link anywhere gix reads from when it opens the repository.
        for place in [
            "sharedindex.0123",
            "packed-refs",
            "info/exclude",
            "objects/info/commit-graph",
            "objects/pack/x.idx",
        ] {
            fs::create_dir_all(git.join(place).parent().unwrap()).unwrap();
            os::make_fifo(&git.join(place));
            assert!(!git_dir_is_sound(&git), "a FIFO at {place}");
            fs::remove_file(git.join(place)).unwrap();
            os::symlink(dir.join("HEAD"), git.join(place)).unwrap();
            assert!(!git_dir_is_sound(&git), "a link at {place}");
            fs::remove_file(git.join(place)).unwrap();
        }
        fs::remove_dir_all(git.join("info")).unwrap();
        os::symlink(&dir, git.join("info")).unwrap();
        assert!(!git_dir_is_sound(&git), "info linked out");
        fs::remove_file(git.join("info")).unwrap();
        fs::write(git.join("objects/info/alternates"), "/elsewhere/objects\n").unwrap();
        assert!(
            !git_dir_is_sound(&git),
            "alternates name another object store"
        );
        fs::remove_file(git.join("objects/info/alternates")).unwrap();
        os::symlink("/shared/hooks", git.join("hooks")).unwrap();
        assert!(git_dir_is_sound(&git), "hooks are never read");
    }

    #[test]
    fn a_pack_of_any_size_is_sound_and_other_files_are_bounded() {
        let tree = TempTree::new("git-sound-big");
        let git = tree.path().join(".git");
        fs::create_dir_all(git.join("objects/pack")).unwrap();
        fs::create_dir_all(git.join("refs/heads")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        // Sparse files: the size without the disk.
        let big = |place: &str| {
            let f = fs::File::create(git.join(place)).unwrap();
            f.set_len(MAX_GIT_FILE_BYTES + 1).unwrap();
        };
        big("objects/pack/pack-x.pack");
        big("objects/pack/pack-x.idx");
        assert!(
            git_dir_is_sound(&git),
            "a large history's pack is read as git reads it"
        );
        big("packed-refs");
        assert!(!git_dir_is_sound(&git), "a file read whole stays bounded");
    }

    #[test]
    fn git_metadata_is_read_only_where_git_itself_puts_it_for_this_worktree() {
        let tree = TempTree::new("git-dirs-rule");
        let base = fs::canonicalize(tree.path()).unwrap();
        let repo = |at: &Path| {
            fs::create_dir_all(at.join("objects")).unwrap();
            fs::create_dir_all(at.join("refs")).unwrap();
            fs::write(at.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        };
        // A worktree of its own.
        repo(&base.join("main/.git"));
        assert_eq!(
            git_dirs(&base.join("main")),
            Some((base.join("main/.git"), base.join("main/.git")))
        );
        // A linked worktree: its gitdir names this `.git` back, its commondir the main one.
        let wt = base.join("main/.git/worktrees/feature");
        fs::create_dir_all(&wt).unwrap();
        fs::create_dir_all(base.join("feature")).unwrap();
        fs::write(
            base.join("feature/.git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        fs::write(
            wt.join("gitdir"),
            format!("{}\n", base.join("feature/.git").display()),
        )
        .unwrap();
        fs::write(wt.join("commondir"), "../..\n").unwrap();
        assert_eq!(
            git_dirs(&base.join("feature")),
            Some((wt.clone(), base.join("main/.git")))
        );
        // Another checkout pointing at that worktree's git directory is not the one it names back.
        fs::create_dir_all(base.join("hostile")).unwrap();
        fs::write(
            base.join("hostile/.git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
        // A submodule: its git directory in the superproject that holds it; another repository's: no.
        let module = base.join("main/.git/modules/lib");
        repo(&module);
        fs::create_dir_all(base.join("main/lib")).unwrap();
        fs::write(base.join("main/lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
        assert_eq!(
            git_dirs(&base.join("main/lib")),
            Some((module.clone(), module.clone()))
        );
        fs::write(
            base.join("hostile/.git"),
            format!("gitdir: {}\n", module.display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
        // Any other place, a commondir of a repository's own, a `.git` link: no.
        repo(&base.join("elsewhere"));
        fs::write(
            base.join("hostile/.git"),
            format!("gitdir: {}\n", base.join("elsewhere").display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
        fs::write(base.join("main/.git/commondir"), "../../elsewhere\n").unwrap();
        assert_eq!(git_dirs(&base.join("main")), None);
        fs::remove_file(base.join("hostile/.git")).unwrap();
        os::symlink(base.join("elsewhere"), base.join("hostile/.git")).unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
    }
}
