//! The `confab` binary as a user runs it.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn confab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_confab")).args(args).output().expect("run confab")
}

fn tiny(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn generate_json_matches_the_reference_and_saves_logits() {
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(tiny("qwen3").join("reference.json")).unwrap()).unwrap();
    let prompt: Vec<String> = reference["prompt_ids"].as_array().unwrap().iter().map(|v| v.to_string()).collect();
    let dir = tempfile::tempdir().unwrap();
    let logits = dir.path().join("first.npy");
    let out = confab(&[
        "generate",
        "--model",
        tiny("qwen3").to_str().unwrap(),
        "--prompt-ids",
        &prompt.join(","),
        "--max-tokens",
        "8",
        "--temperature",
        "0",
        "--json",
        "--logits",
        logits.to_str().unwrap(),
    ]);
    let json = json_of(&out);
    let want: Vec<Value> = reference["greedy_ids"].as_array().unwrap()[..json["ids"].as_array().unwrap().len()].to_vec();
    assert_eq!(json["ids"].as_array().unwrap(), &want);
    assert_eq!(json["usage"]["prompt"], 40);
    assert!(json["timings"]["decode_tokens_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(json["plan"]["prompt_tokens"], 40);
    let saved = confab_engine::npy::read_f32(&logits).unwrap();
    assert_eq!(saved.len(), reference["first_logits"].as_array().unwrap().len());
}

#[test]
fn models_lists_every_fixture_with_its_details() {
    let out = confab(&["models", "--folder", tiny("").to_str().unwrap(), "--json"]);
    let json = json_of(&out);
    let models = json.as_array().unwrap();
    let find = |name: &str| models.iter().find(|m| m["path"].as_str().unwrap().ends_with(&format!("/{name}"))).unwrap();
    assert_eq!(find("qwen3_mlx4")["quantization"], "4-bit");
    assert_eq!(find("gemma3")["architecture"], "gemma3_text");
    assert_eq!(find("llama")["context_length"], 256);
    assert!(find("llama")["supported"].as_bool().unwrap());
}

#[test]
fn errors_are_messages_not_panics() {
    let out = confab(&["generate", "--model", "/nonexistent", "--prompt", "hi"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no such file or folder"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let out = confab(&["generate", "--model", tiny("llama").to_str().unwrap(), "--prompt", "hi", "--temperature=-2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("temperature"), "{stderr}");
}

#[test]
fn embed_gives_a_vector_per_text_and_refuses_an_empty_one_as_the_server_does() {
    let model = tiny("embeddinggemma");
    let out = json_of(&confab(&["embed", model.to_str().unwrap(), "a cat", "a dog"]));
    assert_eq!(out["embeddings"].as_array().unwrap().len(), 2, "{out}");

    let out = confab(&["embed", model.to_str().unwrap(), "a cat", ""]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("text 2 is empty"), "{stderr}");
}

#[test]
fn doctor_reports_mlx_and_fails_without_the_default_model() {
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_confab")).arg("doctor").env("CONFAB_HOME", empty.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("MLX            0.32.2"), "{stdout}");
    assert!(stdout.contains("libmlx"), "{stdout}");
    assert!(!out.status.success(), "doctor must fail when the default model is missing");
    assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/setup.sh"));
}

fn doctor_blas(home: &std::path::Path, env: &[(&str, &std::ffi::OsStr)]) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_confab"));
    // The probe's answer lives in the machine's cache folder (HOME's, not CONFAB_HOME's).
    cmd.args(["doctor", "--json"])
        .env("CONFAB_HOME", home)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("OPENBLAS_CORETYPE")
        .env_remove("CONFAB_BLAS_CORE");
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice::<Value>(&out.stdout).expect("doctor --json prints JSON")["blas"].clone()
}

/// The core a probe chose is the fastest candidate that computed correctly, or OpenBLAS's own
/// within the margin of it; none that failed.
fn assert_probe_chose_well(blas: &Value) {
    let probe = &blas["choice"]["probe"];
    let chosen = probe["chosen"].as_str().unwrap_or_else(|| panic!("a probe's answer: {blas}"));
    let speed = |core: &str| {
        let c = probe["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["core"].as_str() == Some(core))
            .unwrap_or_else(|| panic!("{core} measured: {blas}"));
        (c["outcome"]["result"] == "correct").then(|| c["outcome"]["gflops"].as_f64().unwrap())
    };
    let chosen_speed = speed(chosen).unwrap_or_else(|| panic!("the chosen core computed correctly: {blas}"));
    let fastest = probe["candidates"].as_array().unwrap().iter().filter_map(|c| speed(c["core"].as_str().unwrap())).fold(0.0, f64::max);
    let margin = if chosen == probe["openblas_own"] { 1.0 + confab_engine::blas::MARGIN } else { 1.0 };
    assert!(chosen_speed * margin >= fastest, "{chosen} at {chosen_speed} GFLOP/s against {fastest}: {blas}");
    // The process runs it.
    assert_eq!(blas["core"].as_str().map(str::to_lowercase), Some(chosen.to_lowercase()), "{blas}");
}

#[test]
fn doctor_names_the_blas_core_how_it_was_chosen_and_remembers_the_probe() {
    let home = tempfile::tempdir().unwrap();
    let blas = doctor_blas(home.path(), &[]);
    assert!(blas["float32_gflops"].as_f64().is_some_and(|g| g > 0.0), "{blas}");
    if !cfg!(target_os = "linux") {
        return; // Accelerate on macOS: no core to name
    }
    // Linux: the wheel's BLAS is swapped for OpenBLAS (scripts/setup.sh).
    let core = blas["core"].as_str().unwrap_or_else(|| panic!("OpenBLAS names its core: {blas}"));
    if blas["choice"]["chosen_by"] == "openblas" {
        return; // a CPU without AVX: nothing to choose between
    }
    // A fresh cache folder: measured at this start, and remembered.
    assert_eq!((blas["choice"]["chosen_by"].as_str(), blas["choice"]["measured_now"].as_bool()), (Some("probe"), Some(true)), "{blas}");
    assert_probe_chose_well(&blas);
    let file = home.path().join("cache/confab/blas-core.json");
    assert!(file.is_file(), "{blas}");
    // The next start takes the remembered answer.
    let again = doctor_blas(home.path(), &[]);
    assert_eq!((again["choice"]["chosen_by"].as_str(), again["choice"]["measured_now"].as_bool()), (Some("probe"), Some(false)), "{again}");
    assert_eq!(again["core"].as_str(), Some(core), "{again}");
    assert_eq!(again["choice"]["probe"], blas["choice"]["probe"]);

    // A remembered answer is followed without measuring (here one that names another core)...
    let mut remembered: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let other = if core.eq_ignore_ascii_case("Haswell") { "Zen" } else { "Haswell" };
    remembered["chosen"] = other.into();
    std::fs::write(&file, serde_json::to_vec(&remembered).unwrap()).unwrap();
    let told = doctor_blas(home.path(), &[]);
    assert_eq!((told["core"].as_str(), told["choice"]["measured_now"].as_bool()), (Some(other), Some(false)), "{told}");
    // ...unless it was measured on another CPU (or with another library): measured again.
    remembered["machine"]["cpu_sha256"] = "another CPU".into();
    std::fs::write(&file, serde_json::to_vec(&remembered).unwrap()).unwrap();
    let measured = doctor_blas(home.path(), &[]);
    assert_eq!(measured["choice"]["measured_now"].as_bool(), Some(true), "{measured}");
    assert_probe_chose_well(&measured);
    let rewritten: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(rewritten["machine"], blas["choice"]["probe"]["machine"]);

    // The user's OPENBLAS_CORETYPE wins: kept, not measured, said so.
    let forced = doctor_blas(home.path(), &[("OPENBLAS_CORETYPE", "Prescott".as_ref())]);
    assert_eq!((forced["core"].as_str(), forced["core_type_env"].as_str()), (Some("Prescott"), Some("Prescott")), "{forced}");
    assert_eq!(forced["choice"]["chosen_by"].as_str(), Some("you"), "{forced}");
}

/// A CPU that OpenBLAS misdetects, simulated: a preloaded `openblas_get_corename` (found
/// before OpenBLAS's own) names "Prescott" unless OPENBLAS_CORETYPE is set, and OpenBLAS's own
/// answer when it is (a core this OpenBLAS lacks, such as SapphireRapids in 0.3.21, runs as
/// another, and the probe must see that). `main` must then measure, restart once on the fastest
/// correct core, and the real OpenBLAS must run it.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn a_misdetected_openblas_core_is_replaced_before_anything_runs() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return; // Prescott's kernels are near what such a CPU has
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("fake_core.c");
    std::fs::write(
        &source,
        "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stdlib.h>\n\
         char* openblas_get_corename(void) {\n\
           if (!getenv(\"OPENBLAS_CORETYPE\")) return \"Prescott\";\n\
           char* (*real)(void) = (char* (*)(void))dlsym(RTLD_NEXT, \"openblas_get_corename\");\n\
           return real ? real() : getenv(\"OPENBLAS_CORETYPE\");\n\
         }\n",
    )
    .unwrap();
    let shim = dir.path().join("libfake_core.so");
    let built = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&shim).arg(&source).arg("-ldl").status().unwrap();
    assert!(built.success(), "cc could not build the shim");
    let blas = doctor_blas(dir.path(), &[("LD_PRELOAD", shim.as_os_str())]);
    let probe = &blas["choice"]["probe"];
    assert_eq!(probe["openblas_own"].as_str(), Some("Prescott"), "{blas}");
    assert_probe_chose_well(&blas);
    let chosen = probe["chosen"].as_str().unwrap();
    assert_ne!(chosen, "Prescott", "SSE3 kernels on an AVX2 CPU: {blas}");
    assert_eq!(blas["core_type_env"].as_str(), Some(chosen), "restarted with OPENBLAS_CORETYPE: {blas}");
    // OpenBLAS's own description: the real library took the core.
    assert!(blas["config"].as_str().is_some_and(|c| c.contains(chosen)), "{blas}");
}

#[test]
fn doctor_says_what_auto_computes_with_as_the_engine_does() {
    // What doctor says about this machine (a CPU here) against what the engine does when it
    // loads a 4-bit model with `--dtype auto`.
    let home = tempfile::tempdir().unwrap();
    let doctor = |kernels: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_confab"));
        cmd.args(["doctor", "--json"]).env("CONFAB_HOME", home.path()).env_remove("CONFAB_CPU_KERNELS");
        if let Some(v) = kernels {
            cmd.env("CONFAB_CPU_KERNELS", v);
        }
        let out = cmd.output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).expect("doctor --json prints JSON")["compute"].clone()
    };
    let compute = doctor(None);
    let loaded = confab_engine::model::load(&tiny("qwen3_mlx4"), &Default::default()).unwrap();
    let kernel = confab_engine::model::layers::cpu_linear::enabled();
    assert_eq!(compute["device"], if confab_engine::device::default_is_gpu() { "gpu" } else { "cpu" });
    assert_eq!(compute["cpu_kernel"], kernel);
    assert_eq!(compute["auto_quantized_weights"], if loaded.quantized { "packed" } else { "float32" });
    let dtype = format!("{:?}", loaded.dtype).to_lowercase();
    if compute["device"] == "cpu" {
        assert_eq!((compute["backend"].as_str(), compute["auto_dtype"].as_str()), (Some("cpu"), Some("float32")));
        assert_eq!(dtype, "float32");
        assert!(kernel && loaded.quantized, "on a CPU, auto keeps 4-bit weights packed for the CPU kernel");
        // With the kernel turned off, doctor says the weights are widened (the engine's
        // dequantize-at-load path, held to its reference by the fidelity tests).
        let off = doctor(Some("0"));
        assert_eq!((off["cpu_kernel"].as_bool(), off["auto_quantized_weights"].as_str()), (Some(false), Some("float32")));
    } else {
        assert_eq!(compute["auto_dtype"], "checkpoint");
        assert!(!kernel && loaded.quantized, "on a GPU, auto keeps the checkpoint's quantization and the CPU kernel is off");
    }
}

