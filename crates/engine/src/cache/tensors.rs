//! Reading a disk tier's safetensors file in one pass: its header, then its tensors' bytes in
//! file order straight into the memory they end up in (an MLX buffer, usually), the CRC-32 of
//! everything read computed on the way and checked against the file's seal at the end. Each
//! byte is read from the file once: no copy of the whole file to check it first, no second read
//! by MLX after it, no intermediate arrays to join.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use mlx_rs::{Array, Dtype};

use crate::cache::entries::{checksum_of, Seal};

/// A tensor in a safetensors file.
#[derive(Debug, Clone)]
pub(crate) struct TensorInfo {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<i32>,
    /// Where its bytes are, from the start of the data (after the header).
    begin: u64,
    end: u64,
}

impl TensorInfo {
    pub fn nbytes(&self) -> usize {
        (self.end - self.begin) as usize
    }
}

/// A safetensors file being read front to back.
pub(crate) struct TensorReader {
    file: File,
    /// Its tensors in file order.
    pub tensors: Vec<TensorInfo>,
    hasher: crc32fast::Hasher,
    /// Bytes of data read (or skipped) so far, from the start of the data.
    at: u64,
    data_len: u64,
    seal: Seal,
}

impl TensorReader {
    /// Opens a file that should match `seal` and reads its header. A file of another size is
    /// refused before anything else is read.
    pub fn open(path: &Path, seal: &Seal) -> Result<Self, String> {
        let mut file = File::open(path).map_err(|e| format!("unreadable ({e})"))?;
        let size = file.metadata().map_err(|e| format!("unreadable ({e})"))?.len();
        if size != seal.bytes {
            return Err(format!("holds {size} bytes, not the {} its manifest says (truncated or corrupt)", seal.bytes));
        }
        let mut hasher = crc32fast::Hasher::new();
        let mut head = [0u8; 8];
        file.read_exact(&mut head).map_err(|e| format!("unreadable ({e})"))?;
        hasher.update(&head);
        let header_len = u64::from_le_bytes(head);
        if header_len > size.saturating_sub(8) {
            return Err("its header runs past its end (corrupt)".into());
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header).map_err(|e| format!("unreadable ({e})"))?;
        hasher.update(&header);
        let data_len = size - 8 - header_len;
        let tensors = parse_header(&header, data_len)?;
        Ok(Self { file, tensors, hasher, at: 0, data_len, seal: seal.clone() })
    }

    /// Reads `tensor`'s bytes (the next tensor in file order, or a later one: what lies
    /// between is read for the checksum and dropped) into `dest`, in runs: `place(offset)` says
    /// where in `dest` the tensor's bytes from `offset` go and how many go there together.
    pub fn read_tensor(&mut self, tensor: &TensorInfo, dest: &mut [u8], place: impl Fn(usize) -> (usize, usize)) -> Result<(), String> {
        self.skip_to(tensor.begin)?;
        let mut offset = 0;
        while offset < tensor.nbytes() {
            let (at, len) = place(offset);
            let len = len.min(tensor.nbytes() - offset);
            let run = dest.get_mut(at..at + len).filter(|r| !r.is_empty());
            let run = run.ok_or_else(|| format!("{}'s bytes do not fit where they go", tensor.name))?;
            self.read(run)?;
            offset += len;
        }
        Ok(())
    }

    /// A tensor's bytes as a new MLX array (one copy, from a buffer of its own).
    pub fn read_array(&mut self, tensor: &TensorInfo) -> Result<Array, String> {
        let n = tensor.nbytes();
        let mut bytes = vec![0u8; n];
        self.read_tensor(tensor, &mut bytes, |offset| (offset, n - offset))?;
        // SAFETY: `bytes` holds the product of the shape times the dtype's size (checked when the
        // header was read), and MLX copies them.
        Ok(unsafe { Array::from_raw_data(bytes.as_ptr().cast(), &tensor.shape, tensor.dtype) })
    }

    /// Reads the rest of the file and checks the whole against its seal.
    pub fn finish(mut self) -> Result<(), String> {
        self.skip_to(self.data_len)?;
        if checksum_of(self.hasher.finalize()) != self.seal.checksum {
            return Err("does not match its checksum (corrupt)".into());
        }
        Ok(())
    }

    fn read(&mut self, dest: &mut [u8]) -> Result<(), String> {
        self.file.read_exact(dest).map_err(|e| format!("unreadable ({e})"))?;
        self.hasher.update(dest);
        self.at += dest.len() as u64;
        Ok(())
    }

