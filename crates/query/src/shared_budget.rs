//! The memory budget shared by all queries of the process.
//!
//! Each query charges its memory to its own budget
//! ([`crate::QueryLimits::max_memory_bytes`]) and, in chunks, reserves the same
//! bytes from one process-wide budget of [`SHARED_MEMORY_BYTES`]. A query
//! gives its reservation back only when its thread has dropped the document
//! and every value it built, so the queries running at the same time (and
//! those still freeing their memory after answering) never hold more than the
//! shared budget together.
//!
//! When a reservation cannot be granted, the query waits while other queries
//! are freeing memory (they have answered and will release soon), but not past
//! its deadline; if no query is freeing memory, or the deadline comes first,
//! the reservation fails and the query stops as too expensive.
//!
//! Documents kept to be queried again ([`crate::ParsedDocument`]) hold a share
//! of this budget too, for as long as they live. Whoever keeps them can
//! register a relief ([`on_memory_pressure`]): when a reservation cannot be
//! granted, the relief is asked once to drop kept documents before the query
//! waits or fails.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Instant;

/// Bytes of memory all queries running at the same time may hold together: 2 GiB.
pub const SHARED_MEMORY_BYTES: usize = 2 << 30;

/// The state of the shared budget.
struct State {
    /// Bytes not reserved by any query.
    free: usize,
    /// Bytes reserved by queries that have answered and are freeing their memory.
    releasing: usize,
}

/// The shared budget and the signal of its changes.
struct Pool {
    state: Mutex<State>,
    changed: Condvar,
}

static POOL: Pool = Pool {
    state: Mutex::new(State {
        free: SHARED_MEMORY_BYTES,
        releasing: 0,
    }),
    changed: Condvar::new(),
};

/// Drops kept documents to free at least the given bytes of the shared budget;
/// returns whether it dropped anything.
pub type MemoryRelief = Arc<dyn Fn(usize) -> bool + Send + Sync>;

/// The relief asked before a reservation fails (see [`on_memory_pressure`]).
static RELIEF: RwLock<Option<MemoryRelief>> = RwLock::new(None);

/// Sets the function asked to drop kept documents when the shared budget
/// cannot grant a query's reservation: it is called (on the query's thread,
/// outside every lock of the budget) with the bytes missing, should drop
/// documents it keeps that are worth at least that much if it can, and
/// returns whether it dropped any. The query then tries again once. `None`
/// removes the relief.
pub fn on_memory_pressure(relief: Option<MemoryRelief>) {
    *RELIEF.write().unwrap_or_else(PoisonError::into_inner) = relief;
}

/// Asks the relief (if any) to free `bytes`; whether it dropped something.
fn relieve(bytes: usize) -> bool {
    let relief = RELIEF
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    relief.is_some_and(|relief| relief(bytes))
}

fn lock() -> MutexGuard<'static, State> {
    // the state stays consistent even if a holder panicked: it only adds and subtracts
    POOL.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Bytes of the shared budget held by one query; given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct Reservation {
    bytes: usize,
    releasing: bool,
}

impl Reservation {
    /// Reserves `bytes` more, waiting (at most until `deadline`) while other
    /// queries are freeing memory. Returns false if the bytes were not granted.
    pub(crate) fn grow(&mut self, bytes: usize, deadline: Instant) -> bool {
        if bytes == 0 {
            return true;
        }
        if bytes > SHARED_MEMORY_BYTES {
            return false;
        }
        let mut state = lock();
        let mut relieved = false;
        loop {
            if state.free >= bytes {
                state.free -= bytes;
                self.bytes += bytes;
                return true;
            }
            if !relieved {
                // kept documents go before a query waits or fails
                relieved = true;
                let missing = bytes - state.free;
                drop(state);
                let dropped = relieve(missing);
                state = lock();
                if dropped {
                    continue;
                }
            }
            let now = Instant::now();
            if state.releasing == 0 || now >= deadline {
                return false;
            }
            state = match POOL.changed.wait_timeout(state, deadline - now) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Reserves `bytes` more if they are free now: no kept document is
    /// dropped for them and nothing is waited for.
    pub(crate) fn try_grow(&mut self, bytes: usize) -> bool {
        let mut state = lock();
        if state.free < bytes {
            return false;
        }
        state.free -= bytes;
        self.bytes += bytes;
        true
    }

    /// Adds the bytes of `other` to this reservation.
    pub(crate) fn absorb(&mut self, mut other: Reservation) {
        let moved = core::mem::take(&mut other.bytes);
        if other.releasing && !self.releasing {
            lock().releasing -= moved;
        } else if self.releasing && !other.releasing {
            lock().releasing += moved;
        }
        self.bytes += moved;
    }

    /// Bytes reserved.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Moves `bytes` of this reservation (at most all of it) into a new one.
    pub(crate) fn split_off(&mut self, bytes: usize) -> Reservation {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        if self.releasing {
            // the moved bytes are not being freed (yet)
            lock().releasing -= bytes;
        }
        Reservation {
            bytes,
            releasing: false,
        }
    }

    /// Marks the reservation as being freed: the query has answered and is
    /// dropping its values, so queries waiting for memory may wait for it.
    pub(crate) fn start_release(&mut self) {
        if !self.releasing && self.bytes > 0 {
            self.releasing = true;
            lock().releasing += self.bytes;
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut state = lock();
        state.free += self.bytes;
        if self.releasing {
            state.releasing -= self.bytes;
        }
        drop(state);
        POOL.changed.notify_all();
    }
}

/// Bytes of the shared budget not reserved at the moment.
#[cfg(test)]
pub(crate) fn free() -> usize {
    lock().free
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // the only unit test touching the shared budget, so that the counts below are exact
    #[test]
    fn reservations_wait_only_for_memory_being_freed() {
        let soon = || Instant::now() + Duration::from_secs(5);
        let mut big = Reservation::default();
        assert!(big.grow(SHARED_MEMORY_BYTES - 100, soon()));
        assert_eq!(free(), 100);
        // nothing is being freed: fails at once
        let mut other = Reservation::default();
        let start = Instant::now();
        assert!(!other.grow(200, soon()));
        assert!(start.elapsed() < Duration::from_secs(1));
        assert!(other.grow(100, soon()));
        assert!(!Reservation::default().grow(SHARED_MEMORY_BYTES + 1, soon()));
        // the big one is being freed: a waiting query gets its bytes when it is dropped
        big.start_release();
        let waiter = std::thread::spawn(move || {
            let mut r = Reservation::default();
            let granted = r.grow(1 << 20, Instant::now() + Duration::from_secs(20));
            (granted, r.bytes())
        });
        std::thread::sleep(Duration::from_millis(100));
        drop(big);
        assert_eq!(waiter.join().ok(), Some((true, 1 << 20)));
        drop(other);
        assert_eq!(free(), SHARED_MEMORY_BYTES);
    }
}
