//! The window's web content runs below the engine in CPU priority.
//!
//! On Linux, WebKitGTK draws the window in its own processes (WebKitWebProcess), in software
//! when there is no GPU, on the same cores the engine computes on. A reply being drawn then
//! takes its CPU from the reply being generated: a tenth to a quarter of its speed on a
//! two-core machine. So the web view's threads run under `SCHED_IDLE`: only on a core the
//! engine leaves idle (it leaves many moments between its operations, and waits while the
//! window draws the first token), and a waking engine thread takes the core back at once. A
//! nice value only weighs shares: at nice 19 a web thread kept the core for the rest of its
//! time slice each time the engine's second thread woke to split an operation, and the engine's
//! first token in the app took 68–181 ms against the command line's 62–119
//! (`bench/window.py`, 2-core machine); under `SCHED_IDLE`, 94–112 against 106–138.
//! Lowering one's own children's priority needs no privilege; raising the engine's would.
//!
//! On macOS the window and the engine share nothing that needs this (Metal computes, the GPU
//! draws), so it does nothing there.

/// How the web view's threads are put below the engine.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq)]
enum Below {
    /// `SCHED_IDLE` (one way: an unprivileged thread cannot leave it).
    Idle,
    /// A nice value, where `SCHED_IDLE` is refused.
    Nice(i32),
}

/// `SCHED_IDLE`, unless `CONFAB_WEB_VIEW_NICE` asks for a nice value instead (0 leaves the
/// priority alone, for comparing).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn chosen() -> Option<Below> {
    match std::env::var("CONFAB_WEB_VIEW_NICE").ok().and_then(|v| v.parse::<i32>().ok()) {
        None => Some(Below::Idle),
        Some(nice) if nice > 0 => Some(Below::Nice(nice.min(19))),
        Some(_) => None,
    }
}

/// Lowers the CPU priority of every thread of this app's web processes, and of the threads
/// that rasterize its frames here (idempotent and cheap: one pass over /proc). Called once a
/// model has loaded and again as each reply starts, so that threads the web view started since
/// are caught too.
pub fn lower() {
    #[cfg(target_os = "linux")]
    if let Some(below) = chosen() {
        let lowered = linux::lower_children_named("WebKit", below) + linux::lower_own_threads_named("llvmpipe", below);
        if lowered > 0 {
            tracing::debug!(threads = lowered, ?below, "web view threads lowered in CPU priority");
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs;

    use super::Below;

    /// Puts each thread of this process's children whose name starts with `prefix` `below`,
    /// where it is not yet; returns how many threads it changed.
    pub fn lower_children_named(prefix: &str, below: Below) -> usize {
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
                if lower_thread(tid, below) {
                    lowered += 1;
                }
            }
        }
        lowered
    }

    /// Puts this process's own threads whose name starts with `prefix` (Mesa's software
    /// rasterizer threads, which put the web view's frames on screen) `below`, where they are
    /// not yet; returns how many threads it changed.
    pub fn lower_own_threads_named(prefix: &str, below: Below) -> usize {
        let Ok(tasks) = fs::read_dir("/proc/self/task") else { return 0 };
        tasks
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|tid| fs::read_to_string(format!("/proc/self/task/{tid}/comm")).is_ok_and(|name| name.starts_with(prefix)))
            .filter(|&tid| lower_thread(tid, below))
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

    /// Puts one thread `below`; false where it already was (or the thread is gone). A thread
    /// that may not take `SCHED_IDLE` gets nice 19.
    fn lower_thread(tid: u32, below: Below) -> bool {
        match below {
            Below::Idle => {
                // SAFETY: sched_getscheduler/sched_setscheduler read and write a thread's
                // scheduling policy; `param` outlives the call.
                let idle = unsafe {
                    match libc::sched_getscheduler(tid as libc::pid_t) {
                        libc::SCHED_IDLE => return false,
                        -1 => return false,
                        _ => {
                            let param = libc::sched_param { sched_priority: 0 };
                            libc::sched_setscheduler(tid as libc::pid_t, libc::SCHED_IDLE, &param) == 0
                        }
                    }
                };
                idle || lower_thread(tid, Below::Nice(19))
            }
            // On Linux, PRIO_PROCESS with a thread id sets that one thread's nice value.
            // SAFETY: getpriority/setpriority read and write a scheduling value; no memory is shared.
            Below::Nice(nice) => unsafe {
                *libc::__errno_location() = 0;
                let current = libc::getpriority(libc::PRIO_PROCESS, tid);
                if *libc::__errno_location() != 0 || current >= nice {
                    return false;
                }
                libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0
            },
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
            assert_eq!(lower_children_named("sleep", Below::Nice(5)), 1, "the child's one thread is lowered");
            assert_eq!(lower_children_named("sleep", Below::Nice(5)), 0, "and only once");
            assert_eq!(lower_children_named("sleep", Below::Idle), 1, "then put under SCHED_IDLE");
            // SAFETY: reads the child's scheduling policy.
            assert_eq!(unsafe { libc::sched_getscheduler(child.id() as libc::pid_t) }, libc::SCHED_IDLE);
            assert_eq!(lower_children_named("sleep", Below::Idle), 0, "once");
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
            assert_eq!(lower_own_threads_named("llvmpipe-test", Below::Idle), 1);
            assert_eq!(lower_own_threads_named("llvmpipe-test", Below::Idle), 0, "only once");
            quit.send(()).unwrap();
            thread.join().unwrap();
        }
    }
}
