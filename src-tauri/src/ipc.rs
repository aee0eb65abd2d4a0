//! The IPC contract in TypeScript. `ui/src/ipc.generated.ts` is written from the Rust types
//! (their `ts_rs::TS` declarations) and from the signatures of the commands in commands/list.rs;
//! ui/src/ipc.ts types every call with it. The test fails when the file is stale:
//! `UPDATE_IPC=1 cargo test -p confab-app ipc` writes it again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ts_rs::{Config, TypeVisitor, TS};

const HEADER: &str = "\
// Generated from the Rust types and the commands in src-tauri/src/commands/list.rs by
// src-tauri/src/ipc.rs. Do not edit: `UPDATE_IPC=1 cargo test -p confab-app ipc` rewrites it.
";

fn bindings_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/ipc.generated.ts")
}

/// Every declaration the window sees, by TypeScript name: the types commands take and return
/// and the events' payloads, with everything they contain.
fn declarations(cfg: &Config) -> BTreeMap<String, String> {
    let mut collect = Collect { cfg, found: BTreeMap::new() };
    // Command arguments and results, channel messages and event payloads ("model-state",
    // "conversation-updated").
    collect.visit::<crate::commands::runtime::RuntimeInfo>();
    collect.visit::<confab_store::ConversationPage>();
    collect.visit::<confab_store::ConversationCursor>();
    collect.visit::<crate::chat::views::MessageView>();
    collect.visit::<confab_store::SearchHit>();
    collect.visit::<crate::chat::reply::ReplyEvent>();
    collect.visit::<crate::models::context_meter::ContextUse>();
    collect.visit::<confab_store::Attachment>();
    collect.visit::<crate::attachments::documents::DocumentInfo>();
    collect.visit::<crate::chat::document_search::IndexProgress>();
    collect.visit::<confab_engine::ModelSummary>();
    collect.visit::<crate::desktop::folders::FolderListing>();
    collect.visit::<crate::models::slot::ModelState>();
    collect.visit::<crate::settings::Settings>();
    collect.visit::<crate::commands::settings::SettingsChoices>();
    collect.visit::<crate::local_server::ServerStatus>();
    collect.visit::<crate::providers::ProvidersView>();
    collect.visit::<crate::providers::ProviderInput>();
    collect.visit::<crate::providers::RemoteChoice>();
    collect.visit::<crate::tools::servers::ToolServersView>();
    collect.visit::<crate::tools::servers::ToolServerInput>();
    collect.visit::<crate::tools::call::ToolDecisionInput>();
    // Get models; "download" events carry a Download.
    collect.visit::<crate::commands::hub::HubSettings>();
    collect.visit::<crate::commands::hub::HubModel>();
    collect.visit::<crate::commands::hub::RepoDetails>();
    collect.visit::<crate::models::downloads::Download>();
    collect.found
}

/// Walks a type and what it contains, keeping the declaration of each named type once.
struct Collect<'a> {
    cfg: &'a Config,
    found: BTreeMap<String, String>,
}

impl TypeVisitor for Collect<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Only derived types have a declaration; `Vec`, `Option` and the like pass through.
        if T::output_path().is_some() {
            let name = T::ident(self.cfg);
            if self.found.contains_key(&name) {
                return;
            }
            let docs = T::docs().unwrap_or_default();
            self.found.insert(name, format!("{docs}export {}", indent_objects(&T::decl(self.cfg))));
        }
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

/// ts-rs writes an object type on one line, with its fields' doc comments between the fields:
/// this puts each field on its own line, indented, with its comment above it.
fn indent_objects(declaration: &str) -> String {
    let (mut out, mut depth, mut angle, mut quoted, mut comment) = (String::new(), 0usize, 0usize, false, false);
    let newline = |out: &mut String, depth: usize| {
        // No blank lines: a comma followed by a comment's own line break makes one break.
        let kept = out.trim_end_matches(' ').len();
        out.truncate(kept);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&"  ".repeat(depth));
    };
    let mut chars = declaration.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if !quoted && !comment && chars.peek() == Some(&'*') => {
                comment = true;
                out.push(c);
            }
            '/' if comment && out.ends_with('*') => {
                comment = false;
                out.push(c);
            }
            '\n' if comment => newline(&mut out, depth),
            ' ' if comment && out.ends_with('\n') => {}
            ' ' if comment && out.ends_with(' ') && out.trim_end_matches(' ').ends_with('\n') => {}
            _ if comment => {
                // A doc comment's continuation lines keep their space before the `*`.
                if c == '*' && out.trim_end_matches(' ').ends_with('\n') {
                    out.push(' ');
                }
                out.push(c);
            }
            '"' => {
                quoted = !quoted;
                out.push(c);
            }
            _ if quoted => out.push(c),
            '{' => {
                depth += 1;
                out.push(c);
                newline(&mut out, depth);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            '<' => {
                angle += 1;
                out.push(c);
            }
            '>' => {
                angle = angle.saturating_sub(1);
                out.push(c);
            }
            ',' if depth > 0 && angle == 0 => {
                out.push(c);
                newline(&mut out, depth);
            }
            '\n' if depth > 0 => newline(&mut out, depth),
            ' ' if out.ends_with(' ') || out.ends_with('\n') => {}
            _ => out.push(c),
        }
    }
    out
}

/// A command as its Rust signature declares it.
struct Command {
    name: String,
    /// TypeScript name and type of each argument the window passes (camelCase, as Tauri takes
    /// them); the state and the app handle Tauri injects are left out.
    args: Vec<(String, String)>,
    result: String,
}

