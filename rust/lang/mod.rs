//! What source files say, language by language: which language (and which kind of file) a
//! name is, the import grammar of each language (`imports`, shared by `init` and `project
//! scan`), the extractors of purposes and exported signatures (`extract`, over the
//! per-language scanners `python`, `rust`, `go`, `js`, the `scanner` they fill and the
//! comment readers of `text`), and the lexer (`lexer`) with the definitions found on it
//! (`defs` line by line, `spans` over a whole file) that annotations and task context use, and
//! a file's `outline` made of them. `FILE_KINDS` is the one table of what each kind of file is.

pub mod defs;
pub mod extract;
mod go;
pub mod imports;
mod js;
pub mod lexer;
pub mod outline;
mod python;
mod rust;
mod scanner;
pub mod spans;
pub mod symbols;
mod text;

use imports::Grammar;

/// How a file is read: as code whose definitions are found (Python, Rust, TypeScript,
/// JavaScript, Go, Java, C#, C and C++, Dart, Kotlin, Swift, PHP, Ruby, Scala, Elixir, Lua,
/// Haskell, Zig, Perl, R, Julia, OCaml and F#, Erlang, the Lisps, Pascal, Ada, VHDL, Verilog,
/// Fortran, Visual Basic, Vim script, Lean, CoffeeScript, GDScript, the shells, PowerShell,
/// components' scripts), else by its comment syntax (`#`, `//` and `/* */`, `--`, Nix's,
/// `<!-- -->`) or its kind of text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lang {
    Python,
    Rust,
    TypeScript,
    JavaScript,
    Go,
    Java,
    CSharp,
    /// C and C++, headers included.
    C,
    Dart,
    Kotlin,
    Swift,
    Php,
    Ruby,
    Scala,
    Elixir,
    Lua,
    Haskell,
    Zig,
    Perl,
    R,
    Julia,
    /// OCaml and F#.
    Ml,
    Erlang,
    /// Clojure, Emacs Lisp, Common Lisp, Scheme, Racket.
    Lisp,
    /// Pascal and Delphi.
    Pascal,
    Ada,
    Vhdl,
    /// Verilog and SystemVerilog.
    Verilog,
    Fortran,
    /// Visual Basic (.NET and 6).
    Basic,
    Vim,
    Lean,
    Coffee,
    /// Godot's GDScript.
    GdScript,
    /// sh, Bash, zsh and ksh.
    Shell,
    PowerShell,
    /// Vue, Svelte and Astro components: markup whose `<script>` blocks (and an Astro
    /// component's `---` frontmatter) are TypeScript, lexed and cut as TypeScript.
    Component,
    Hash,
    Slash,
    Dash,
    /// Nix's `#` and `/* */`, and its `''` strings.
    Nix,

    Markdown,
    Markup,
    Rst,
    Text,
    Json,
    Other,
}

/// What repoctx knows of one kind of file, found by its whole name or its extension: the one
/// table init, project scan, scopes and task context read (Python through `_core.file_kinds`).
#[derive(Debug, Clone, Copy)]
pub struct FileKind {
    /// A lowercase extension without its dot, or a whole file name.
    pub key: &'static str,
    /// What a file of this kind is, when nothing more specific can be said of it.
    pub label: &'static str,
    /// How it is read: the lexer's syntax, the purpose and export scanner.
    pub lang: Lang,
    /// The language (or format) people name it by, "" for none: "Python", "C++", "YAML".
    pub language: &'static str,
    /// A programming language: modules are made of its files, and it names a project's language
    /// (init's `project.language`, project scan's stack); a format, a markup or a build file is not.
    pub code: bool,
    /// The import grammar its imports are read by.
    pub imports: Option<Grammar>,
}

impl FileKind {
    const fn imports(self, g: Grammar) -> Self {
        FileKind {
            imports: Some(g),
            ..self
        }
    }
}

const fn grammar_of_lang(lang: Lang) -> Option<Grammar> {
    match lang {
        Lang::Python => Some(Grammar::Python),
        Lang::Rust => Some(Grammar::Rust),
        Lang::Go => Some(Grammar::Go),
        Lang::TypeScript | Lang::JavaScript => Some(Grammar::Js),
        _ => None,
    }
}

