//! What source files say, language by language: which language (and which kind of file) a
//! name is, the import grammar of each language (`imports`, shared by `init` and `project
//! scan`), the extractors of purposes and exported signatures (`extract`, over the
//! per-language scanners `python`, `rust`, `go`, `js`, the `scanner` they fill and the
//! comment readers of `text`), and the lexer (`lexer`) with the definitions found on it
//! (`defs` line by line, `spans` over a whole file) that annotations and task context use.

pub mod defs;
pub mod extract;
mod go;
pub mod imports;
mod js;
pub mod lexer;
mod python;
mod rust;
mod scanner;
pub mod spans;
pub mod symbols;
mod text;

use imports::Grammar;

/// How a file is read: as code (Python, Rust, TypeScript, JavaScript, Go, Java), else by its
/// comment syntax (`#`, `//` and `/* */`, `--`, `<!-- -->`) or its kind of text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lang {
    Python,
    Rust,
    TypeScript,
    JavaScript,
    Go,
    Java,
    Hash,
    Slash,
    Dash,
    Markdown,
    Markup,
    Rst,
    Text,
    Json,
    Other,
}

/// (extension or file name, label, scanner, language name for the project's language).
const KINDS: &[(&str, &str, Lang, &str)] = &[
    ("py", "Python module", Lang::Python, "python"),
    ("pyi", "Python type stubs", Lang::Python, "python"),
    ("rs", "Rust module", Lang::Rust, "rust"),
    ("ts", "TypeScript module", Lang::TypeScript, "typescript"),
    (
        "tsx",
        "TypeScript React component",
        Lang::TypeScript,
        "typescript",
    ),
    ("mts", "TypeScript module", Lang::TypeScript, "typescript"),
    ("cts", "TypeScript module", Lang::TypeScript, "typescript"),
    ("js", "JavaScript module", Lang::JavaScript, "javascript"),
    (
        "jsx",
        "JavaScript React component",
        Lang::JavaScript,
        "javascript",
    ),
    ("mjs", "JavaScript module", Lang::JavaScript, "javascript"),
    ("cjs", "JavaScript module", Lang::JavaScript, "javascript"),
    ("go", "Go source", Lang::Go, "go"),
    ("java", "Java source", Lang::Java, "java"),
    ("kt", "Kotlin source", Lang::Slash, "kotlin"),
    ("kts", "Kotlin script", Lang::Slash, "kotlin"),
    ("c", "C source", Lang::Slash, "c"),
    ("h", "C header", Lang::Slash, "c"),
    ("cpp", "C++ source", Lang::Slash, "c++"),
    ("cc", "C++ source", Lang::Slash, "c++"),
    ("hpp", "C++ header", Lang::Slash, "c++"),
    ("cs", "C# source", Lang::Slash, "c#"),
    ("swift", "Swift source", Lang::Slash, "swift"),
    ("scala", "Scala source", Lang::Slash, "scala"),
    ("php", "PHP source", Lang::Slash, "php"),
    ("rb", "Ruby source", Lang::Hash, "ruby"),
    ("ex", "Elixir source", Lang::Hash, "elixir"),
    ("exs", "Elixir script", Lang::Hash, "elixir"),
    ("hs", "Haskell source", Lang::Dash, "haskell"),
    ("lua", "Lua script", Lang::Dash, "lua"),
    ("r", "R script", Lang::Hash, "r"),
    ("sql", "SQL script", Lang::Dash, ""),
    ("sh", "Shell script", Lang::Hash, "shell"),
    ("bash", "Shell script", Lang::Hash, "shell"),
    ("zsh", "Shell script", Lang::Hash, "shell"),
    ("yaml", "YAML configuration", Lang::Hash, ""),
    ("yml", "YAML configuration", Lang::Hash, ""),
    ("toml", "TOML configuration", Lang::Hash, ""),
    ("json", "JSON data", Lang::Json, ""),
    ("xml", "XML document", Lang::Markup, ""),
    ("html", "HTML page", Lang::Markup, ""),
    ("css", "Stylesheet", Lang::Slash, ""),
    ("scss", "Stylesheet", Lang::Slash, ""),
    ("md", "Markdown document", Lang::Markdown, ""),
    ("mdx", "MDX document", Lang::Markdown, ""),
    ("rst", "reStructuredText document", Lang::Rst, ""),
    ("txt", "Text file", Lang::Text, ""),
    ("vue", "Vue component", Lang::Markup, "javascript"),
    ("svelte", "Svelte component", Lang::Markup, "javascript"),
    ("tf", "Terraform configuration", Lang::Hash, "hcl"),
    ("hcl", "HCL configuration", Lang::Hash, "hcl"),
    ("dockerfile", "Container build file", Lang::Hash, ""),
    ("graphql", "GraphQL schema", Lang::Hash, ""),
    ("gql", "GraphQL schema", Lang::Hash, ""),
    ("proto", "Protocol Buffers definitions", Lang::Slash, ""),
    ("Dockerfile", "Container build file", Lang::Hash, ""),
    ("Makefile", "Build rules (make)", Lang::Hash, ""),
    ("CMakeLists.txt", "CMake build rules", Lang::Hash, ""),
    ("Cargo.toml", "Rust crate manifest", Lang::Hash, ""),
    ("go.mod", "Go module definition", Lang::Other, ""),
    ("pyproject.toml", "Python project metadata", Lang::Hash, ""),
    ("package.json", "npm package manifest", Lang::Json, ""),
    ("Gemfile", "Ruby dependencies", Lang::Hash, ""),
    ("Rakefile", "Ruby build tasks", Lang::Hash, ""),
];