/// Tauri fills these in itself; the window never passes them.
const INJECTED: &[&str] = &["App", "AppHandle", "State", "Window", "WebviewWindow", "Webview"];

/// Every `#[tauri::command]` function in the files of src/commands.
fn commands_in_sources() -> Vec<Command> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read src/commands")
        .map(|entry| entry.expect("list src/commands").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut commands = vec![];
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read a command file");
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for item in parsed.items {
            let syn::Item::Fn(function) = item else { continue };
            if !function.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "command")) {
                continue;
            }
            commands.push(command(&function.sig));
        }
    }
    commands
}

fn command(sig: &syn::Signature) -> Command {
    let mut args = vec![];
    for input in &sig.inputs {
        let syn::FnArg::Typed(arg) = input else { panic!("{}: a command takes no self", sig.ident) };
        if INJECTED.contains(&last_segment(&arg.ty).0.as_str()) {
            continue;
        }
        let syn::Pat::Ident(name) = &*arg.pat else { panic!("{}: name each argument", sig.ident) };
        args.push((camel_case(&name.ident.to_string()), ts_type(&arg.ty)));
    }
    let result = match &sig.output {
        syn::ReturnType::Default => "void".to_string(),
        syn::ReturnType::Type(_, ty) => match last_segment(ty) {
            // The error side is the message the window shows (`Failure` or a `String`).
            (name, generics) if name == "Result" => ts_type(&generics[0]),
            _ => ts_type(ty),
        },
    };
    Command { name: sig.ident.to_string(), args, result }
}

/// The TypeScript for a Rust type in a command signature: named types by their own name (their
/// declarations come from ts-rs; the test checks each one is declared).
fn ts_type(ty: &syn::Type) -> String {
    if let syn::Type::Tuple(tuple) = ty {
        assert!(tuple.elems.is_empty(), "tuples are not part of the IPC contract");
        return "void".into();
    }
    if let syn::Type::Reference(reference) = ty {
        return ts_type(&reference.elem);
    }
    let (name, generics) = last_segment(ty);
    match name.as_str() {
        "String" | "str" | "PathBuf" | "Path" => "string".into(),
        "bool" => "boolean".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" | "f32" | "f64" => "number".into(),
        "Vec" => format!("{}[]", ts_type(&generics[0])),
        "Option" => format!("{} | null", ts_type(&generics[0])),
        "Channel" => format!("Channel<{}>", ts_type(&generics[0])),
        // Raw bytes: an ArrayBuffer, or an array of numbers from the mock in the UI tests.
        "Response" => "ArrayBuffer | number[]".into(),
        _ => name,
    }
}

fn last_segment(ty: &syn::Type) -> (String, Vec<syn::Type>) {
    let syn::Type::Path(path) = ty else { panic!("unexpected type in a command signature") };
    let segment = path.path.segments.last().expect("a type has a name");
    let generics = match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
        _ => vec![],
    };
    (segment.ident.to_string(), generics)
}

fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

macro_rules! command_names {
    ($($module:ident :: $command:ident),* $(,)?) => {
        vec![$(stringify!($command)),*]
    };
}

/// The whole file, from the declarations and the commands in list.rs order.
fn bindings() -> String {
    let cfg = Config::new().with_large_int("number");
    let declared = declarations(&cfg);
    let listed: Vec<&str> = app_commands!(command_names);
    let mut found: BTreeMap<String, Command> = commands_in_sources().into_iter().map(|c| (c.name.clone(), c)).collect();

    let mut out = format!("{HEADER}import type {{ Channel }} from '@tauri-apps/api/core';\n");
    for declaration in declared.values() {
        out.push('\n');
        out.push_str(declaration);
        out.push('\n');
    }
    out.push_str("\n/** Every command the app answers: its arguments (camelCase) and its result. */\n");
    out.push_str("export interface Commands {\n");
    for name in &listed {
        let command =
            found.remove(*name).unwrap_or_else(|| panic!("commands/list.rs lists `{name}`, but no #[tauri::command] fn has that name"));
        let args: Vec<String> = command.args.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let args = if args.is_empty() { "Record<string, never>".to_string() } else { format!("{{ {} }}", args.join("; ")) };
        for (_, ty) in command.args.iter().chain([(String::new(), command.result.clone())].iter()) {
            for word in ty.split(|c: char| !c.is_alphanumeric() && c != '_') {
                let known = declared.contains_key(word)
                    || ["", "string", "number", "boolean", "null", "void", "Channel", "ArrayBuffer"].contains(&word);
                assert!(known, "command `{name}` uses `{word}`: derive ts_rs::TS on it and reach it from declarations()");
            }
        }
        out.push_str(&format!("  {name}: {{ args: {args}; result: {} }};\n", command.result));
    }
    out.push_str("}\n\nexport type CommandName = keyof Commands;\n");
    let unlisted: Vec<&String> = found.keys().collect();
    assert!(unlisted.is_empty(), "#[tauri::command] fns missing from commands/list.rs: {unlisted:?}");
    out
}

#[test]
fn ipc_bindings_are_up_to_date() {
    let path = bindings_path();
    let fresh = bindings();
    if std::env::var_os("UPDATE_IPC").is_some() {
        std::fs::write(&path, &fresh).expect("write ui/src/ipc.generated.ts");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == fresh, "ui/src/ipc.generated.ts is stale: run `UPDATE_IPC=1 cargo test -p confab-app ipc` and commit it");
}