const fn row(
    key: &'static str,
    label: &'static str,
    lang: Lang,
    language: &'static str,
    code: bool,
) -> FileKind {
    FileKind {
        key,
        label,
        lang,
        language,
        code,
        imports: grammar_of_lang(lang),
    }
}

/// A file of a programming language.
const fn code(
    key: &'static str,
    label: &'static str,
    lang: Lang,
    language: &'static str,
) -> FileKind {
    row(key, label, lang, language, true)
}

/// A file of a format, a markup or a build file.
const fn text(
    key: &'static str,
    label: &'static str,
    lang: Lang,
    language: &'static str,
) -> FileKind {
    row(key, label, lang, language, false)
}

/// Every kind of file repoctx tells apart. Vue, Svelte and Astro components are markup whose
/// scripts are TypeScript: their imports are read by the JavaScript grammar.
pub const FILE_KINDS: &[FileKind] = &[
    code("py", "Python module", Lang::Python, "Python"),
    code("pyi", "Python type stubs", Lang::Python, "Python"),
    code("rs", "Rust module", Lang::Rust, "Rust"),
    code("ts", "TypeScript module", Lang::TypeScript, "TypeScript"),
    code(
        "tsx",
        "TypeScript React component",
        Lang::TypeScript,
        "TypeScript",
    ),
    code("mts", "TypeScript module", Lang::TypeScript, "TypeScript"),
    code("cts", "TypeScript module", Lang::TypeScript, "TypeScript"),
    code("js", "JavaScript module", Lang::JavaScript, "JavaScript"),
    code(
        "jsx",
        "JavaScript React component",
        Lang::JavaScript,
        "JavaScript",
    ),
    code("mjs", "JavaScript module", Lang::JavaScript, "JavaScript"),
    code("cjs", "JavaScript module", Lang::JavaScript, "JavaScript"),
    code("vue", "Vue component", Lang::Component, "Vue").imports(Grammar::Js),
    code("svelte", "Svelte component", Lang::Component, "Svelte").imports(Grammar::Js),
    code("astro", "Astro component", Lang::Component, "Astro").imports(Grammar::Js),
    code("go", "Go source", Lang::Go, "Go"),
    code("java", "Java source", Lang::Java, "Java"),
    code("kt", "Kotlin source", Lang::Kotlin, "Kotlin"),
    code("kts", "Kotlin script", Lang::Kotlin, "Kotlin"),
    code("c", "C source", Lang::C, "C"),
    code("h", "C header", Lang::C, "C"),
    code("cpp", "C++ source", Lang::C, "C++"),
    code("cc", "C++ source", Lang::C, "C++"),
    code("cxx", "C++ source", Lang::C, "C++"),
    code("hpp", "C++ header", Lang::C, "C++"),
    code("hh", "C++ header", Lang::C, "C++"),
    code("cs", "C# source", Lang::CSharp, "C#"),
    code("swift", "Swift source", Lang::Swift, "Swift"),
    code("scala", "Scala source", Lang::Scala, "Scala"),
    code("php", "PHP source", Lang::Php, "PHP"),
    code("dart", "Dart source", Lang::Dart, "Dart"),
    code("rb", "Ruby source", Lang::Ruby, "Ruby"),
    code("ex", "Elixir source", Lang::Elixir, "Elixir"),
    code("exs", "Elixir script", Lang::Elixir, "Elixir"),
    code("hs", "Haskell source", Lang::Haskell, "Haskell"),
    code("lua", "Lua script", Lang::Lua, "Lua"),
    code("zig", "Zig source", Lang::Zig, "Zig"),
    code("jl", "Julia source", Lang::Julia, "Julia"),
    code("r", "R script", Lang::R, "R"),
    code("pl", "Perl script", Lang::Perl, "Perl"),
    code("pm", "Perl module", Lang::Perl, "Perl"),
    code("cu", "CUDA source", Lang::C, "CUDA"),
    code("cuh", "CUDA header", Lang::C, "CUDA"),
    code("hxx", "C++ header", Lang::C, "C++"),
    code("ipp", "C++ header", Lang::C, "C++"),
    code("inl", "C++ header", Lang::C, "C++"),
    code("ml", "OCaml source", Lang::Ml, "OCaml"),
    code("mli", "OCaml interface", Lang::Ml, "OCaml"),
    code("fs", "F# source", Lang::Ml, "F#"),
    code("fsi", "F# signature", Lang::Ml, "F#"),
    code("fsx", "F# script", Lang::Ml, "F#"),
    code("erl", "Erlang source", Lang::Erlang, "Erlang"),
    code("hrl", "Erlang header", Lang::Erlang, "Erlang"),
    code("clj", "Clojure source", Lang::Lisp, "Clojure"),
    code("cljs", "ClojureScript source", Lang::Lisp, "Clojure"),
    code("cljc", "Clojure source", Lang::Lisp, "Clojure"),
    code("el", "Emacs Lisp source", Lang::Lisp, "Emacs Lisp"),
    code("lisp", "Lisp source", Lang::Lisp, "Common Lisp"),
    code("scm", "Scheme source", Lang::Lisp, "Scheme"),
    code("rkt", "Racket source", Lang::Lisp, "Racket"),
    // Languages written as another is: their definitions are read by its grammar.
    code("cr", "Crystal source", Lang::Ruby, "Crystal"),
    code("rake", "Rake tasks", Lang::Ruby, "Ruby"),
    code("elm", "Elm source", Lang::Haskell, "Elm"),
    code("purs", "PureScript source", Lang::Haskell, "PureScript"),
    code("bzl", "Starlark module", Lang::Python, "Starlark"),
    code("star", "Starlark module", Lang::Python, "Starlark"),
    code("pyx", "Cython module", Lang::Python, "Cython"),
    code("pxd", "Cython declarations", Lang::Python, "Cython"),
    code("mojo", "Mojo source", Lang::Python, "Mojo"),
    code("gd", "GDScript source", Lang::GdScript, "GDScript"),
    code("sh", "Shell script", Lang::Shell, "Shell"),
    code("bash", "Shell script", Lang::Shell, "Shell"),
    code("zsh", "Shell script", Lang::Shell, "Shell"),
    code("ksh", "Shell script", Lang::Shell, "Shell"),
    code("zsh-theme", "zsh theme", Lang::Shell, "Shell"),
    code("ps1", "PowerShell script", Lang::PowerShell, "PowerShell"),
    code("psm1", "PowerShell module", Lang::PowerShell, "PowerShell"),
    code("ino", "Arduino sketch", Lang::C, "C++"),
    code("fnl", "Fennel source", Lang::Lisp, "Fennel"),
    // Code whose definitions are not read: cut into windows, its comments lexed.
    code("m", "Objective-C source", Lang::Slash, "Objective-C"),
    code("mm", "Objective-C++ source", Lang::Slash, "Objective-C"),
    code("groovy", "Groovy source", Lang::Slash, "Groovy"),
    code("sol", "Solidity source", Lang::Slash, "Solidity"),
    code("gleam", "Gleam source", Lang::Slash, "Gleam"),
    code("nim", "Nim source", Lang::Hash, "Nim"),
    code("d", "D source", Lang::Slash, "D"),
    code("hx", "Haxe source", Lang::Slash, "Haxe"),
    code("v", "Verilog source", Lang::Verilog, "Verilog"),
    code("vh", "Verilog header", Lang::Verilog, "Verilog"),
    code("sv", "SystemVerilog source", Lang::Verilog, "SystemVerilog"),
    code(
        "svh",
        "SystemVerilog header",
        Lang::Verilog,
        "SystemVerilog",
    ),
    code("vhd", "VHDL source", Lang::Vhdl, "VHDL"),
    code("vhdl", "VHDL source", Lang::Vhdl, "VHDL"),
    code("ads", "Ada specification", Lang::Ada, "Ada"),
    code("adb", "Ada body", Lang::Ada, "Ada"),
    code("f", "Fortran source", Lang::Fortran, "Fortran"),
    code("f90", "Fortran source", Lang::Fortran, "Fortran"),
    code("f95", "Fortran source", Lang::Fortran, "Fortran"),
    code("f03", "Fortran source", Lang::Fortran, "Fortran"),
    code("f08", "Fortran source", Lang::Fortran, "Fortran"),
    code("pas", "Pascal unit", Lang::Pascal, "Pascal"),
    code("dpr", "Delphi program", Lang::Pascal, "Pascal"),
    code("lpr", "Lazarus program", Lang::Pascal, "Pascal"),
    code("vb", "Visual Basic source", Lang::Basic, "Visual Basic"),
    code("bas", "Visual Basic module", Lang::Basic, "Visual Basic"),
    code("nix", "Nix expression", Lang::Nix, "Nix"),
    code("vim", "Vim script", Lang::Vim, "Vim script"),
    code("lean", "Lean source", Lang::Lean, "Lean"),
    code("tcl", "Tcl script", Lang::Hash, "Tcl"),
    code(
        "coffee",
        "CoffeeScript source",
        Lang::Coffee,
        "CoffeeScript",
    ),
    code("raku", "Raku source", Lang::Hash, "Raku"),
    code("rakumod", "Raku module", Lang::Hash, "Raku"),
    code("odin", "Odin source", Lang::Slash, "Odin"),
    code("move", "Move source", Lang::Slash, "Move"),
    code("glsl", "GLSL shader", Lang::Slash, "GLSL"),
    code("vert", "GLSL shader", Lang::Slash, "GLSL"),
    code("frag", "GLSL shader", Lang::Slash, "GLSL"),
    code("hlsl", "HLSL shader", Lang::Slash, "HLSL"),
    code("wgsl", "WGSL shader", Lang::Slash, "WGSL"),
    code("metal", "Metal shader", Lang::Slash, "Metal"),
    code(
        "gdshader",
        "Godot shader",
        Lang::Slash,
        "Godot shading language",
    ),
    code("fish", "fish script", Lang::Hash, "Shell"),
    code("asm", "Assembly source", Lang::Slash, "Assembly"),
    code("s", "Assembly source", Lang::Slash, "Assembly"),
    text("sql", "SQL script", Lang::Dash, "SQL"),
    text("yaml", "YAML configuration", Lang::Hash, "YAML"),
    text("yml", "YAML configuration", Lang::Hash, "YAML"),
    text("toml", "TOML configuration", Lang::Hash, "TOML"),
    text("json", "JSON data", Lang::Json, "JSON"),
    text("xml", "XML document", Lang::Markup, ""),
    text("html", "HTML page", Lang::Markup, ""),
    text("htm", "HTML page", Lang::Markup, ""),
    text("css", "Stylesheet", Lang::Slash, ""),
    text("scss", "Stylesheet", Lang::Slash, ""),
    text("md", "Markdown document", Lang::Markdown, "Markdown"),
    text("mdx", "MDX document", Lang::Markdown, "Markdown"),
    text("rst", "reStructuredText document", Lang::Rst, ""),
    text("txt", "Text file", Lang::Text, ""),
    text("tf", "Terraform configuration", Lang::Hash, "HCL"),
    text("hcl", "HCL configuration", Lang::Hash, "HCL"),
    text("dockerfile", "Container build file", Lang::Hash, ""),
    text("graphql", "GraphQL schema", Lang::Hash, ""),
    text("gradle", "Gradle build script", Lang::Slash, "Groovy"),
    text("gql", "GraphQL schema", Lang::Hash, ""),
    text("proto", "Protocol Buffers definitions", Lang::Slash, ""),
    text("Dockerfile", "Container build file", Lang::Hash, ""),
    text("Makefile", "Build rules (make)", Lang::Hash, ""),
    text("CMakeLists.txt", "CMake build rules", Lang::Hash, ""),
    text("Cargo.toml", "Rust crate manifest", Lang::Hash, ""),
    text("go.mod", "Go module definition", Lang::Other, ""),
    text("pyproject.toml", "Python project metadata", Lang::Hash, ""),
    text("package.json", "npm package manifest", Lang::Json, ""),
    text("Gemfile", "Ruby dependencies", Lang::Ruby, ""),
    text("Rakefile", "Ruby build tasks", Lang::Ruby, ""),
    text("gemspec", "Ruby gem specification", Lang::Ruby, ""),
    text("podspec", "CocoaPods specification", Lang::Ruby, ""),
    text("Podfile", "CocoaPods dependencies", Lang::Ruby, ""),
    text("Vagrantfile", "Vagrant configuration", Lang::Ruby, ""),
    text("BUILD", "Bazel build file", Lang::Python, ""),
    text("BUILD.bazel", "Bazel build file", Lang::Python, ""),
    text("WORKSPACE", "Bazel workspace", Lang::Python, ""),
    text("MODULE.bazel", "Bazel module", Lang::Python, ""),
    text("meson.build", "Meson build file", Lang::Hash, ""),
    text("GNUmakefile", "Build rules (make)", Lang::Hash, ""),
    text("makefile", "Build rules (make)", Lang::Hash, ""),
    text("mk", "Build rules (make)", Lang::Hash, ""),
    text("cmake", "CMake script", Lang::Hash, ""),
    text("justfile", "Build recipes (just)", Lang::Hash, ""),
    text("Justfile", "Build recipes (just)", Lang::Hash, ""),
    text("Jenkinsfile", "Jenkins pipeline", Lang::Slash, "Groovy"),
    text("sbt", "sbt build definition", Lang::Scala, "Scala"),
    text("cabal", "Cabal package description", Lang::Dash, ""),
    text("dune", "Dune build file", Lang::Lisp, ""),
    text("edn", "EDN data", Lang::Lisp, ""),
    text(
        "psd1",
        "PowerShell module manifest",
        Lang::PowerShell,
        "PowerShell",
    ),
    text("ini", "Configuration file", Lang::Hash, ""),
    text("cfg", "Configuration file", Lang::Hash, ""),
    text("conf", "Configuration file", Lang::Hash, ""),
    text("properties", "Java properties", Lang::Hash, ""),
    text("tfvars", "Terraform variables", Lang::Hash, "HCL"),
    text("less", "Stylesheet", Lang::Slash, ""),
    text("sass", "Stylesheet", Lang::Slash, ""),
    text("styl", "Stylesheet", Lang::Slash, ""),
    text("prisma", "Prisma schema", Lang::Slash, ""),
    text("thrift", "Thrift definitions", Lang::Slash, ""),
    text("jsonnet", "Jsonnet configuration", Lang::Slash, ""),
    text("libsonnet", "Jsonnet library", Lang::Slash, ""),
    text("cue", "CUE configuration", Lang::Slash, ""),
    text("erb", "Ruby template", Lang::Markup, ""),
    text("haml", "Ruby template", Lang::Markup, ""),
    text("slim", "Ruby template", Lang::Markup, ""),
    text("heex", "Elixir template", Lang::Markup, ""),
    text("eex", "Elixir template", Lang::Markup, ""),
    text("leex", "Elixir template", Lang::Markup, ""),
    text("hbs", "Handlebars template", Lang::Markup, ""),
    text("mustache", "Mustache template", Lang::Markup, ""),
    text("ejs", "JavaScript template", Lang::Markup, ""),
    text("pug", "Pug template", Lang::Markup, ""),
    text("njk", "Nunjucks template", Lang::Markup, ""),
    text("j2", "Jinja template", Lang::Markup, ""),
    text("jinja", "Jinja template", Lang::Markup, ""),
    text("twig", "Twig template", Lang::Markup, ""),
    text("liquid", "Liquid template", Lang::Markup, ""),
    text("razor", "Razor component", Lang::Markup, ""),
    text("cshtml", "Razor page", Lang::Markup, ""),
    text("xaml", "XAML markup", Lang::Markup, ""),
    text("csproj", "MSBuild project", Lang::Markup, ""),
    text("fsproj", "MSBuild project", Lang::Markup, ""),
    text("vbproj", "MSBuild project", Lang::Markup, ""),
    text("props", "MSBuild properties", Lang::Markup, ""),
    text("targets", "MSBuild targets", Lang::Markup, ""),
    text("xsd", "XML schema", Lang::Markup, ""),
    text("xsl", "XSLT stylesheet", Lang::Markup, ""),
    text("xslt", "XSLT stylesheet", Lang::Markup, ""),
];

