#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| confab_fuzz::run("model_tokenizer", data));
