//! Locks that outlive a panic elsewhere.

use std::sync::{Mutex, MutexGuard};

/// A poisoned lock only means another command panicked; the data is still usable.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
