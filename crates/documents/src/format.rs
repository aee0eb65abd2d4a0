//! Which kind of document a file is: by its first bytes where the format has a signature (PDF,
//! ZIP-based DOCX), else by its name's extension.

use std::path::Path;

/// The formats Confab reads as documents.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DocumentFormat {
    Pdf,
    Docx,
    Html,
    Markdown,
    Text,
    Csv {
        /// `b'\t'` for TSV.
        delimiter: u8,
    },
    /// Source code, with its language as people name it ("Rust", "Python").
    Code {
        language: String,
    },
}

/// Source files by extension: (extension, language as people name it, Markdown fence tag).
const CODE_LANGUAGES: &[(&str, &str, &str)] = &[
    ("rs", "Rust", "rust"),
    ("py", "Python", "python"),
    ("pyi", "Python", "python"),
    ("js", "JavaScript", "javascript"),
    ("mjs", "JavaScript", "javascript"),
    ("cjs", "JavaScript", "javascript"),
    ("jsx", "JavaScript (JSX)", "jsx"),
    ("ts", "TypeScript", "typescript"),
    ("tsx", "TypeScript (TSX)", "tsx"),
    ("go", "Go", "go"),
    ("c", "C", "c"),
    ("h", "C", "c"),
    ("cc", "C++", "cpp"),
    ("cpp", "C++", "cpp"),
    ("cxx", "C++", "cpp"),
    ("hpp", "C++", "cpp"),
    ("hh", "C++", "cpp"),
    ("m", "Objective-C", "objectivec"),
    ("mm", "Objective-C++", "objectivec"),
    ("java", "Java", "java"),
    ("kt", "Kotlin", "kotlin"),
    ("kts", "Kotlin", "kotlin"),
    ("scala", "Scala", "scala"),
    ("swift", "Swift", "swift"),
    ("cs", "C#", "csharp"),
    ("fs", "F#", "fsharp"),
    ("rb", "Ruby", "ruby"),
    ("php", "PHP", "php"),
    ("pl", "Perl", "perl"),
    ("lua", "Lua", "lua"),
    ("r", "R", "r"),
    ("jl", "Julia", "julia"),
    ("hs", "Haskell", "haskell"),
    ("ml", "OCaml", "ocaml"),
    ("ex", "Elixir", "elixir"),
    ("exs", "Elixir", "elixir"),
    ("erl", "Erlang", "erlang"),
    ("clj", "Clojure", "clojure"),
    ("dart", "Dart", "dart"),
    ("zig", "Zig", "zig"),
    ("nim", "Nim", "nim"),
    ("sh", "Shell", "sh"),
    ("bash", "Bash", "bash"),
    ("zsh", "Zsh", "zsh"),
    ("fish", "Fish", "fish"),
    ("ps1", "PowerShell", "powershell"),
    ("bat", "Batch", "bat"),
    ("sql", "SQL", "sql"),
    ("css", "CSS", "css"),
    ("scss", "SCSS", "scss"),
    ("less", "Less", "less"),
    ("vue", "Vue", "vue"),
    ("svelte", "Svelte", "svelte"),
    ("json", "JSON", "json"),
    ("jsonl", "JSON Lines", "json"),
    ("yaml", "YAML", "yaml"),
    ("yml", "YAML", "yaml"),
    ("toml", "TOML", "toml"),
    ("ini", "INI", "ini"),
    ("xml", "XML", "xml"),
    ("proto", "Protocol Buffers", "protobuf"),
    ("graphql", "GraphQL", "graphql"),
    ("tex", "LaTeX", "latex"),
    ("cmake", "CMake", "cmake"),
    ("gradle", "Gradle", "groovy"),
    ("dockerfile", "Dockerfile", "dockerfile"),
    ("makefile", "Makefile", "makefile"),
];

const MARKDOWN_EXTENSIONS: [&str; 4] = ["md", "markdown", "mdown", "mkd"];
const TEXT_EXTENSIONS: [&str; 5] = ["txt", "text", "log", "rst", "org"];
const HTML_EXTENSIONS: [&str; 3] = ["html", "htm", "xhtml"];

/// A file's extension, lowercased; a few extensionless names (Dockerfile, Makefile) stand for
/// their own.
pub(crate) fn extension_of(name: &str) -> String {
    let path = Path::new(name);
    match path.extension().and_then(|e| e.to_str()) {
        Some(extension) => extension.to_ascii_lowercase(),
        None => {
            let stem = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
            if stem == "dockerfile" || stem == "makefile" {
                stem
            } else {
                String::new()
            }
        }
    }
}

