//! The event loop's turns, counted where JavaScript reads them without a call.
//!
//! Inline native work (small stores, searches) resolves promises without giving the
//! event loop a turn, so the JavaScript glue bounds each run of it and must know when
//! the loop has gone round. Scheduling an immediate to find out costs tens of
//! microseconds when Node's timer code is cold, as it is for the first offload after a
//! model call. Instead, a libuv check handle adds one to an `Int32Array` that
//! JavaScript owns at every turn of the loop: reading it is a plain array read.
//!
//! The handle does not keep the loop alive (it is unreferenced) and is closed by an
//! async cleanup hook when the environment (the main thread or a worker) shuts down.
//! libuv's functions are looked up in the running process (`dlsym`); where that is not
//! possible (Windows), [`count_loop_turns`] answers `false` and the glue keeps
//! scheduling immediates.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

/// A typed array argument not yet read (see [`count_loop_turns`]).
pub struct CounterArg {
  env: sys::napi_env,
  value: sys::napi_value,
}

impl TypeName for CounterArg {
  fn type_name() -> &'static str {
    "Int32Array"
  }
  fn value_type() -> ValueType {
    ValueType::Object
  }
}

impl ValidateNapiValue for CounterArg {}

impl FromNapiValue for CounterArg {
  unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
    Ok(CounterArg { env, value })
  }
}

/// Starts counting the event loop's turns into `counter[0]` (an `Int32Array`; the count
/// wraps around). Returns `false` when turns cannot be counted on this platform; then
/// nothing was started. Called once per environment by the JavaScript glue.
#[napi(catch_unwind, ts_args_type = "counter: Int32Array")]
pub fn count_loop_turns(counter: CounterArg) -> Result<bool> {
  let slot = counter_slot(&counter)?;
  #[cfg(unix)]
  {
    // SAFETY: `slot` points into the array's backing store, kept alive by a reference
    // that is never released (see `counter_slot`); `counter.env` is the calling thread's.
    Ok(unsafe { uv::start(counter.env, slot) })
  }
  #[cfg(not(unix))]
  {
    let _ = slot;
    Ok(false)
  }
}

/// The address of `counter[0]`, after checking that `counter` is an `Int32Array` of at
/// least one element. The array is referenced for good, so its memory stays where it is.
fn counter_slot(counter: &CounterArg) -> Result<*mut i32> {
  let mut kind = sys::TypedarrayType::int8_array;
  let mut length = 0usize;
  let mut data = std::ptr::null_mut();
  let mut buffer = std::ptr::null_mut();
  let mut offset = 0usize;
  let mut is_typed_array = false;
  // SAFETY: plain napi queries on the argument, on the thread that passed it.
  unsafe {
    check_status!(sys::napi_is_typedarray(counter.env, counter.value, &mut is_typed_array))?;
    if is_typed_array {
      check_status!(sys::napi_get_typedarray_info(
        counter.env,
        counter.value,
        &mut kind,
        &mut length,
        &mut data,
        &mut buffer,
        &mut offset
      ))?;
    }
  }
  if !is_typed_array || kind != sys::TypedarrayType::int32_array || length == 0 || data.is_null() {
    return Err(Error::new(Status::InvalidArg, "countLoopTurns takes an Int32Array of at least one element"));
  }
  let mut reference = std::ptr::null_mut();
  // SAFETY: as above; the reference is never deleted, so the backing store outlives
  // every turn of the loop that writes to it.
  check_status!(unsafe { sys::napi_create_reference(counter.env, counter.value, 1, &mut reference) })?;
  Ok(data.cast())
}

#[cfg(unix)]
mod uv {
  //! The few libuv functions needed, found in the running process.
  use napi::sys;
  use std::alloc::{alloc_zeroed, dealloc, Layout};
  use std::ffi::{c_int, c_void, CStr};
  use std::sync::OnceLock;

  type Handle = c_void;
  type HandleCallback = unsafe extern "C" fn(*mut Handle);

  /// libuv's `UV_CHECK` handle type (stable across libuv 1.x).
  const UV_CHECK: c_int = 2;

