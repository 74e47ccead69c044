//! The event loop's turns, counted where JavaScript reads them without a call.
//!
//! Inline native work (small stores, searches) resolves promises without giving the
//! event loop a turn, so the JavaScript glue bounds each run of it and must know when
//! the loop has gone round. Scheduling an immediate to find out costs tens of
//! microseconds when Node's timer code is cold, as it is for the first offload after a
//! model call. Instead, a libuv prepare handle adds one to a counter at every turn of
//! the loop, and JavaScript reads it through an `ArrayBuffer` over it: a plain array read.
//!
//! It counts just before the loop polls for I/O, so one count spans the I/O callbacks,
//! the immediates and then the timers of the next turn: work resumed by I/O and by the
//! immediates that follow it is one run, and timers fire before the next one begins.
//!
//! The counter is the addon's own memory, never freed (four bytes per environment), so
//! nothing JavaScript does with the buffer (transferring, detaching) can make the
//! handle write elsewhere. The handle does not keep the loop alive (it is unreferenced)
//! and is closed by an async cleanup hook when the environment (the main thread or a
//! worker) shuts down. libuv's functions are looked up in the running process
//! (`dlsym`); where that is not possible (Windows, or a runtime that refuses external
//! buffers), [`count_loop_turns`] answers `null` and the glue keeps scheduling
//! immediates.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

/// A JavaScript value made here with Node-API directly, returned as it is.
pub struct RawValue(sys::napi_value);

impl TypeName for RawValue {
  fn type_name() -> &'static str {
    "ArrayBuffer"
  }
  fn value_type() -> ValueType {
    ValueType::Object
  }
}

impl ToNapiValue for RawValue {
  unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
    Ok(value.0)
  }
}

/// Starts counting the event loop's turns and returns a 4-byte `ArrayBuffer` over the
/// count (read it as `new Int32Array(buffer)[0]`; it wraps around), or `null` when turns
/// cannot be counted here (then nothing was started). Each call starts one more counter:
/// the JavaScript glue calls it once per environment.
#[napi(catch_unwind, ts_return_type = "ArrayBuffer | null")]
pub fn count_loop_turns(env: Env) -> Result<Option<RawValue>> {
  #[cfg(unix)]
  {
    // SAFETY: `env` is the calling thread's environment.
    Ok(unsafe { uv::start(env.raw()) }.map(RawValue))
  }
  #[cfg(not(unix))]
  {
    let _ = env;
    Ok(None)
  }
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

  /// libuv's `UV_CHECK` and `UV_PREPARE` handle types (stable across libuv 1.x).
  const UV_CHECK: c_int = 2;
  const UV_PREPARE: c_int = 9;

  type HandleSize = unsafe extern "C" fn(c_int) -> usize;
  type PrepareInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut Handle) -> c_int;
  type PrepareStart = unsafe extern "C" fn(*mut Handle, HandleCallback) -> c_int;
  type Close = unsafe extern "C" fn(*mut Handle, HandleCallback);

  struct Api {
    handle_size: HandleSize,
    prepare_init: PrepareInit,
    prepare_start: PrepareStart,
    unref: HandleCallback,
    close: Close,
  }

  /// What one environment's prepare handle needs: its memory and the cleanup hook's handle.
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
            prepare_init: std::mem::transmute::<*mut c_void, PrepareInit>(symbol(c"uv_prepare_init")?),
            prepare_start: std::mem::transmute::<*mut c_void, PrepareStart>(symbol(c"uv_prepare_start")?),
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
  unsafe extern "C" fn on_turn(handle: *mut Handle) {
    let slot = *handle.cast::<*mut i32>();
    *slot = (*slot).wrapping_add(1);
  }

  /// Starts a prepare handle on `env`'s loop counting into memory of its own, and
  /// returns an `ArrayBuffer` over that memory; `None` when libuv cannot be reached or
  /// refuses, or the runtime refuses external buffers.
  pub(super) unsafe fn start(env: sys::napi_env) -> Option<sys::napi_value> {
    let api = api()?;
    let mut event_loop = std::ptr::null_mut();
    if sys::napi_get_uv_event_loop(env, &mut event_loop) != sys::Status::napi_ok || event_loop.is_null() {
      return None;
    }
    // Never freed: JavaScript may keep (or have transferred) a view of it for as long
    // as the process lives, and the handle writes to it until it is closed.
    let slot: *mut i32 = Box::leak(Box::new(0i32));
    let mut buffer = std::ptr::null_mut();
    let created = sys::napi_create_external_arraybuffer(
      env,
      slot.cast(),
      std::mem::size_of::<i32>(),
      None,
      std::ptr::null_mut(),
      &mut buffer,
    );
    if created != sys::Status::napi_ok || buffer.is_null() {
      return None;
    }
    let size = (api.handle_size)(UV_PREPARE);
    // Both are a plain handle with one callback: equal sizes confirm the type's number.
    if size == 0 || size != (api.handle_size)(UV_CHECK) {
      return None;
    }
    let layout = Layout::from_size_align(size.max(std::mem::size_of::<*mut i32>()), 16).ok()?;
    let handle = alloc_zeroed(layout).cast::<Handle>();
    if handle.is_null() {
      return None;
    }
    if (api.prepare_init)(event_loop, handle) != 0 {
      dealloc(handle.cast(), layout);
      return None;
    }
    *handle.cast::<*mut i32>() = slot;
    let turns = Box::into_raw(Box::new(Turns { handle, layout, remove: std::ptr::null_mut() }));
    let hooked = sys::napi_add_async_cleanup_hook(env, Some(on_cleanup), turns.cast(), &mut (*turns).remove);
    if hooked != sys::Status::napi_ok {
      // Initialised but never started: closing it is still required before freeing.
      (*turns).remove = std::ptr::null_mut();
      *handle.cast::<*mut c_void>() = turns.cast();
      (api.close)(handle, on_close);
      return None;
    }
    (api.prepare_start)(handle, on_turn);
    (api.unref)(handle);
    Some(buffer)
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