    fn skip_to(&mut self, to: u64) -> Result<(), String> {
        if to < self.at {
            return Err("its tensors were read out of order".into());
        }
        let mut scratch = vec![0u8; (to - self.at).min(1 << 20) as usize];
        while self.at < to {
            let n = ((to - self.at) as usize).min(scratch.len());
            self.read(&mut scratch[..n])?;
        }
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct HeaderEntry {
    dtype: String,
    shape: Vec<i64>,
    data_offsets: [u64; 2],
}

/// The tensors a header lists, in file order, each checked to fit the data and its shape.
fn parse_header(header: &[u8], data_len: u64) -> Result<Vec<TensorInfo>, String> {
    let entries: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| format!("has an unreadable header ({e})"))?;
    let mut tensors = vec![];
    for (name, value) in entries {
        if name == "__metadata__" {
            continue;
        }
        let entry: HeaderEntry = serde_json::from_value(value).map_err(|e| format!("has an unreadable header entry {name} ({e})"))?;
        let dtype = dtype(&entry.dtype).ok_or_else(|| format!("holds {name} in an unknown dtype {}", entry.dtype))?;
        let [begin, end] = entry.data_offsets;
        let elements = entry.shape.iter().try_fold(1u64, |n, &d| u64::try_from(d).ok().and_then(|d| n.checked_mul(d)));
        let shape: Option<Vec<i32>> = entry.shape.iter().map(|&d| i32::try_from(d).ok()).collect();
        match (elements, shape) {
            (Some(elements), Some(shape)) if begin <= end && end <= data_len && elements * dtype_size(dtype) == end - begin => {
                tensors.push(TensorInfo { name, dtype, shape, begin, end })
            }
            _ => return Err(format!("has a header entry {name} that does not fit its data (corrupt)")),
        }
    }
    tensors.sort_by_key(|t| t.begin);
    if tensors.windows(2).any(|w| w[1].begin < w[0].end) {
        return Err("has overlapping tensors (corrupt)".into());
    }
    Ok(tensors)
}

/// The dtypes MLX writes, by their safetensors names.
fn dtype(name: &str) -> Option<Dtype> {
    Some(match name {
        "BOOL" => Dtype::Bool,
        "U8" => Dtype::Uint8,
        "U16" => Dtype::Uint16,
        "U32" => Dtype::Uint32,
        "U64" => Dtype::Uint64,
        "I8" => Dtype::Int8,
        "I16" => Dtype::Int16,
        "I32" => Dtype::Int32,
        "I64" => Dtype::Int64,
        "F16" => Dtype::Float16,
        "BF16" => Dtype::Bfloat16,
        "F32" => Dtype::Float32,
        "F64" => Dtype::Float64,
        _ => return None,
    })
}

pub(crate) fn dtype_size(dtype: Dtype) -> u64 {
    match dtype {
        Dtype::Bool | Dtype::Uint8 | Dtype::Int8 => 1,
        Dtype::Uint16 | Dtype::Int16 | Dtype::Float16 | Dtype::Bfloat16 => 2,
        Dtype::Uint32 | Dtype::Int32 | Dtype::Float32 => 4,
        Dtype::Uint64 | Dtype::Int64 | Dtype::Float64 | Dtype::Complex64 => 8,
    }
}

/// A new MLX array whose bytes are written here before anything else sees it.
pub(crate) struct HostBuffer {
    array: Array,
    data: *mut u8,
    len: usize,
}

impl HostBuffer {
    /// An array of `shape` and `dtype`, zeroed, to write into.
    pub fn zeroed(shape: &[i32], dtype: Dtype) -> Result<Self, String> {
        let array = mlx_rs::ops::zeros_dtype(shape, dtype).map_err(|e| e.to_string())?;
        array.eval().map_err(|e| e.to_string())?;
        let mut row_contiguous = false;
        // SAFETY: a live array.
        let status = unsafe { mlx_sys::_mlx_array_is_row_contiguous(&mut row_contiguous, array.as_ptr()) };
        let len = shape.iter().map(|&d| d as usize).product::<usize>() * dtype_size(dtype) as usize;
        // SAFETY: a live, evaluated array.
        let data = unsafe { mlx_sys::mlx_array_data_uint8(array.as_ptr()) }.cast_mut();
        if status != 0 || !row_contiguous || array.nbytes() != len || data.is_null() {
            return Err("MLX did not allocate a contiguous buffer".into());
        }
        Ok(Self { array, data, len })
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the array was just made and evaluated: a row-contiguous buffer of `len` bytes
        // that no other array and no pending computation uses, and none will until `into_array`
        // gives it away (which ends this borrow's possibility).
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }

    pub fn shape(&self) -> &[i32] {
        self.array.shape()
    }

    pub fn dtype(&self) -> Dtype {
        self.array.dtype()
    }

    pub fn into_array(self) -> Array {
        self.array
    }
}