  type HandleSize = unsafe extern "C" fn(c_int) -> usize;
  type CheckInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut Handle) -> c_int;
  type CheckStart = unsafe extern "C" fn(*mut Handle, HandleCallback) -> c_int;
  type Close = unsafe extern "C" fn(*mut Handle, HandleCallback);

  struct Api {
    handle_size: HandleSize,
    check_init: CheckInit,
    check_start: CheckStart,
    unref: HandleCallback,
    close: Close,
  }

  /// What one environment's check handle needs: its memory and the cleanup hook's handle.
  struct Turns {
    handle: *mut Handle,
    layout: Layout,
    remove: sys::napi_async_cleanup_hook_handle,
  }

  fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API
      .get_or_init(|| {
        // SAFETY: each symbol, when the process has it, is libuv's function of that
        // name, whose signature is the one it is cast to.
        unsafe {
          Some(Api {
            handle_size: std::mem::transmute::<*mut c_void, HandleSize>(symbol(c"uv_handle_size")?),
            check_init: std::mem::transmute::<*mut c_void, CheckInit>(symbol(c"uv_check_init")?),
            check_start: std::mem::transmute::<*mut c_void, CheckStart>(symbol(c"uv_check_start")?),
            unref: std::mem::transmute::<*mut c_void, HandleCallback>(symbol(c"uv_unref")?),
            close: std::mem::transmute::<*mut c_void, Close>(symbol(c"uv_close")?),
          })
        }
      })
      .as_ref()
  }

  fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `dlsym` with the default scope only looks a name up.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!found.is_null()).then_some(found)
  }

  /// Every libuv handle starts with its `void *data` field: here, the counter's address.
  unsafe extern "C" fn on_check(handle: *mut Handle) {
    let slot = *handle.cast::<*mut i32>();
    *slot = (*slot).wrapping_add(1);
  }

  /// Starts a check handle on `env`'s loop that counts into `slot`; `false` when libuv
  /// cannot be reached or refuses.
  pub(super) unsafe fn start(env: sys::napi_env, slot: *mut i32) -> bool {
    let Some(api) = api() else { return false };
    let mut event_loop = std::ptr::null_mut();
    if sys::napi_get_uv_event_loop(env, &mut event_loop) != sys::Status::napi_ok || event_loop.is_null() {
      return false;
    }
    let size = (api.handle_size)(UV_CHECK);
    let Ok(layout) = Layout::from_size_align(size.max(std::mem::size_of::<*mut i32>()), 16) else {
      return false;
    };
    let handle = alloc_zeroed(layout).cast::<Handle>();
    if handle.is_null() {
      return false;
    }
    if (api.check_init)(event_loop, handle) != 0 {
      dealloc(handle.cast(), layout);
      return false;
    }
    *handle.cast::<*mut i32>() = slot;
    let turns = Box::into_raw(Box::new(Turns { handle, layout, remove: std::ptr::null_mut() }));
    let hooked = sys::napi_add_async_cleanup_hook(env, Some(on_cleanup), turns.cast(), &mut (*turns).remove);
    if hooked != sys::Status::napi_ok {
      // Initialised but never started: closing it is still required before freeing.
      (*turns).remove = std::ptr::null_mut();
      *handle.cast::<*mut c_void>() = turns.cast();
      (api.close)(handle, on_close);
      return false;
    }
    (api.check_start)(handle, on_check);
    (api.unref)(handle);
    true
  }

  /// The environment shuts down: the handle is closed, and freed once libuv is done with it.
  unsafe extern "C" fn on_cleanup(_hook: sys::napi_async_cleanup_hook_handle, turns: *mut c_void) {
    let turns = turns.cast::<Turns>();
    let Some(api) = api() else { return };
    let handle = (*turns).handle;
    // From now on the handle's data names its owner, for `on_close`.
    *handle.cast::<*mut c_void>() = turns.cast();
    (api.close)(handle, on_close);
  }

  unsafe extern "C" fn on_close(handle: *mut Handle) {
    let turns = Box::from_raw(*handle.cast::<*mut Turns>());
    dealloc(handle.cast(), turns.layout);
    if !turns.remove.is_null() {
      sys::napi_remove_async_cleanup_hook(turns.remove);
    }
  }
}