/// The kind a file name falls back to.
const FALLBACK: FileKind = text("", "Source file", Lang::Other, "");

/// The label a file gets when nothing more specific can be said of it.
pub const FALLBACK_LABEL: &str = FALLBACK.label;

/// Every label, for telling a generic purpose from a written one.
pub fn labels() -> Vec<&'static str> {
    let mut all: Vec<&str> = FILE_KINDS.iter().map(|k| k.label).collect();
    all.push(FALLBACK_LABEL);
    all.sort();
    all.dedup();
    all
}

/// The kind of a file name (no directory): by its whole name, else its extension, ignoring case.
pub fn kind_of(name: &str) -> &'static FileKind {
    if let Some(k) = FILE_KINDS.iter().find(|k| k.key == name) {
        return k;
    }
    let Some(i) = name.rfind('.') else {
        return &FALLBACK;
    };
    let ext = name[i + 1..].to_ascii_lowercase();
    FILE_KINDS
        .iter()
        .find(|k| k.key == ext)
        .unwrap_or(&FALLBACK)
}

/// The language a file (a path with `/`) is lexed as; None for files that are never lexed
/// (no comment syntax: JSON, plain text, reStructuredText, unknown kinds). Annotations are read
/// only from these files, definitions only from code among them.
pub fn lang_of(path: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lang = kind_of(name).lang;
    (!matches!(lang, Lang::Rst | Lang::Text | Lang::Json | Lang::Other)).then_some(lang)
}

