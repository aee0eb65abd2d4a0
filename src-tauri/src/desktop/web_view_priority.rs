//! The window's web content runs below the engine in CPU priority.
//!
//! On Linux, WebKitGTK draws the window in its own processes (WebKitWebProcess), in software
//! when there is no GPU, on the same cores the engine computes on. A reply being drawn then
//! takes its CPU from the reply being generated: a tenth to a quarter of its speed on a
//! two-core machine. With a higher nice value, the web process still gets every idle moment
//! (the engine leaves many between its operations) but yields when both want a core. Lowering
//! one's own children's priority needs no privilege; raising the engine's would.
//!
//! On macOS the window and the engine share nothing that needs this (Metal computes, the GPU
//! draws), so it does nothing there.

/// The nice value given to the web processes and to this process's software-rendering
/// threads: about a tenth of a nice-0 thread's weight under Linux's scheduler, when the engine
/// keeps both cores busy. Lower priorities (nice 19, `SCHED_IDLE`) starved the window: replies
/// from a `confab serve` on loopback, and the .deb's first reply, were drawn only once they
/// had ended (end-to-end tests in CI).
/// `CONFAB_WEB_VIEW_NICE` overrides it (0 leaves the priority alone, for comparing).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const WEB_VIEW_NICE: i32 = 10;

/// Lowers the CPU priority of every thread of this app's web processes, and of the threads
/// that rasterize its frames here (idempotent and cheap: one pass over /proc). Called once a
/// model has loaded and again as each reply starts, so that threads the web view started since
/// are caught too.
pub fn lower() {
    #[cfg(target_os = "linux")]
    {
        let nice = std::env::var("CONFAB_WEB_VIEW_NICE").ok().and_then(|v| v.parse().ok()).unwrap_or(WEB_VIEW_NICE);
        if nice > 0 {
            let lowered = linux::lower_children_named("WebKit", nice) + linux::lower_own_threads_named("llvmpipe", nice);
            if lowered > 0 {
                tracing::debug!(threads = lowered, nice, "web view threads lowered in CPU priority");
            }
        }
    }
}

