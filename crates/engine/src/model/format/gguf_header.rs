//! Reads a GGUF file's metadata (not its tensors), for discovery: listing a folder of
//! multi-gigabyte models must not load them.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

/// The scalar and string metadata values; arrays are skipped (except their length).
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Array(u64),
}

pub fn read_metadata(path: &Path) -> std::io::Result<HashMap<String, MetaValue>> {
    read_header(path).map(|header| header.metadata)
}

/// What the header says: the metadata, and the tensors' sizes without their data.
pub struct Header {
    pub metadata: HashMap<String, MetaValue>,
    /// The number of weights: every tensor's element count, added up.
    pub parameters: u64,
    /// The tensors' ggml types (`ggml_type_name`), each once.
    pub tensor_types: std::collections::BTreeSet<u32>,
    /// Every tensor, in the file's order: where its blocks are, for the types read here rather than by MLX.
    pub tensors: Vec<TensorInfo>,
    /// The metadata's bytes (after the count) and their number of entries, to write a file of the
    /// metadata alone.
    pub metadata_bytes: std::ops::Range<u64>,
    pub metadata_count: u64,
}

/// One tensor's entry in the header.
#[derive(Debug, Clone)]
pub struct TensorInfo {
    pub name: String,
    /// ggml's order: the fastest-varying (row) dimension first.
    pub dims: Vec<u64>,
    pub ggml_type: u32,
    /// From the start of the file.
    pub offset: u64,
}

impl TensorInfo {
    pub fn elements(&self) -> u64 {
        self.dims.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }
}

/// Where the tensor data starts when the metadata does not say: ggml's default alignment.
const DEFAULT_ALIGNMENT: u64 = 32;

/// How deep arrays may nest in the metadata (llama.cpp's writers nest none).
const MAX_ARRAY_DEPTH: usize = 8;

/// The first bytes of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// Whether the file at `path` starts as a GGUF file does, whatever it is named (Ollama's blobs
/// have no extension).
pub fn has_magic(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == MAGIC
}

pub fn read_header(path: &Path) -> std::io::Result<Header> {
    let mut r = Reader(BufReader::new(File::open(path)?));
    let mut magic = [0u8; 4];
    r.0.read_exact(&mut magic)?;
    let version = r.u32()?;
    if &magic != MAGIC || !(2..=3).contains(&version) {
        return Err(invalid("not a GGUF v2/v3 file"));
    }
    let tensors = r.u64()?;
    let count = r.u64()?;
    if count > 1_000_000 {
        return Err(invalid("implausible metadata count"));
    }
    let mut meta = HashMap::new();
    let metadata_start = r.0.stream_position()?;
    for _ in 0..count {
        let key = r.string()?;
        let kind = r.u32()?;
        meta.insert(key, r.value(kind, 0)?);
    }
    let metadata_bytes = metadata_start..r.0.stream_position()?;
    if tensors > 1_000_000 {
        return Err(invalid("implausible tensor count"));
    }
    // Each tensor: name, dimension count, dimensions, type, offset.
    let mut parameters = 0u64;
    let mut tensor_types = std::collections::BTreeSet::new();
    // Room for what a file usually holds: the count is the file's word, each entry still to be read.
    let mut infos = Vec::with_capacity((tensors as usize).min(4096));
    for _ in 0..tensors {
        let name = r.string()?;
        let rank = r.u32()?;
        if rank > 8 {
            return Err(invalid("implausible tensor rank"));
        }
        let dims = (0..rank).map(|_| r.u64()).collect::<std::io::Result<Vec<u64>>>()?;
        let ggml_type = r.u32()?;
        tensor_types.insert(ggml_type);
        let offset = r.u64()?;
        let info = TensorInfo { name, dims, ggml_type, offset };
        parameters = parameters.saturating_add(info.elements());
        infos.push(info);
    }
    // The data section starts at the next multiple of the alignment; offsets count from there.
    let alignment = match meta.get("general.alignment") {
        Some(MetaValue::Int(a)) if *a > 0 => *a as u64,
        _ => DEFAULT_ALIGNMENT,
    };
    let data = r.0.stream_position()?.div_ceil(alignment) * alignment;
    for info in &mut infos {
        info.offset = info.offset.checked_add(data).ok_or_else(|| invalid("implausible tensor offset"))?;
    }
    Ok(Header { metadata: meta, parameters, tensor_types, tensors: infos, metadata_bytes, metadata_count: count })
}

fn invalid(msg: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg)
}

struct Reader(BufReader<File>);