/// Whether definitions are found in files of `lang` (lang/defs.rs, lang/spans.rs).
pub fn has_definitions(lang: Lang) -> bool {
    !matches!(
        lang,
        Lang::Hash
            | Lang::Slash
            | Lang::Dash
            | Lang::Nix
            | Lang::Markdown
            | Lang::Markup
            | Lang::Rst
            | Lang::Text
            | Lang::Json
            | Lang::Other
    )
}

/// Whether files of `lang` are read as code (exports and imports), not only for a header.
pub fn is_code(lang: Lang) -> bool {
    matches!(
        lang,
        Lang::Python | Lang::Rust | Lang::TypeScript | Lang::JavaScript | Lang::Go
    )
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

/// Directories whose files are tests, named in any case (Swift's `Tests/`).
const TEST_DIRS: &[&str] = &["tests", "test", "__tests__", "spec", "testing"];
/// The endings of a C# test project's directory (`Polly.Core.Tests/`), in any case.
const TEST_PROJECTS: &[&str] = &[".tests", ".test"];

fn is_test_dir(d: &str) -> bool {
    let d = d.as_bytes();
    TEST_DIRS
        .iter()
        .any(|t| d.eq_ignore_ascii_case(t.as_bytes()))
        || TEST_PROJECTS
            .iter()
            .any(|e| d.len() > e.len() && d[d.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes()))
}

/// Whether a file holds tests, by its path (`rel`, with `/`), in any language: a name such as
/// `test_x.py`, `x_test.go`, `x_spec.rb`, `x.test.ts`, `x.spec.js` or PowerShell's
/// `X.Tests.ps1`, or a directory such as
/// `tests/`, `Tests/` or `Foo.Tests/`.
pub fn is_test_path(rel: &str) -> bool {
    let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let stem = name.split('.').next().unwrap_or(name);
    if name.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.contains(".Tests.")
    {
        return true;
    }
    dirs.split('/').any(is_test_dir)
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
        assert_eq!(lang_of("build/Makefile"), Some(Lang::Hash));
        assert_eq!(lang_of("a.json"), None);
        assert_eq!(lang_of("a.bin"), None);
        assert_eq!(kind_of("a.PYI").language, "Python");
        assert_eq!(kind_of("App.vue").imports, Some(Grammar::Js));
        assert!(kind_of("run.sh").code && kind_of("x.kts").code && !kind_of("Makefile").code);
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
            "Tests/SessionTests.swift",
            "src/Polly.Core.Tests/Retry/RetryTests.cs",
            "src/Foo.Test/A.cs",
            "lib/cart_spec.rb",
            "tst/Get-Cart.Tests.ps1",
        ] {
            assert!(is_test_path(t), "{t}");
        }
        for t in [
            "src/latest.rs",
            "contest/a.py",
            "testdata.py",
            "a/tested.go",
            "src/spec.rs",
            "src/Contest/A.cs",
            "src/Polly.Testing/A.cs",
            ".tests/a.cs",
            "lib/rubocop/cop/spec.rb",
            "lib/inspector.rb",
        ] {
            assert!(!is_test_path(t), "{t}");
        }
    }
}