#[test]
fn doctor_reports_the_cpu_kernels_threads_and_their_override() {
    let home = tempfile::tempdir().unwrap();
    let threads = |env: Option<&str>, pinned_to_one_cpu: bool| {
        let mut cmd = if pinned_to_one_cpu { Command::new("taskset") } else { Command::new(env!("CARGO_BIN_EXE_confab")) };
        if pinned_to_one_cpu {
            cmd.args(["-c", "0", env!("CARGO_BIN_EXE_confab")]);
        }
        cmd.args(["doctor", "--json"]).env("CONFAB_HOME", home.path()).env_remove("CONFAB_CPU_THREADS");
        if let Some(v) = env {
            cmd.env("CONFAB_CPU_THREADS", v);
        }
        let out = cmd.output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).expect("doctor --json prints JSON")["compute"]["cpu_threads"].clone()
    };
    let cores = threads(None, false);
    assert_eq!(cores["from"], "physical cores", "{cores}");
    assert!(cores["threads"].as_u64().is_some_and(|n| n >= 1), "{cores}");
    let set = threads(Some("12"), false);
    assert_eq!((set["threads"].as_u64(), set["from"].as_str()), (Some(12), Some("CONFAB_CPU_THREADS")), "{set}");
    let bad = threads(Some("lots"), false);
    assert_eq!((&bad["threads"], bad["ignored_env"].as_str()), (&cores["threads"], Some("lots")), "{bad}");
    // The cores it may run on, not the machine's: pinned to one CPU, one thread.
    if cfg!(target_os = "linux") && Command::new("taskset").arg("-V").output().is_ok_and(|o| o.status.success()) {
        let pinned = threads(None, true);
        assert_eq!(pinned["threads"].as_u64(), Some(1), "{pinned}");
    }
}