/// The label a file gets when nothing more specific can be said of it.
pub const FALLBACK_LABEL: &str = "Source file";

/// Every label, for telling a generic purpose from a written one.
pub fn labels() -> Vec<&'static str> {
    let mut all: Vec<&str> = KINDS.iter().map(|k| k.1).collect();
    all.push(FALLBACK_LABEL);
    all.sort();
    all.dedup();
    all
}

/// The (label, scanner, language name) of a file name: by its whole name, else its extension.
pub fn kind_of(name: &str) -> (&'static str, Lang, &'static str) {
    if let Some(k) = KINDS.iter().find(|k| k.0 == name) {
        return (k.1, k.2, k.3);
    }
    let ext = match name.rfind('.') {
        Some(i) => name[i + 1..].to_ascii_lowercase(),
        None => return (FALLBACK_LABEL, Lang::Other, ""),
    };
    match KINDS.iter().find(|k| k.0 == ext) {
        Some(k) => (k.1, k.2, k.3),
        None => (FALLBACK_LABEL, Lang::Other, ""),
    }
}

/// The language a file is lexed as, by its extension; None for files that are never lexed
/// (annotations are read only from these files, definitions only from code among them).
pub fn lang_of(path: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    Some(match ext.to_ascii_lowercase().as_str() {
        "py" | "pyi" => Lang::Python,
        "rs" => Lang::Rust,
        "go" => Lang::Go,
        "ts" | "tsx" | "mts" | "cts" => Lang::TypeScript,
        "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
        "java" => Lang::Java,
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "kt" | "kts" | "cs" | "swift"
        | "scala" | "php" | "dart" | "proto" => Lang::Slash,
        "sh" | "bash" | "zsh" | "rb" | "yaml" | "yml" | "toml" | "r" | "pl" => Lang::Hash,
        "sql" | "lua" | "hs" => Lang::Dash,
        "md" => Lang::Markdown,
        "html" | "htm" | "xml" | "vue" | "svelte" => Lang::Markup,
        _ => return None,
    })
}

/// Whether files of `lang` are read as code (exports and imports), not only for a header.
pub fn is_code(lang: Lang) -> bool {
    matches!(
        lang,
        Lang::Python | Lang::Rust | Lang::TypeScript | Lang::JavaScript | Lang::Go
    )
}

/// The import grammar of a language, if it has one.
pub fn grammar(lang: Lang) -> Option<Grammar> {
    match lang {
        Lang::Python => Some(Grammar::Python),
        Lang::Rust => Some(Grammar::Rust),
        Lang::Go => Some(Grammar::Go),
        Lang::TypeScript | Lang::JavaScript => Some(Grammar::Js),
        _ => None,
    }
}

/// Whether a file's name says it holds tests, by its language's convention.
pub fn is_test_name(name: &str, lang: Lang) -> bool {
    match lang {
        Lang::Python => {
            name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py"
        }
        Lang::Go => name.ends_with("_test.go"),
        Lang::TypeScript | Lang::JavaScript => name.contains(".test.") || name.contains(".spec."),
        _ => false,
    }
}

/// Directories whose files are tests.
const TEST_DIRS: &[&str] = &["tests", "test", "__tests__", "spec", "testing"];

/// Whether a file holds tests, by its path (`rel`, with `/`), in any language: a name such as
/// `test_x.py`, `x_test.go`, `x.test.ts` or `x.spec.js`, or a directory such as `tests/`.
pub fn is_test_path(rel: &str) -> bool {
    let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let stem = name.split('.').next().unwrap_or(name);
    if name.starts_with("test_")
        || stem.ends_with("_test")
        || name.contains(".test.")
        || name.contains(".spec.")
    {
        return true;
    }
    dirs.split('/').any(|d| TEST_DIRS.contains(&d))
}

/// The names a test file of `name` would have, by its language's convention (None: the
/// language has none).
pub fn test_names(name: &str, lang: Lang) -> Option<Vec<String>> {
    let (stem, ext) = name.rsplit_once('.')?;
    Some(match lang {
        Lang::Python => vec![format!("test_{}.py", stem), format!("{}_test.py", stem)],
        Lang::Go => vec![format!("{}_test.go", stem)],
        Lang::TypeScript | Lang::JavaScript => vec![
            format!("{}.test.{}", stem, ext),
            format!("{}.spec.{}", stem, ext),
        ],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_by_extension() {
        assert_eq!(lang_of("src/a.PY"), Some(Lang::Python));
        assert_eq!(lang_of("web/app.tsx"), Some(Lang::TypeScript));
        assert_eq!(lang_of("Makefile"), None);
        assert_eq!(lang_of("a.bin"), None);
    }

    #[test]
    fn test_paths_by_name_or_directory() {
        for t in [
            "tests/a.rs",
            "pkg/tests/fixtures/x.py",
            "test_a.py",
            "a/b_test.go",
            "web/x.test.ts",
            "x.spec.js",
            "src/testing/h.rs",
            "__tests__/a.js",
        ] {
            assert!(is_test_path(t), "{t}");
        }
        for t in [
            "src/latest.rs",
            "contest/a.py",
            "testdata.py",
            "a/tested.go",
            "src/spec.rs",
        ] {
            assert!(!is_test_path(t), "{t}");
        }
    }
}
