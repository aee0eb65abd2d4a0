//! Which MLX the engine is running on: version, backend, device, library paths.

use std::ffi::CStr;
use std::path::PathBuf;

use mlx_sys as sys;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("MLX call `{0}` failed")]
    Mlx(&'static str),
}

/// What `confab doctor` reports about MLX.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MlxRuntime {
    /// The version libmlx reports at run time.
    pub version: String,
    /// The version of the wheel we built against.
    pub built_against: &'static str,
    /// `cpu`, `metal` or `cuda-12`: the wheel that was linked.
    pub backend: &'static str,
    /// `gpu` or `cpu`: MLX's default device.
    pub device: &'static str,
    /// The libmlx that the dynamic loader actually mapped.
    pub library: Option<PathBuf>,
    /// Where MLX looks for its Metal kernels (macOS only).
    pub metallib: Option<PathBuf>,
}

impl MlxRuntime {
    pub fn probe() -> Result<Self, RuntimeError> {
        Ok(Self {
            version: mlx_version()?,
            built_against: sys::build_info::MLX_VERSION,
            backend: sys::build_info::MLX_BACKEND,
            device: default_device_type()?,
            library: loaded_libmlx(),
            metallib: metallib_path(),
        })
    }
}

fn mlx_version() -> Result<String, RuntimeError> {
    // SAFETY: mlx_string is an owned handle freed below; mlx_string_data points into it.
    unsafe {
        let mut s = sys::mlx_string_new();
        if sys::mlx_version(&mut s) != 0 {
            sys::mlx_string_free(s);
            return Err(RuntimeError::Mlx("mlx_version"));
        }
        let text = CStr::from_ptr(sys::mlx_string_data(s)).to_string_lossy().into_owned();
        sys::mlx_string_free(s);
        Ok(text)
    }
}

fn default_device_type() -> Result<&'static str, RuntimeError> {
    // SAFETY: the device handle is owned here and freed before returning.
    unsafe {
        let mut dev = sys::mlx_device_new();
        let mut kind = sys::mlx_device_type__MLX_CPU;
        let ok = sys::mlx_get_default_device(&mut dev) == 0 && sys::mlx_device_get_type(&mut kind, dev) == 0;
        sys::mlx_device_free(dev);
        if !ok {
            return Err(RuntimeError::Mlx("mlx_get_default_device"));
        }
        Ok(if kind == sys::mlx_device_type__MLX_GPU { "gpu" } else { "cpu" })
    }
}

#[cfg(target_os = "macos")]
fn metallib_path() -> Option<PathBuf> {
    // MLX looks for mlx.metallib beside libmlx.dylib.
    let lib = loaded_libmlx()?;
    Some(lib.with_file_name("mlx.metallib")).filter(|p| p.exists())
}

#[cfg(not(target_os = "macos"))]
fn metallib_path() -> Option<PathBuf> {
    None
}

/// The path of the libmlx mapped into this process, from the dynamic loader.
#[cfg(unix)]
fn loaded_libmlx() -> Option<PathBuf> {
    extern "C" {
        fn dladdr(addr: *const std::ffi::c_void, info: *mut DlInfo) -> i32;
    }
    #[repr(C)]
    struct DlInfo {
        fname: *const std::ffi::c_char,
        fbase: *mut std::ffi::c_void,
        sname: *const std::ffi::c_char,
        saddr: *mut std::ffi::c_void,
    }
    // mlx-c is linked statically into our binary, so ask about a symbol of libmlx itself.
    let mut info = DlInfo { fname: std::ptr::null(), fbase: std::ptr::null_mut(), sname: std::ptr::null(), saddr: std::ptr::null_mut() };
    let probe = libmlx_symbol()?;
    // SAFETY: dladdr only reads the address and fills `info`.
    let found = unsafe { dladdr(probe, &mut info) } != 0 && !info.fname.is_null();
    found.then(|| PathBuf::from(unsafe { CStr::from_ptr(info.fname) }.to_string_lossy().into_owned()))
}

#[cfg(not(unix))]
fn loaded_libmlx() -> Option<PathBuf> {
    None
}

/// The address of a function exported by libmlx itself (not by mlx-c, which is static).
#[cfg(unix)]
fn libmlx_symbol() -> Option<*const std::ffi::c_void> {
    extern "C" {
        fn dlsym(handle: *mut std::ffi::c_void, symbol: *const std::ffi::c_char) -> *mut std::ffi::c_void;
    }
    // RTLD_DEFAULT is 0 on Linux and -2 on macOS.
    let default: *mut std::ffi::c_void = if cfg!(target_os = "macos") { -2isize as _ } else { std::ptr::null_mut() };
    // mlx::core::version(), mangled for the Itanium C++ ABI (both Linux and macOS).
    // SAFETY: dlsym only looks the name up.
    let symbol = unsafe { dlsym(default, c"_ZN3mlx4core7versionEv".as_ptr()) };
    (!symbol.is_null()).then_some(symbol as *const _)
}

/// Waits until MLX's default streams (the CPU's, and the default device's) have run everything
/// queued on them. The engine thread calls it before it ends: the next token of a pipelined
/// decode (`async_eval`) may still be running, and a process that exits then destroys MLX's
/// allocator under it (the CPU kernels' scratch comes from that allocator, inside the task:
/// a SIGSEGV at exit after `confab bench`).
pub fn wait_for_streams() {
    let cpu = mlx_rs::Stream::cpu();
    // SAFETY: `cpu` is a live stream for the call; both calls only wait, and report failure
    // (no such stream) as a status, which leaves nothing to wait for.
    unsafe {
        let _ = mlx_sys::mlx_synchronize(cpu.as_ptr());
        let _ = mlx_sys::mlx_synchronize_default();
    }
}

/// Whether MLX's default device is a GPU (Metal or CUDA).
pub fn default_is_gpu() -> bool {
    default_device_type().is_ok_and(|d| d == "gpu")
}

/// Physical memory in bytes (for budgets), or 8 GiB where it can't be read.
pub fn physical_memory() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        if let Some(kb) = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            return kb * 1024;
        }
    }
    #[cfg(target_os = "macos")]
    {
        let out = std::process::Command::new("sysctl").args(["-n", "hw.memsize"]).output();
        if let Some(bytes) = out.ok().and_then(|o| String::from_utf8(o.stdout).ok()).and_then(|s| s.trim().parse().ok()) {
            return bytes;
        }
    }
    8 << 30
}
