//! Model files: GGUF headers and metadata.

use confab_engine::model::format::gguf_header;

pub fn gguf_header(data: &[u8]) {
    let (_dir, path) = crate::as_file("model.gguf", data);
    if let Ok(header) = gguf_header::read_header(&path) {
        let _ = confab_engine::model::format::gguf::loaded_weight_bytes(&header);
    }
}
