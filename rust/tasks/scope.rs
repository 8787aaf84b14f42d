//! The part of a repository a task names at its start, as commit subjects and issue titles
//! write it: `[ty] …`, `fix(angular-query): …`, `caddyhttp: …`. Where a directory of the tree
//! carries that name, the files outside it count for less: in a workspace the other packages
//! say the task's words too (ruff's linter for a `[ty]` task), and the author has said where
//! the change is. A file's own name says it less surely (`fix(http1):` is about hyper's
//! `proto/h1/` more often than its `http1.rs` files): where only names do, the rest count more.

/// How much a file outside the named part keeps of its score, where a directory is named.
pub const OUTSIDE: f32 = 0.5;
/// And where only files' names say the part.
pub const OUTSIDE_NAMED: f32 = 0.75;

/// Scopes that name a kind of change, not a part of the tree (a `docs/` directory holds
/// none of the code a `docs:` commit edits in doc comments).
const KINDS: &[&str] = &[
    "build", "chore", "ci", "deps", "doc", "docs", "feat", "fix", "perf", "refactor", "release",
    "revert", "style", "test", "tests",
];

/// Path words that say where code sits in any tree, not what it is about: no scope
/// (`style(lib):` is about the whole library), and no path word of the task (tasks/rank.rs).
pub const PLUMBING: &[&str] = &["src", "lib", "main", "mod", "index", "init"];

/// The scope a task starts with, lower-cased with `_` as `-`: `[x] `, `kind(x): `, `kind(x)!: `
/// or `x: ` (one word); none for a kind of change, a plumbing name or a scope of several parts
/// (`cli,core`).
pub fn of(task: &str) -> Option<String> {
    let t = task.trim_start();
    let scope = if let Some(rest) = t.strip_prefix('[') {
        &rest[..rest.find(']')?]
    } else {
        let head = &t[..t.find(": ")?];
        match head.find('(') {
            Some(open) => head
                .strip_suffix(')')
                .or_else(|| head.strip_suffix(")!"))?
                .get(open + 1..)?,
            None => head,
        }
    };
    let scope = scope.to_lowercase().replace('_', "-");
    let word = |c: char| c.is_alphanumeric() || c == '-' || c == '.';
    let part = !KINDS.contains(&scope.as_str()) && !PLUMBING.contains(&scope.as_str());
    (!scope.is_empty() && scope.chars().all(word) && part).then_some(scope)
}

/// Whether directory `dir` (`/`-separated from the root) or one above it is the scope, or a
/// name joined of it by `-` or `_` (`helix-term` and `term`, `ty_python_semantic` and `ty`).
pub fn holds(scope: &str, dir: &str) -> bool {
    dir.split('/').any(|d| names(scope, d))
}

/// Whether a file's name before its first `.` is the scope, or joined of it (`encoding.go` for
/// `encoding`, `css.ts` for `css`): a scope names a module as often as a directory.
pub fn is_named(scope: &str, file_name: &str) -> bool {
    names(scope, file_name.split('.').next().unwrap_or(""))
}

/// Whether `scope` (lower-cased, `-` for `_`) is `name` or a part of it between `-`, `_` or
/// an end, compared as `of` made the scope (a million names a question: no copy is made).
fn names(scope: &str, name: &str) -> bool {
    let fold = |b: u8| {
        if b == b'_' {
            b'-'
        } else {
            b.to_ascii_lowercase()
        }
    };
    let (s, n) = (scope.as_bytes(), name.as_bytes());
    let joined = |i: usize| i == 0 || n[i - 1] == b'-' || n[i - 1] == b'_';
    let ends = |i: usize| i == n.len() || n[i] == b'-' || n[i] == b'_';
    n.len() >= s.len()
        && (0..=n.len() - s.len()).any(|i| {
            joined(i)
                && ends(i + s.len())
                && n[i..i + s.len()].iter().zip(s).all(|(&a, &b)| fold(a) == b)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_is_read_in_each_form_commits_write_it() {
        assert_eq!(of("[ty] Fix narrowing").as_deref(), Some("ty"));
        assert_eq!(
            of("feat(angular-query): add devtools theme").as_deref(),
            Some("angular-query")
        );
        assert_eq!(
            of("fix(Caddy_HTTP)!: drop x").as_deref(),
            Some("caddy-http")
        );
        assert_eq!(
            of("caddyhttp: add a placeholder").as_deref(),
            Some("caddyhttp")
        );
        for none in [
            "docs: fix typo",
            "style(lib): remove a lint",
            "fix: the parser",
            "fix(cli,core): x",
            "Fix the parser: it loops",
            "[ty Fix",
            "plain words",
            ": nothing",
        ] {
            assert_eq!(of(none), None, "{none}");
        }
    }

    #[test]
    fn a_directory_holds_the_scope_whole_or_joined() {
        for (scope, path) in [
            ("ty", "crates/ty_python_semantic/src"),
            ("term", "helix-term/src/ui"),
            ("angular-query", "packages/angular-query-experimental/src"),
            ("caddyhttp", "modules/caddyhttp"),
            (
                "flake8-bugbear",
                "crates/ruff_linter/src/rules/flake8_bugbear",
            ),
            ("query", "packages/vue-query-devtools/src"),
        ] {
            assert!(holds(scope, path), "{scope} {path}");
        }
        for (scope, path) in [
            ("ty", "crates/ruff_linter/src/types"),
            ("ty", "."),
            ("term", "helix-terminal/src"),
            ("view", "src/preview"),
        ] {
            assert!(!holds(scope, path), "{scope} {path}");
        }
        assert!(is_named("encoding", "encoding.go"));
        assert!(is_named("vanilla", "vanilla.ts"));
        assert!(is_named("css", "css.test.ts"));
        assert!(!is_named("css", "postcss.ts"));
    }

    /// `names` against the plain reading of it: the name lower-cased with `-` for `_` is the
    /// scope, starts with it and `-`, ends with `-` and it, or holds it between two `-`.
    #[test]
    fn names_agrees_with_its_plain_reading() {
        let oracle = |scope: &str, name: &str| {
            let n = name.to_lowercase().replace('_', "-");
            n == scope
                || n.starts_with(&format!("{scope}-"))
                || n.ends_with(&format!("-{scope}"))
                || n.contains(&format!("-{scope}-"))
        };
        let alphabet = ['a', 'B', 'b', '-', '_'];
        let strings = |len: usize| {
            (0..alphabet.len().pow(len as u32)).map(move |mut k| {
                (0..len)
                    .map(|_| {
                        let c = alphabet[k % alphabet.len()];
                        k /= alphabet.len();
                        c
                    })
                    .collect::<String>()
            })
        };
        for scope in ["a", "ab", "a-b", "b-"] {
            for len in 0..=5 {
                for name in strings(len) {
                    assert_eq!(names(scope, &name), oracle(scope, &name), "{scope} {name}");
                }
            }
        }
    }
}
