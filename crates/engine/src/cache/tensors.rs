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
    pub fn read_tensor(
        &mut self,
        tensor: &TensorInfo,
        dest: &mut HostBuffer,
        place: impl Fn(usize) -> (usize, usize),
    ) -> Result<(), String> {
        self.skip_to(tensor.begin)?;
        let mut offset = 0;
        while offset < tensor.nbytes() {
            let (at, len) = place(offset);
            let len = len.min(tensor.nbytes() - offset);
            if len == 0 || at.checked_add(len).is_none_or(|end| end > dest.len) {
                return Err(format!("{}'s bytes do not fit where they go", tensor.name));
            }
            // SAFETY: `at..at + len` lies inside the buffer (checked above), which only this
            // reader writes while it is borrowed.
            unsafe { self.read_raw(dest.data.add(at), len)? };
            offset += len;
        }
        Ok(())
    }

    /// A tensor's bytes as a new MLX array (one copy, from a buffer of its own).
    pub fn read_array(&mut self, tensor: &TensorInfo) -> Result<Array, String> {
        self.skip_to(tensor.begin)?;
        let mut bytes = vec![0u8; tensor.nbytes()];
        self.read(&mut bytes)?;
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
        // SAFETY: a live slice of `dest.len()` bytes.
        unsafe { self.read_raw(dest.as_mut_ptr(), dest.len()) }
    }

    /// Reads the next `len` bytes to `dest` (which may be unwritten memory: it is written
    /// through the pointer, never read until the read has filled it).
    ///
    /// # Safety
    /// `dest..dest + len` must be writable and used by nothing else meanwhile.
    unsafe fn read_raw(&mut self, dest: *mut u8, len: usize) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        let mut done = 0;
        while done < len {
            // SAFETY: the caller's range; `read` writes at most `len - done` bytes past `done`.
            let n = unsafe { libc::read(self.file.as_raw_fd(), dest.add(done).cast(), len - done) };
            match n {
                0 => return Err("unreadable (it ended early)".into()),
                n if n < 0 => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(format!("unreadable ({e})"));
                    }
                }
                n => done += n as usize,
            }
        }
        // SAFETY: the range was written whole by the reads above.
        self.hasher.update(unsafe { std::slice::from_raw_parts(dest, len) });
        self.at += len as u64;
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

/// A new MLX array whose bytes are written here before anything else sees it: allocated,
/// not zeroed (the reads write it, and `zero` whatever they do not).
pub(crate) struct HostBuffer {
    array: Array,
    data: *mut u8,
    len: usize,
}

extern "C" {
    fn confab_host_array(
        out: *mut *mut std::ffi::c_void,
        like: *const std::ffi::c_void,
        shape: *const i32,
        ndim: i32,
        err: *mut std::ffi::c_char,
        err_len: usize,
    ) -> i32;
}

impl HostBuffer {
    /// An array of `shape` and `dtype` to write into.
    pub fn new(shape: &[i32], dtype: Dtype) -> Result<Self, String> {
        let like = mlx_rs::ops::zeros_dtype(&[0], dtype).map_err(|e| e.to_string())?;
        let mut out: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut err = [0 as std::ffi::c_char; 256];
        // SAFETY: `like` is a live mlx::core::array (only its dtype is read); `shape` holds
        // `shape.len()` dimensions; `err` has room for the message.
        let status =
            unsafe { confab_host_array(&mut out, like.as_ptr().ctx, shape.as_ptr(), shape.len() as i32, err.as_mut_ptr(), err.len()) };
        if status != 0 || out.is_null() {
            // SAFETY: the helper wrote a NUL-terminated message.
            let message = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
            return Err(format!("could not allocate a buffer ({message})"));
        }
        // SAFETY: `out` is an owned mlx::core::array*, what an mlx_array's ctx holds.
        let array = unsafe { Array::from_ptr(mlx_sys::mlx_array { ctx: out }) };
        let len = shape.iter().map(|&d| d as usize).product::<usize>() * dtype_size(dtype) as usize;
        // SAFETY: a live array with a buffer (no computation makes it).
        let data = unsafe { mlx_sys::mlx_array_data_uint8(array.as_ptr()) }.cast_mut();
        if array.nbytes() != len || (data.is_null() && len > 0) {
            return Err("MLX did not allocate the buffer asked for".into());
        }
        Ok(Self { array, data, len })
    }

    /// Zeroes `len` bytes from `at` (within the buffer).
    pub fn zero(&mut self, at: usize, len: usize) {
        assert!(at + len <= self.len, "zeroing past the buffer");
        // SAFETY: inside the buffer (asserted), which nothing else uses yet.
        unsafe { std::ptr::write_bytes(self.data.add(at), 0, len) }
    }

    pub fn shape(&self) -> &[i32] {
        self.array.shape()
    }

    pub fn dtype(&self) -> Dtype {
        self.array.dtype()
    }

    /// The array, once every byte has been read or zeroed.
    pub fn into_array(self) -> Array {
        self.array
    }
}