#[test]
fn doctor_reports_the_cpu_kernels_instruction_set_and_its_cap() {
    let home = tempfile::tempdir().unwrap();
    let isa = |cap: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_confab"));
        cmd.args(["doctor", "--json"]).env("CONFAB_HOME", home.path()).env_remove("CONFAB_CPU_ISA");
        if let Some(v) = cap {
            cmd.env("CONFAB_CPU_ISA", v);
        }
        let out = cmd.output().unwrap();
        let report = serde_json::from_slice::<Value>(&out.stdout).expect("doctor --json prints JSON");
        report["compute"]["cpu_kernel_isa"].as_str().expect("cpu_kernel_isa is a string").to_string()
    };
    // The widest this CPU runs; a cap narrows it, never widens it.
    let widest = isa(None);
    assert!(["avx512", "avx2", "portable"].contains(&widest.as_str()), "{widest}");
    assert_eq!(isa(Some("portable")), "portable");
    assert_eq!(isa(Some("avx2")), if widest == "portable" { "portable" } else { "avx2" });
    assert_eq!(isa(Some("avx512")), widest);
}

#[test]
fn the_default_model_knows_the_capital_of_france() {
    let out = confab(&["chat", "--prompt", "What is the capital of France?", "--temperature", "0", "--no-prefix-cache"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(answer.contains("Paris"), "{answer}");
}

#[test]
fn a_model_in_ollamas_store_is_listed_by_its_name_and_answers_from_its_blob() {
    // The store as Ollama lays it out, its blob a link to the installed default model (never a copy).
    let default = confab_paths::DefaultModel::manifest().path(&confab_paths::AppPaths::from_env());
    assert!(default.is_file(), "{} is missing: run scripts/setup.sh", default.display());
    let store = tempfile::tempdir().unwrap();
    let hex = "5a".repeat(32);
    std::fs::create_dir_all(store.path().join("blobs")).unwrap();
    let blob = store.path().join(format!("blobs/sha256-{hex}"));
    std::os::unix::fs::symlink(&default, &blob).unwrap();
    let manifest = store.path().join("manifests/registry.ollama.ai/library/smollm2/135m");
    std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
    let layers = serde_json::json!({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{hex}"), "size": 1},
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:abcd", "size": 1}
    ]});
    std::fs::write(&manifest, layers.to_string()).unwrap();

    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_confab"))
            .args(args)
            .env("CONFAB_HOME", home.path())
            .env("OLLAMA_MODELS", store.path())
            .output()
            .expect("run confab")
    };
    let json = json_of(&run(&["models", "--json"]));
    let model = json.as_array().unwrap().iter().find(|m| m["name"] == "smollm2:135m").unwrap_or_else(|| panic!("not listed: {json}"));
    assert_eq!(model["source"], "Ollama");
    assert_eq!(model["format"], "Gguf");
    assert_eq!(model["path"], blob.to_str().unwrap());

    let out = run(&[
        "chat",
        "--model",
        blob.to_str().unwrap(),
        "--prompt",
        "What is the capital of France?",
        "--temperature",
        "0",
        "--no-prefix-cache",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(answer.contains("Paris"), "{answer}");
}

#[test]
fn generate_with_an_image_and_a_clip_reports_them_in_the_plan() {
    let model = tiny("gemma4");
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(model.join("media_reference.json")).unwrap()).unwrap();
    let caches = tempfile::tempdir().unwrap();
    let (image, audio) = (model.join("media/gradient.png"), model.join("media/chirp.wav"));
    let run = || {
        json_of(&confab(&[
            "generate",
            "--model",
            model.to_str().unwrap(),
            "--prompt",
            "What do you see and hear?",
            "--image",
            image.to_str().unwrap(),
            "--audio",
            audio.to_str().unwrap(),
            "--max-tokens",
            "16",
            "--temperature",
            "0",
            "--json",
            "--prefix-cache-dir",
            caches.path().join("prefix").to_str().unwrap(),
            "--encoder-cache-dir",
            caches.path().join("encoder").to_str().unwrap(),
        ]))
    };
    let json = run();
    let media = json["plan"]["media"].as_array().unwrap();
    assert_eq!(media.len(), 2);
    assert_eq!((media[0]["kind"].as_str(), media[0]["soft_tokens"].as_u64()), (Some("image"), Some(63)));
    assert_eq!((media[1]["kind"].as_str(), media[1]["soft_tokens"].as_u64()), (Some("audio"), Some(25)));
    assert_eq!((media[0]["encoder"].as_str(), json["plan"]["tower_runs"].as_u64()), (Some("miss"), Some(2)));
    let want = &reference["greedy_ids"].as_array().unwrap()[..json["ids"].as_array().unwrap().len()];
    assert_eq!(json["ids"].as_array().unwrap(), want);
    // A second process finds the towers' outputs on disk.
    let again = run();
    let sources: Vec<&str> = again["plan"]["media"].as_array().unwrap().iter().map(|m| m["encoder"].as_str().unwrap()).collect();
    assert!(sources.iter().all(|s| *s == "disk" || *s == "prefix"), "{sources:?}");
    assert_eq!(again["plan"]["tower_runs"], 0);
}

#[test]
fn an_image_for_a_text_only_model_is_refused_with_advice() {
    let image = tiny("gemma4").join("media/gradient.png");
    let out =
        confab(&["generate", "--model", tiny("llama").to_str().unwrap(), "--prompt", "Hi", "--image", image.to_str().unwrap(), "--json"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("reads text only") && stderr.contains("load a model with vision"), "{stderr}");
}

/// `--kv-bits 8` gives mlx-lm's 8-bit ids on its reference (tests/reference/make_kv_quant.py)
/// and says so in the plan; a width MLX cannot quantize to is refused before anything loads.
#[test]
fn kv_bits_quantizes_keys_values_and_refuses_other_widths() {
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(tiny("kv_quant").join("reference.json")).unwrap()).unwrap();
    let prompt: Vec<String> = reference["prompt_ids"].as_array().unwrap().iter().map(|v| v.to_string()).collect();
    let model = tiny("kv_quant");
    let out = confab(&[
        "generate",
        "--model",
        model.to_str().unwrap(),
        "--prompt-ids",
        &prompt.join(","),
        "--max-tokens",
        "8",
        "--temperature",
        "0",
        "--kv-bits",
        "8",
        "--no-prefix-cache",
        "--json",
    ]);
    let json = json_of(&out);
    assert_eq!(json["plan"]["kv_bits"], 8);
    assert_eq!(json["plan"]["kv_group_size"], 64);
    assert_eq!(json["ids"].as_array().unwrap(), &reference["runs"]["kv8g64"]["greedy_ids"].as_array().unwrap()[..8]);
    for (flag, value, says) in [("--kv-bits", "3", "4 or 8 bits"), ("--kv-group-size", "48", "32, 64 or 128")] {
        let mut args = vec!["generate", "--model", model.to_str().unwrap(), "--prompt", "hi", flag, value];
        if flag != "--kv-bits" {
            args.extend(["--kv-bits", "4"]);
        }
        let out = confab(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(says), "{flag} {value}: {stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("loading:"), "{stderr}");
    }
}

/// `--prompt-lookup` on a model with rotating windows gives plain greedy decoding's reply, and
/// `--json` reports the acceptance rate and tokens per verifying pass.
#[test]
fn generate_json_reports_speculative_decodings_rates() {
    let phrase: Vec<String> = (20..44).map(|i: u32| i.to_string()).collect();
    let prompt = [phrase.join(","), phrase.join(","), phrase[..10].join(",")].join(",");
    let model = tiny("gemma3");
    let run = |lookup: bool| {
        let mut args = vec!["generate", "--model", model.to_str().unwrap(), "--prompt-ids", &prompt, "--max-tokens", "40"];
        args.extend(["--temperature", "0", "--no-prefix-cache", "--json"]);
        if lookup {
            args.push("--prompt-lookup");
        }
        json_of(&confab(&args))
    };
    let (plain, fast) = (run(false), run(true));
    assert_eq!(fast["ids"], plain["ids"]);
    assert_eq!(plain["speculative"], Value::Null);
    assert_eq!(fast["plan"]["speculative"], "prompt_lookup");
    let stats = &fast["speculative"];
    eprintln!("{stats}");
    let (proposed, accepted, passes) =
        (stats["proposed"].as_f64().unwrap(), stats["accepted"].as_f64().unwrap(), stats["verifying_passes"].as_f64().unwrap());
    assert!(passes > 0.0);
    assert_eq!(stats["acceptance_rate"].as_f64().unwrap(), accepted / proposed);
    assert_eq!(stats["tokens_per_step"].as_f64().unwrap(), (accepted + passes) / passes);
}

/// `--mtp` drafts with the model's multi-token-prediction head (a Qwen3.5 checkpoint carrying
/// `mtp.*`), giving plain greedy decoding's reply; a model without the head declines it, saying
/// why, and `--max-draft 0` proposes nothing.
#[test]
fn generate_mtp_drafts_with_the_models_head() {
    let prompt: Vec<String> = (20..56).map(|i: u32| (i % 30 + 20).to_string()).collect();
    let prompt = prompt.join(",");
    let run = |name: &str, extra: &[&str]| {
        let model = tiny(name);
        let mut args = vec!["generate", "--model", model.to_str().unwrap(), "--prompt-ids", &prompt, "--max-tokens", "24"];
        args.extend(["--temperature", "0", "--no-prefix-cache", "--json"]);
        args.extend(extra);
        json_of(&confab(&args))
    };
    let (plain, fast) = (run("qwen3_5_mtp", &[]), run("qwen3_5_mtp", &["--mtp"]));
    assert_eq!(fast["ids"], plain["ids"]);
    assert_eq!(fast["plan"]["speculative"], "mtp", "{}", fast["plan"]);
    assert!(fast["speculative"]["verifying_passes"].as_f64().unwrap() > 0.0, "{}", fast["speculative"]);
    let declined = run("qwen3_5", &["--mtp"]);
    assert_eq!(declined["plan"]["speculative"], Value::Null);
    assert!(declined["plan"]["speculative_declined"].as_str().unwrap().contains("multi-token-prediction"), "{}", declined["plan"]);
    let nothing = run("qwen3_5_mtp", &["--mtp", "--max-draft", "0"]);
    assert!(nothing["plan"]["speculative_declined"].as_str().unwrap().contains("proposes nothing"));
}
