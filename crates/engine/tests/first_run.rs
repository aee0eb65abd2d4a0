//! First run of an installed Confab: an empty models folder and the copy of the default model
//! the package carries give a loaded default model that replies, with no setup script.

use std::path::{Path, PathBuf};

use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::ChatMessage;
use confab_paths::{AppPaths, DefaultModel};

/// The model setup installed for development, standing in for the one the package carries.
fn development_copy() -> PathBuf {
    let path = DefaultModel::manifest().path(&AppPaths::from_env());
    assert!(path.exists(), "{} is missing: this test needs the development copy of the default model", path.display());
    path
}

/// A package's share folder (`<prefix>/share/confab/models/<folder>/<file>`), linking to it.
fn package_share(root: &Path) -> PathBuf {
    let model = DefaultModel::manifest();
    let share = root.join("usr/share/confab/models");
    std::fs::create_dir_all(share.join(&model.folder)).unwrap();
    std::os::unix::fs::symlink(development_copy(), share.join(&model.folder).join(&model.file)).unwrap();
    share
}

#[test]
fn an_empty_models_folder_and_the_packaged_model_give_a_model_that_replies() {
    let root = tempfile::tempdir().unwrap();
    let share = package_share(root.path());
    let paths = AppPaths::under(&root.path().join("home"));
    let model = DefaultModel::manifest();
    assert!(!model.is_present(&paths));

    let installed = model.install_from_package(&paths, std::slice::from_ref(&share)).unwrap();
    assert_eq!(installed, model.path(&paths));
    assert!(model.is_present(&paths));
    assert!(!installed.symlink_metadata().unwrap().file_type().is_symlink(), "a copy, not a link into the package");
    // A second launch finds it and copies nothing.
    let modified = installed.metadata().unwrap().modified().unwrap();
    assert_eq!(model.install_from_package(&paths, &[share]).unwrap(), installed);
    assert_eq!(installed.metadata().unwrap().modified().unwrap(), modified);

    let mut options = EngineOptions::default();
    options.prefix.enabled = false;
    let engine = Engine::start(options).unwrap();
    let (id, info) = engine.load(&installed, LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.architecture, "llama");
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 12;
    let request = Request::new(id, Prompt::Chat(vec![ChatMessage::user("What is the capital of France?")]), sampling);
    let mut reply = String::new();
    for event in engine.generate(request) {
        match event {
            Event::Token { text, .. } => reply.push_str(&text),
            Event::Error(e) => panic!("{e}"),
            _ => {}
        }
    }
    assert!(reply.contains("Paris"), "{reply:?}");
}
