//! The allocator's settings: how long freed native memory stays mapped for reuse.

use napi_derive::napi;

/// mimalloc's `purge_delay` option (its index in `mi_option_t`).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys2::mi_option_t = 15;

/// How long freed native memory stays mapped for reuse before mimalloc hands it back to
/// the system, in milliseconds (mimalloc's own default is one second). What a storage
/// holds is freed when V8 collects it, often seconds after the storage went out of use;
/// memory handed back by then has to be faulted in and zeroed again by the next store
/// (on virtual machines, at up to a microsecond per kilobyte: as much as the store
/// itself). Ten seconds lets the next stores reuse it.
const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// Sets the allocator's options when the addon loads, unless the environment sets them
/// (`MIMALLOC_PURGE_DELAY`, read by mimalloc itself).
#[napi_derive::module_init]
fn configure_allocator() {
  if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
    // SAFETY: mi_option_set stores an integer option; it takes no pointers and may be
    // called at any time, from any thread.
    unsafe { libmimalloc_sys2::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
  }
}

/// How long freed native memory stays mapped for reuse, in milliseconds (`-1`: for
/// ever), as the allocator applies it.
#[napi(catch_unwind)]
pub fn allocator_purge_delay_ms() -> i64 {
  // SAFETY: mi_option_get reads an integer option; it takes no pointers.
  i64::from(unsafe { libmimalloc_sys2::mi_option_get(MI_OPTION_PURGE_DELAY) })
}
