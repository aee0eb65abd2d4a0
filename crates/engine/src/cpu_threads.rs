//! How many threads Confab's CPU kernels split their own loops over (`native/thread_pool.h`):
//! the physical cores this process may run on, or `CONFAB_CPU_THREADS`. For `confab doctor`;
//! the tests below prove the pool's splitting on more threads than the machine has.

use std::ffi::c_int;

extern "C" {
    fn confab_cpu_threads(from: *mut c_int) -> c_int;
}

/// The environment variable that sets the kernels' thread count (1 to 1024).
pub const THREADS_ENV: &str = "CONFAB_CPU_THREADS";

/// What `confab doctor` reports about the kernels' threads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CpuThreads {
    /// Threads the kernels' loops split over, the calling thread among them.
    pub threads: usize,
    /// `physical cores`, or `CONFAB_CPU_THREADS`.
    pub from: &'static str,
    /// `CONFAB_CPU_THREADS` as set when it was not a count from 1 to 1024 (and so ignored).
    pub ignored_env: Option<String>,
}

impl CpuThreads {
    /// The pool's size, as read once for the process.
    pub fn probe() -> Self {
        let mut from: c_int = 0;
        // SAFETY: writes one int; reads the environment and /sys once.
        let threads = unsafe { confab_cpu_threads(&mut from) };
        let ignored_env = (from == 2).then(|| std::env::var(THREADS_ENV).unwrap_or_default());
        Self {
            threads: usize::try_from(threads).unwrap_or(1).max(1),
            from: if from == 1 { THREADS_ENV } else { "physical cores" },
            ignored_env,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The pool through its check entry points (`native/thread_pool.cpp`), on pools of 1 to 16
    //! threads whatever this machine has.
    use std::ffi::{c_int, c_void};

    extern "C" {
        fn confab_cpu_pool_new(threads: c_int) -> *mut c_void;
        fn confab_cpu_pool_free(pool: *mut c_void);
        fn confab_cpu_pool_check_pieces(
            pool: *mut c_void,
            count: i64,
            cost_ns: *const i64,
            sleeper: i64,
            sleep_ms: c_int,
            hits: *mut i32,
            by_thread: *mut i32,
            caller: *mut i32,
        ) -> c_int;
        fn confab_cpu_pool_check_rows(pool: *mut c_void, rows: i64, work_per_row: i64, hits: *mut i32) -> i64;
        fn confab_cpu_pool_check_nested(pool: *mut c_void, outer: i64, inner: i64, hits: *mut i32);
        fn confab_cpu_pool_check_waiting(
            pool: *mut c_void,
            sleep_ms: c_int,
            idle_ms: c_int,
            wait_ns: *mut i64,
            wait_cpu_ns: *mut i64,
            idle_cpu_ns: *mut i64,
        );
        fn confab_cpu_pool_check_throw(pool: *mut c_void, count: i64, thrower: i64) -> c_int;
    }

    /// A pool of its own, freed (its workers joined) on drop.
    struct Pool(*mut c_void);

    // SAFETY: the pool is made for callers on several threads (one job at a time; the others
    // run theirs alone).
    unsafe impl Send for Pool {}
    unsafe impl Sync for Pool {}

    impl Pool {
        fn new(threads: i32) -> Self {
            // SAFETY: returns a new pool, freed in drop.
            Self(unsafe { confab_cpu_pool_new(threads) })
        }

        /// Runs `count` pieces (piece i busy for cost_ns[i], `sleeper` sleeping sleep_ms
        /// midway): how many times each piece ran, which thread ran it, and the caller's tag.
        fn pieces(&self, count: usize, cost_ns: Option<&[i64]>, sleeper: Option<usize>, sleep_ms: i32) -> (Vec<i32>, Vec<i32>, i32) {
            let (mut hits, mut by_thread, mut caller) = (vec![0; count], vec![-1; count], -1);
            if let Some(costs) = cost_ns {
                assert_eq!(costs.len(), count);
            }
            // SAFETY: the buffers hold `count` entries; the call returns after every piece ran.
            let bad = unsafe {
                confab_cpu_pool_check_pieces(
                    self.0,
                    count as i64,
                    cost_ns.map_or(std::ptr::null(), |c| c.as_ptr()),
                    sleeper.map_or(-1, |s| s as i64),
                    sleep_ms,
                    hits.as_mut_ptr(),
                    by_thread.as_mut_ptr(),
                    &mut caller,
                )
            };
            assert_eq!(bad, 0, "a piece index outside [0, {count})");
            (hits, by_thread, caller)
        }

        /// over_rows: how many times each row was covered, and in how many calls.
        fn rows(&self, rows: usize, work_per_row: i64) -> (Vec<i32>, i64) {
            let mut hits = vec![0; rows];
            // SAFETY: `hits` holds `rows` entries.
            let calls = unsafe { confab_cpu_pool_check_rows(self.0, rows as i64, work_per_row, hits.as_mut_ptr()) };
            assert!(calls > 0, "an empty or out-of-bounds range ({calls})");
            (hits, calls)
        }
    }

    impl Drop for Pool {
        fn drop(&mut self) {
            // SAFETY: made by confab_cpu_pool_new, freed once.
            unsafe { confab_cpu_pool_free(self.0) }
        }
    }

    fn all_once(hits: &[i32]) -> bool {
        hits.iter().all(|&h| h == 1)
    }

    fn distinct(tags: &[i32]) -> usize {
        let mut t = tags.to_vec();
        t.sort_unstable();
        t.dedup();
        t.len()
    }

    #[test]
    fn every_piece_runs_exactly_once_on_pools_larger_than_the_machine() {
        for threads in [1, 2, 3, 8, 16] {
            let pool = Pool::new(threads);
            for count in [1, 2, 3, 7, 64, 1000] {
                let (hits, by_thread, _) = pool.pieces(count, None, None, 0);
                assert!(all_once(&hits), "{threads} threads, {count} pieces: {hits:?}");
                assert!(distinct(&by_thread) <= (threads as usize).min(count), "{threads} threads, {count} pieces");
            }
        }
    }

    #[test]
    fn a_job_of_one_piece_runs_on_the_caller() {
        let pool = Pool::new(16);
        let (hits, by_thread, caller) = pool.pieces(1, Some(&[2_000_000]), None, 0);
        assert_eq!((hits, by_thread), (vec![1], vec![caller]));
    }

    #[test]
    fn uneven_pieces_are_shared_out_and_all_run() {
        // Every seventh piece 2 ms, the rest 20 µs: about 20 ms of work among 8 threads.
        let pool = Pool::new(8);
        let costs: Vec<i64> = (0..64).map(|i| if i % 7 == 0 { 2_000_000 } else { 20_000 }).collect();
        let (hits, by_thread, _) = pool.pieces(64, Some(&costs), None, 0);
        assert!(all_once(&hits), "{hits:?}");
        // More than one thread took pieces (on a 2-core machine the scheduler decides how many
        // more; at least the caller and one worker).
        assert!(distinct(&by_thread) >= 2, "{by_thread:?}");
    }

    #[test]
    fn a_thread_that_sleeps_mid_job_loses_no_work_and_holds_up_no_other_piece() {
        // Piece 0 (the first taken) sleeps 300 ms; the other 63 pieces are 200 µs each, about
        // 13 ms of work: the other threads do them all meanwhile, so the sleeper's thread runs
        // only its own piece. Tolerance: 300 ms against 13 ms leaves room for a machine busy
        // with other work.
        for threads in [2, 8, 16] {
            let pool = Pool::new(threads);
            pool.pieces(threads as usize, None, None, 0); // workers started
            let costs = vec![200_000; 64];
            let (hits, by_thread, _) = pool.pieces(64, Some(&costs), Some(0), 300);
            assert!(all_once(&hits), "{threads} threads: {hits:?}");
            let sleeper_ran = by_thread.iter().filter(|&&t| t == by_thread[0]).count();
            assert_eq!(sleeper_ran, 1, "{threads} threads: the sleeping thread ran {sleeper_ran} pieces: {by_thread:?}");
        }
    }

    #[test]
    fn rows_are_covered_once_in_more_pieces_than_threads() {
        for threads in [1, 2, 8, 16] {
            let pool = Pool::new(threads);
            for rows in [1, 2, 3, 17, 576, 1536, 49_152] {
                // Below the hand-off threshold (2^16 work) the caller runs all rows in one call.
                let (hits, calls) = pool.rows(rows, 16);
                assert!(all_once(&hits), "{threads} threads, {rows} rows, small work");
                if rows * 16 < 1 << 16 {
                    assert_eq!(calls, 1, "{threads} threads, {rows} rows of little work");
                }
                let (hits, calls) = pool.rows(rows, 4096);
                assert!(all_once(&hits), "{threads} threads, {rows} rows");
                if threads == 1 || rows == 1 {
                    assert_eq!(calls, 1);
                } else if rows >= 4 * threads as usize * 16 {
                    // Several pieces per thread: a late or slow thread leaves the rest to others.
                    assert!(calls > threads as i64, "{threads} threads, {rows} rows: {calls} pieces");
                }
            }
        }
    }

    #[test]
    fn a_piece_that_splits_again_runs_its_rows_itself() {
        for threads in [2, 8, 16] {
            let pool = Pool::new(threads);
            let (outer, inner) = (32, 500);
            let mut hits = vec![0; outer * inner];
            // SAFETY: `hits` holds outer × inner entries.
            unsafe { confab_cpu_pool_check_nested(pool.0, outer as i64, inner as i64, hits.as_mut_ptr()) };
            assert!(all_once(&hits), "{threads} threads");
        }
    }

    #[test]
    fn concurrent_callers_share_one_pool_and_lose_nothing() {
        // Four threads, each 300 jobs on one 8-thread pool: one has the pool at a time, the
        // others run theirs alone; every job covers its rows once.
        let pool = Pool::new(8);
        std::thread::scope(|s| {
            for caller in 0..4 {
                let pool = &pool;
                s.spawn(move || {
                    for job in 0..300 {
                        let rows = 64 + (caller * 300 + job) % 700;
                        let (hits, _) = pool.rows(rows, 4096);
                        assert!(all_once(&hits), "caller {caller}, job {job}, {rows} rows");
                    }
                });
            }
        });
    }

    #[test]
    fn many_small_jobs_in_a_row_hand_off_correctly() {
        // Jobs just over the threshold, back to back: the hand-off's races, if any, show here.
        for threads in [2, 16] {
            let pool = Pool::new(threads);
            for job in 0..5000 {
                let (hits, _) = pool.rows(2 + job % 64, 1 << 15);
                assert!(all_once(&hits), "{threads} threads, job {job}");
            }
        }
    }

    #[test]
    fn waiting_callers_and_idle_workers_sleep_instead_of_spinning() {
        // The caller waits about 100 ms for pieces that sleep on the workers: it may spin a few
        // µs, then sleeps, so it uses well under 10% of a core meanwhile (measured: about 50
        // µs). Then 200 ms idle: the workers may spin 100 µs each after the job, then sleep;
        // 15 workers use under 20 ms in all.
        let pool = Pool::new(16);
        let (mut wait, mut wait_cpu, mut idle_cpu) = (0i64, 0i64, 0i64);
        // SAFETY: writes three integers.
        unsafe { confab_cpu_pool_check_waiting(pool.0, 100, 200, &mut wait, &mut wait_cpu, &mut idle_cpu) };
        assert!(wait > 20_000_000, "the caller should have waited for the sleeping pieces: {wait} ns");
        assert!(wait_cpu < wait / 10, "the waiting caller used {wait_cpu} ns of CPU in {wait} ns");
        assert!(idle_cpu < 20_000_000, "the idle workers used {idle_cpu} ns of CPU in 200 ms");
    }

    #[test]
    fn a_piece_that_throws_reaches_the_caller_and_the_pool_goes_on() {
        for threads in [1, 2, 8] {
            let pool = Pool::new(threads);
            for thrower in [0, 5, 63] {
                // SAFETY: no buffers.
                assert_eq!(unsafe { confab_cpu_pool_check_throw(pool.0, 64, thrower) }, 1, "{threads} threads, piece {thrower}");
            }
        }
    }

    #[test]
    fn the_shared_pool_has_at_least_one_thread() {
        let t = super::CpuThreads::probe();
        assert!(t.threads >= 1);
    }
}
