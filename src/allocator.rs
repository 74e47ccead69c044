//! The allocator's settings: how long freed native memory stays mapped for reuse, and
//! no transparent huge page requests for it.
//!
//! The option indices are those of mimalloc 3.6's `mi_option_t` (`mimalloc.h` in
//! `libmimalloc-sys2`, whose own table of constants predates some of them).
//! `__test__/allocator.test.ts` checks the effect of each in fresh processes.

use libmimalloc_sys2::mi_option_t;
use napi_derive::napi;

/// mimalloc's `purge_delay` option.
const MI_OPTION_PURGE_DELAY: mi_option_t = 15;
/// mimalloc's `arena_purge_mult` option: freed arena memory is purged after `purge_delay`
/// times this (4 by default in mimalloc 3.6).
const MI_OPTION_ARENA_PURGE_MULT: mi_option_t = 24;
/// mimalloc's `allow_thp` option.
#[cfg(target_os = "linux")]
const MI_OPTION_ALLOW_THP: mi_option_t = 43;

/// How long freed native memory stays mapped for reuse before mimalloc hands it back to
/// the system, in milliseconds (mimalloc's own default is 1 s times its arena multiplier
/// of 4). What a storage holds is freed when V8 collects it, often seconds after the
/// storage went out of use; memory handed back by then has to be faulted in and zeroed
/// again by the next store (on virtual machines, at up to a microsecond per kilobyte: as
/// much as the store itself). Ten seconds lets the next stores reuse it.
const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// Stops mimalloc from asking for transparent huge pages (`madvise(MADV_HUGEPAGE)`) for
/// its memory, unless the environment sets `MIMALLOC_ALLOW_THP` (options set there are
/// left as they are: `mi_option_set_default` changes only defaulted ones). Where the
/// system gives huge pages only to memory that asks for them (`madvise`), the first
/// touch of one stalled a store for milliseconds. Set at run time, not with mimalloc's
/// `no_thp` build switch: that one also turns huge pages off for the whole process and
/// every process it starts (`prctl(PR_SET_THP_DISABLE)`), which is not a library's to
/// decide.
///
/// An ELF constructor of priority 102: after mimalloc's own (101), which reads the option
/// once for that `prctl`, and before any allocation (napi-rs's registrations are
/// constructors of the default priority), so that no memory was asked for before. Where
/// mimalloc's constructor has no priority (compilers without constructor priorities),
/// `mi_process_init` here starts the allocator first, so the order does not matter.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array.00102"]
static NO_HUGE_PAGE_REQUESTS: extern "C" fn() = no_huge_page_requests;

#[cfg(target_os = "linux")]
extern "C" fn no_huge_page_requests() {
  // SAFETY: mi_process_init runs the allocator's initialisation once (later calls do
  // nothing) and may be called before its own constructor; mi_option_set_default stores
  // an integer option unless the environment set it. Neither takes pointers.
  unsafe {
    libmimalloc_sys2::mi_process_init();
    libmimalloc_sys2::mi_option_set_default(MI_OPTION_ALLOW_THP, 0);
  }
}

/// Sets the allocator's purge delay when the addon loads, unless the environment sets it
/// (`MIMALLOC_PURGE_DELAY`, `MIMALLOC_ARENA_PURGE_MULT`, in any case and under their
/// legacy names, read by mimalloc itself when it starts).
#[napi_derive::module_init]
fn configure_allocator() {
  // SAFETY: mi_process_init runs the allocator's initialisation once (it has run by now:
  // this is a constructor of the default priority); mi_option_set_default stores an
  // integer option unless the environment set it. None takes pointers.
  unsafe {
    libmimalloc_sys2::mi_process_init();
    libmimalloc_sys2::mi_option_set_default(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
    libmimalloc_sys2::mi_option_set_default(MI_OPTION_ARENA_PURGE_MULT, 1);
  }
}

/// How long freed native memory stays mapped for reuse, in milliseconds (`-1`: for
/// ever), as the allocator applies it to its arenas (the purge delay times the arena
/// multiplier).
#[napi(catch_unwind)]
// `c_long` is 32 bits on Windows: the conversions are not useless there.
#[allow(clippy::useless_conversion)]
pub fn allocator_purge_delay_ms() -> i64 {
  // SAFETY: mi_option_get reads an integer option; it takes no pointers.
  let (delay, mult) = unsafe {
    (
      i64::from(libmimalloc_sys2::mi_option_get(MI_OPTION_PURGE_DELAY)),
      i64::from(libmimalloc_sys2::mi_option_get(MI_OPTION_ARENA_PURGE_MULT)),
    )
  };
  // mimalloc's own arithmetic (`mi_arena_purge_delay`): negative is never, zero at once,
  // and a product that overflows falls back to the delay alone.
  if delay < 0 || mult < 0 {
    -1
  } else {
    match delay.checked_mul(mult) {
      Some(total) if total <= i64::from(std::ffi::c_long::MAX) => total,
      _ => delay,
    }
  }
}