impl DocumentFormat {
    /// The formats, as messages list them.
    pub const ACCEPTED: &'static str = "PDF, DOCX, HTML, Markdown, plain text, CSV or source code";

    /// The format a file's name promises, or `None` when the name is not a document's.
    pub fn of_name(name: &str) -> Option<Self> {
        let extension = extension_of(name);
        let extension = extension.as_str();
        if extension == "pdf" {
            return Some(DocumentFormat::Pdf);
        }
        if extension == "docx" {
            return Some(DocumentFormat::Docx);
        }
        if HTML_EXTENSIONS.contains(&extension) {
            return Some(DocumentFormat::Html);
        }
        if MARKDOWN_EXTENSIONS.contains(&extension) {
            return Some(DocumentFormat::Markdown);
        }
        if TEXT_EXTENSIONS.contains(&extension) {
            return Some(DocumentFormat::Text);
        }
        if extension == "csv" {
            return Some(DocumentFormat::Csv { delimiter: b',' });
        }
        if extension == "tsv" {
            return Some(DocumentFormat::Csv { delimiter: b'\t' });
        }
        CODE_LANGUAGES
            .iter()
            .find(|(e, _, _)| *e == extension)
            .map(|(_, language, _)| DocumentFormat::Code { language: (*language).to_string() })
    }

    /// The format of these bytes named `name`: a signature wins over the name (a PDF saved as
    /// `.txt` is still a PDF).
    pub fn detect(name: &str, bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"%PDF-") {
            return Some(DocumentFormat::Pdf);
        }
        Self::of_name(name)
    }

    /// The MIME type to store a document of this format under.
    pub fn mime(&self) -> &'static str {
        match self {
            DocumentFormat::Pdf => "application/pdf",
            DocumentFormat::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            DocumentFormat::Html => "text/html",
            DocumentFormat::Markdown => "text/markdown",
            DocumentFormat::Text => "text/plain",
            DocumentFormat::Csv { delimiter: b'\t' } => "text/tab-separated-values",
            DocumentFormat::Csv { .. } => "text/csv",
            DocumentFormat::Code { .. } => "text/x-source",
        }
    }

    /// Whether a stored attachment's MIME type (`mime` above) is a document's.
    pub fn is_document_mime(mime: &str) -> bool {
        mime.starts_with("text/") || mime == "application/pdf" || mime == Self::Docx.mime()
    }

    /// The format as a person names it ("PDF", "Rust source").
    pub fn label(&self) -> String {
        match self {
            DocumentFormat::Pdf => "PDF".into(),
            DocumentFormat::Docx => "Word document".into(),
            DocumentFormat::Html => "HTML".into(),
            DocumentFormat::Markdown => "Markdown".into(),
            DocumentFormat::Text => "text".into(),
            DocumentFormat::Csv { delimiter: b'\t' } => "TSV".into(),
            DocumentFormat::Csv { .. } => "CSV".into(),
            DocumentFormat::Code { language } => format!("{language} source"),
        }
    }
}

/// The Markdown fence tag of a language named by `CODE_LANGUAGES`.
pub(crate) fn fence_tag(language: &str) -> &'static str {
    CODE_LANGUAGES.iter().find(|(_, l, _)| *l == language).map_or("", |(_, _, tag)| tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_signatures() {
        assert_eq!(DocumentFormat::of_name("Report.PDF"), Some(DocumentFormat::Pdf));
        assert_eq!(DocumentFormat::of_name("main.rs"), Some(DocumentFormat::Code { language: "Rust".into() }));
        assert_eq!(DocumentFormat::of_name("Dockerfile"), Some(DocumentFormat::Code { language: "Dockerfile".into() }));
        assert_eq!(DocumentFormat::of_name("data.tsv"), Some(DocumentFormat::Csv { delimiter: b'\t' }));
        assert_eq!(DocumentFormat::of_name("photo.png"), None);
        assert_eq!(DocumentFormat::of_name("README"), None);
        assert_eq!(DocumentFormat::detect("notes.txt", b"%PDF-1.7\n"), Some(DocumentFormat::Pdf));
        assert_eq!(fence_tag("C++"), "cpp");
        for format in [DocumentFormat::Pdf, DocumentFormat::Docx, DocumentFormat::Code { language: "Go".into() }] {
            assert!(DocumentFormat::is_document_mime(format.mime()));
        }
        assert!(!DocumentFormat::is_document_mime("image/png") && !DocumentFormat::is_document_mime("video/gif"));
    }
}