impl Reader {
    fn bytes<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.0.read_exact(&mut b)?;
        Ok(b)
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }
    fn string(&mut self) -> std::io::Result<String> {
        let len = self.u64()?;
        if len > 64 << 20 {
            return Err(invalid("implausible string length"));
        }
        // Read as far as the file goes: a length is the file's word, not an allocation to make.
        let mut s = Vec::new();
        (&mut self.0).take(len).read_to_end(&mut s)?;
        if s.len() as u64 != len {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a string runs past the end of the file"));
        }
        Ok(String::from_utf8_lossy(&s).into_owned())
    }
    /// GGUF value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string,
    /// 9 array, 10 u64, 11 i64, 12 f64. `depth`: the arrays this value is in.
    fn value(&mut self, kind: u32, depth: usize) -> std::io::Result<MetaValue> {
        Ok(match kind {
            0 => MetaValue::Int(self.bytes::<1>()?[0] as i64),
            1 => MetaValue::Int(self.bytes::<1>()?[0] as i8 as i64),
            2 => MetaValue::Int(u16::from_le_bytes(self.bytes()?) as i64),
            3 => MetaValue::Int(i16::from_le_bytes(self.bytes()?) as i64),
            4 => MetaValue::Int(self.u32()? as i64),
            5 => MetaValue::Int(i32::from_le_bytes(self.bytes()?) as i64),
            6 => MetaValue::Float(f32::from_le_bytes(self.bytes()?) as f64),
            7 => MetaValue::Bool(self.bytes::<1>()?[0] != 0),
            8 => MetaValue::Str(self.string()?),
            9 => {
                // Each level is a call: a file of arrays in arrays would run the stack out.
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(invalid("arrays nested implausibly deep"));
                }
                let inner = self.u32()?;
                let len = self.u64()?;
                if len > 1 << 32 {
                    return Err(invalid("implausible array length"));
                }
                for _ in 0..len {
                    self.value(inner, depth + 1)?;
                }
                MetaValue::Array(len)
            }
            10 => MetaValue::Int(self.u64()? as i64),
            11 => MetaValue::Int(i64::from_le_bytes(self.bytes()?)),
            12 => MetaValue::Float(f64::from_le_bytes(self.bytes()?)),
            other => return Err(invalid(&format!("unknown metadata type {other}"))),
        })
    }
}

/// ggml's tensor type numbers, as llama.cpp names them.
pub fn ggml_type_name(ggml_type: u32) -> &'static str {
    const NAMES: [&str; 40] = [
        "F32",
        "F16",
        "Q4_0",
        "Q4_1",
        "Q4_2",
        "Q4_3",
        "Q5_0",
        "Q5_1",
        "Q8_0",
        "Q8_1",
        "Q2_K",
        "Q3_K",
        "Q4_K",
        "Q5_K",
        "Q6_K",
        "Q8_K",
        "IQ2_XXS",
        "IQ2_XS",
        "IQ3_XXS",
        "IQ1_S",
        "IQ4_NL",
        "IQ3_S",
        "IQ2_S",
        "IQ4_XS",
        "I8",
        "I16",
        "I32",
        "I64",
        "F64",
        "IQ1_M",
        "BF16",
        "Q4_0_4_4",
        "Q4_0_4_8",
        "Q4_0_8_8",
        "TQ1_0",
        "TQ2_0",
        "IQ4_NL_4_4",
        "IQ4_NL_4_8",
        "IQ4_NL_8_8",
        "MXFP4",
    ];
    NAMES.get(ggml_type as usize).copied().unwrap_or("an unknown type")
}

/// llama.cpp's `general.file_type` numbers, as people name them.
pub fn file_type_name(file_type: i64) -> &'static str {
    match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11..=13 => "Q3_K",
        14 | 15 => "Q4_K",
        16 | 17 => "Q5_K",
        18 => "Q6_K",
        32 => "BF16",
        38 => "MXFP4",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One metadata entry whose value is arrays in arrays, `depth` deep.
    fn nested_arrays(depth: usize) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.push(b'k');
        bytes.extend(9u32.to_le_bytes());
        for _ in 0..depth {
            bytes.extend(9u32.to_le_bytes());
            bytes.extend(1u64.to_le_bytes());
        }
        bytes
    }

    fn header_of(bytes: &[u8]) -> std::io::Result<Header> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.gguf");
        std::fs::write(&path, bytes).unwrap();
        read_header(&path)
    }

    /// A megabyte of arrays in arrays is an error, not a stack overflow (each level was a call).
    #[test]
    fn deeply_nested_arrays_are_refused() {
        let error = header_of(&nested_arrays(100_000)).err().expect("refused");
        assert!(error.to_string().contains("nested implausibly deep"), "{error}");
        // Nesting within the limit reads (to the end of this file).
        assert!(header_of(&nested_arrays(3)).err().expect("truncated").kind() == std::io::ErrorKind::UnexpectedEof);
    }

    /// A string's length is not allocated before its bytes are read.
    #[test]
    fn a_string_longer_than_the_file_is_an_error() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.extend((60u64 << 20).to_le_bytes());
        bytes.extend(b"short");
        assert_eq!(header_of(&bytes).err().expect("refused").kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