/// Where the machine has no GPU to draw with (no DRM render node), the web view draws without
/// accelerated compositing: it paints the page into one buffer on its main thread, instead of
/// painting tiles and compositing them through OpenGL emulated on the CPU (llvmpipe), which
/// took twice the CPU per frame on both cores. A one-character change to a reply cost 18–21 ms
/// of CPU across the processes against 38–46 ms (Skia rasterizing on the CPU or not), and the
/// 2,000-token reply streamed at 0.96× the command line's speed instead of 0.79–0.92×
/// (`bench/window.py`). WebKit's own `WEBKIT_FORCE_COMPOSITING_MODE`, where set, is left to
/// decide. Called once the window exists, before its page has drawn.
pub fn draw_without_compositing_without_a_gpu(window: &tauri::WebviewWindow) {
    #[cfg(target_os = "linux")]
    {
        if linux::has_gpu() || std::env::var_os("WEBKIT_FORCE_COMPOSITING_MODE").is_some() {
            return;
        }
        let set = window.with_webview(|webview| {
            use webkit2gtk::{SettingsExt, WebViewExt};
            if let Some(settings) = webview.inner().settings() {
                settings.set_hardware_acceleration_policy(webkit2gtk::HardwareAccelerationPolicy::Never);
            }
        });
        match set {
            Ok(()) => tracing::debug!("no GPU: the web view draws without accelerated compositing"),
            Err(e) => tracing::warn!("could not turn the web view's compositing off: {e}"),
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

/// Keeps the text caret from blinking. Each blink repaints the window, in software here: with
/// the message box focused, the idle window took a tenth of a core (half a CPU second in five),
/// in short bursts that stall the engine's matmul threads; a third of that without the blink.
/// WebKitGTK takes the setting from GTK's. Called on the main thread, before the window opens.
pub fn steady_caret() {
    #[cfg(target_os = "linux")]
    {
        use gtk::prelude::GtkSettingsExt;
        if let Some(settings) = gtk::Settings::default() {
            settings.set_gtk_cursor_blink(false);
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs;

    /// A DRM render node means a GPU the web view can draw with.
    pub fn has_gpu() -> bool {
        fs::read_dir("/dev/dri")
            .map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD")))
            .unwrap_or(false)
    }

    /// Sets `nice` on each thread of this process's children whose name starts with `prefix`,
    /// where it is lower; returns how many threads it changed.
    pub fn lower_children_named(prefix: &str, nice: i32) -> usize {
        let parent = std::process::id();
        let Ok(entries) = fs::read_dir("/proc") else { return 0 };
        let children = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| parent_and_name(pid).is_some_and(|(ppid, name)| ppid == parent && name.starts_with(prefix)));
        let mut lowered = 0;
        for pid in children {
            let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { continue };
            for tid in tasks.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()) {
                if lower_thread(tid, nice) {
                    lowered += 1;
                }
            }
        }
        lowered
    }

    /// Sets `nice` on this process's own threads whose name starts with `prefix` (Mesa's
    /// software rasterizer threads, which put the web view's frames on screen), where it is
    /// lower; returns how many threads it changed.
    pub fn lower_own_threads_named(prefix: &str, nice: i32) -> usize {
        let Ok(tasks) = fs::read_dir("/proc/self/task") else { return 0 };
        tasks
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|tid| fs::read_to_string(format!("/proc/self/task/{tid}/comm")).is_ok_and(|name| name.starts_with(prefix)))
            .filter(|&tid| lower_thread(tid, nice))
            .count()
    }

    /// The parent pid and command name, from /proc/PID/stat ("pid (name) state ppid ...";
    /// the name may hold spaces and parentheses, so it is read up to the last ')').
    fn parent_and_name(pid: u32) -> Option<(u32, String)> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (open, close) = (stat.find('(')?, stat.rfind(')')?);
        let name = stat.get(open + 1..close)?.to_string();
        let ppid = stat.get(close + 1..)?.split_whitespace().nth(1)?.parse().ok()?;
        Some((ppid, name))
    }

    /// On Linux, PRIO_PROCESS with a thread id sets that one thread's nice value.
    fn lower_thread(tid: u32, nice: i32) -> bool {
        // SAFETY: getpriority/setpriority read and write a scheduling value; no memory is shared.
        unsafe {
            *libc::__errno_location() = 0;
            let current = libc::getpriority(libc::PRIO_PROCESS, tid);
            if *libc::__errno_location() != 0 || current >= nice {
                return false;
            }
            libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn lowers_each_child_of_that_name_once() {
            let child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
            let (ppid, name) = parent_and_name(child.id()).unwrap();
            assert_eq!((ppid, name.as_str()), (std::process::id(), "sleep"));
            let mut child = child;
            assert_eq!(lower_children_named("sleep", 5), 1, "the child's one thread is lowered");
            assert_eq!(lower_children_named("sleep", 5), 0, "and only once");
            child.kill().unwrap();
            child.wait().unwrap();
        }

        #[test]
        fn lowers_own_threads_by_name_only() {
            let (ready, started) = std::sync::mpsc::channel::<()>();
            let (quit, wait) = std::sync::mpsc::channel::<()>();
            let thread = std::thread::Builder::new()
                .name("llvmpipe-test".into())
                .spawn(move || {
                    ready.send(()).unwrap();
                    wait.recv().unwrap();
                })
                .unwrap();
            started.recv().unwrap();
            assert_eq!(lower_own_threads_named("llvmpipe-test", 5), 1);
            assert_eq!(lower_own_threads_named("llvmpipe-test", 5), 0, "only once");
            quit.send(()).unwrap();
            thread.join().unwrap();
        }
    }
}
