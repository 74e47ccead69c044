//! Freeing large native state away from the JavaScript thread.
//!
//! A class instance's native half is dropped by its napi finalizer, which Node runs
//! on the JavaScript thread (from an immediate, after the garbage collection that
//! found the instance unreachable). Freeing a file store whose catalog records
//! 100,000 artifacts, or a memory store holding thousands of blocks, takes tens of
//! milliseconds: the event loop would stall for as long. Such state is handed to one
//! background thread that frees it instead.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

/// Anything that may be freed on another thread.
type Garbage = Box<dyn Send>;

/// The background thread's inbox (`None` when the thread could not be started).
static DROPPER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();

/// Bytes from which a buffer is freed in the background (freeing a large block
/// unmaps its pages: about a millisecond per 10 MB).
pub(crate) const BACKGROUND_FREE_BYTES: usize = 4 << 20;

fn dropper() -> Option<&'static Sender<Garbage>> {
  DROPPER
    .get_or_init(|| {
      let (inbox, garbage) = channel::<Garbage>();
      std::thread::Builder::new()
        .name("offload-free".into())
        .spawn(move || {
          lower_priority();
          for value in garbage {
            // A panicking destructor must not end the thread (the next values would
            // then be freed on the JavaScript thread).
            let _ = catch_unwind(AssertUnwindSafe(move || drop(value)));
          }
        })
        .ok()
        .map(|_| inbox)
    })
    .as_ref()
}

/// Lowers the calling thread's priority to the lowest (nice 19): freeing is never
/// urgent, and the JavaScript thread must not wait for a core because of it.
fn lower_priority() {
  #[cfg(target_os = "linux")]
  // SAFETY: `setpriority` on the calling thread's own id changes only its niceness;
  // a failure (refused by the system) leaves the thread as it was.
  unsafe {
    libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
  }
}

/// Drops `value` on the background thread; on the calling thread when that thread
/// is not running.
pub(crate) fn drop_in_background<T: Send + 'static>(value: T) {
  match dropper() {
    Some(inbox) => {
      if let Err(returned) = inbox.send(Box::new(value)) {
        drop(returned.0);
      }
    }
    None => drop(value),
  }
}

