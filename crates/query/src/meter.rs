//! Per-thread resource meter consulted by every metered operation.
//!
//! The evaluator thread installs a [`Meter`] before it parses or evaluates
//! anything. Metered operations call [`tick`] (evaluation steps, time, stack
//! depth) and [`charge`] (memory). When a limit is exceeded the meter records
//! which one and unwinds the evaluator thread with [`std::panic::resume_unwind`]
//! carrying a [`Trip`] payload; `resume_unwind` does not run the panic hook, so
//! nothing is printed. The unwinding is caught by `catch_unwind` at the top of
//! the evaluator thread and turned into a [`crate::QueryError::TooExpensive`].
//!
//! Unwinding (rather than returning a jq error) is what makes the limits hard:
//! a jq error can be swallowed by `try`, `?` or `//`, an unwinding cannot.

use crate::shared_budget::Reservation;
use std::cell::{Cell, RefCell};
use std::time::Instant;

/// Which limit stopped a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The evaluation step budget was used up.
    Steps,
    /// The wall-clock time budget was used up.
    Time,
    /// The cumulative allocation budget was used up.
    Memory,
    /// A value would have been nested deeper than [`crate::limits::MAX_DEPTH`].
    Depth,
    /// The evaluation recursed so deeply that the thread stack nearly ran out.
    Recursion,
    /// The memory shared by all queries of the process is held by other queries.
    SharedMemory,
}

/// Unwinding payload used to abort an evaluation that exceeded a limit.
pub(crate) struct Trip(pub(crate) Limit);

/// How many steps may pass between two looks at the clock.
const CLOCK_EVERY: u64 = 512;

/// Resource counters of the current thread.
struct Meter {
    steps_left: Cell<u64>,
    /// When `steps_left` falls to this value, the clock is consulted.
    next_clock: Cell<u64>,
    deadline: Cell<Option<Instant>>,
    mem_left: Cell<usize>,
    /// Bytes reserved from the shared budget and not charged yet.
    reserved_left: Cell<usize>,
    /// Bytes charged ahead for an allocation that is about to happen.
    prepaid: Cell<usize>,
    /// Lowest stack address that evaluation may reach (0: unchecked).
    stack_floor: Cell<usize>,
    tripped: Cell<Option<Limit>>,
}

thread_local! {
    static METER: Meter = const {
        Meter {
            steps_left: Cell::new(u64::MAX),
            next_clock: Cell::new(0),
            deadline: Cell::new(None),
            mem_left: Cell::new(usize::MAX),
            reserved_left: Cell::new(usize::MAX),
            prepaid: Cell::new(0),
            stack_floor: Cell::new(0),
            tripped: Cell::new(None),
        }
    };
}

/// Called once with the limit when the first limit trips (before unwinding).
type TripHook = Box<dyn FnOnce(Limit)>;

thread_local! {
    /// The current query's share of the shared budget.
    static RESERVATION: RefCell<Reservation> = RefCell::new(Reservation::default());
}

/// Smallest piece of the shared budget reserved at a time.
const RESERVE_CHUNK: usize = 32 << 20;

thread_local! {
    static ON_TRIP: RefCell<Option<TripHook>> = const { RefCell::new(None) };
}

/// Sets the function called when a limit trips, before the thread unwinds.
///
/// The evaluator thread uses it to hand the error to the caller at once,
/// before unwinding drops what the query built.
pub(crate) fn on_trip(hook: impl FnOnce(Limit) + 'static) {
    ON_TRIP.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
}

/// Approximate current stack address.
#[inline(always)]
pub(crate) fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Installs fresh budgets for the current thread.
///
/// `memory` is the query's own memory budget; `reservation` its share of the
/// shared budget so far, which grows as the query charges memory (see
/// [`crate::shared_budget`]). `stack_room` is how many bytes of stack below the
/// current position evaluation may use before it is stopped with
/// [`Limit::Recursion`].
pub(crate) fn install(
    steps: u64,
    deadline: Instant,
    memory: usize,
    reservation: Reservation,
    stack_room: usize,
) {
    let floor = stack_address().saturating_sub(stack_room);
    METER.with(|m| {
        m.steps_left.set(steps);
        m.next_clock.set(steps.saturating_sub(CLOCK_EVERY));
        m.deadline.set(Some(deadline));
        m.mem_left.set(memory);
        m.reserved_left.set(0);
        m.prepaid.set(0);
        m.stack_floor.set(floor);
        m.tripped.set(None);
    });
    RESERVATION.with(|r| *r.borrow_mut() = reservation);
}

/// Moves `bytes` of what the query has charged out of its share of the shared
/// budget, into a reservation of their own (held by a document that outlives
/// the query). The query's own memory budget still counts them.
pub(crate) fn split_reservation(bytes: usize) -> Reservation {
    RESERVATION.with(|r| r.borrow_mut().split_off(bytes))
}

/// Marks the query's share of the shared budget as being freed (it has answered).
pub(crate) fn start_release() {
    RESERVATION.with(|r| r.borrow_mut().start_release());
}

/// Gives the query's share of the shared budget back; call it once the
/// query's memory is freed.
pub(crate) fn release() {
    let reservation = RESERVATION.with(|r| core::mem::take(&mut *r.borrow_mut()));
    METER.with(|m| m.reserved_left.set(usize::MAX));
    drop(reservation);
}

/// Records `limit` as exceeded and unwinds the evaluator thread.
#[cold]
pub(crate) fn trip(limit: Limit) -> ! {
    METER.with(|m| {
        if m.tripped.get().is_none() {
            m.tripped.set(Some(limit));
        }
    });
    if let Some(hook) = ON_TRIP.with(|h| h.borrow_mut().take()) {
        hook(limit);
    }
    std::panic::resume_unwind(Box::new(Trip(limit)))
}

/// The limit that stopped the current evaluation, if any.
pub(crate) fn tripped() -> Option<Limit> {
    METER.with(|m| m.tripped.get())
}

/// Counts `n` evaluation steps and checks time and stack depth.
#[inline]
pub(crate) fn tick(n: u64) {
    let verdict = METER.with(|m| {
        let left = m.steps_left.get();
        if left < n {
            return Some(Limit::Steps);
        }
        let left = left - n;
        m.steps_left.set(left);
        if left <= m.next_clock.get() {
            m.next_clock.set(left.saturating_sub(CLOCK_EVERY));
            if m.deadline.get().is_some_and(|d| Instant::now() >= d) {
                return Some(Limit::Time);
            }
        }
        if stack_address() < m.stack_floor.get() {
            return Some(Limit::Recursion);
        }
        None
    });
    if let Some(limit) = verdict {
        trip(limit);
    }
}

/// Checks only the clock (for long loops outside the evaluator, such as parsing).
pub(crate) fn check_time() {
    let late = METER.with(|m| m.deadline.get().is_some_and(|d| Instant::now() >= d));
    if late {
        trip(Limit::Time);
    }
}

/// Charges `bytes` against the cumulative allocation budget.
///
/// Call this *before* allocating, so that a single huge allocation (for
/// example `"a" * 1e12`) is refused instead of aborting the process.
#[inline]
pub(crate) fn charge(bytes: usize) {
    let charged = METER.with(|m| {
        let (left, reserved) = (m.mem_left.get(), m.reserved_left.get());
        if left < bytes || reserved < bytes {
            return false;
        }
        m.mem_left.set(left - bytes);
        m.reserved_left.set(reserved - bytes);
        true
    });
    if !charged {
        charge_reserving(bytes);
    }
    // a large allocation is usually followed by a long copy: do not start it late
    if bytes >= 1 << 20 {
        check_time();
    }
}

/// [`charge`] when the bytes reserved from the shared budget do not suffice:
/// reserves another chunk (at least what is missing, at most what the query's
/// own budget has left) or trips.
#[cold]
fn charge_reserving(bytes: usize) {
    let (left, reserved, deadline) =
        METER.with(|m| (m.mem_left.get(), m.reserved_left.get(), m.deadline.get()));
    if left < bytes {
        trip(Limit::Memory);
    }
    let missing = bytes - reserved.min(bytes);
    let chunk = missing.max(RESERVE_CHUNK).min(left - reserved.min(left));
    let deadline = deadline.unwrap_or_else(Instant::now);
    let granted = RESERVATION.with(|r| {
        let mut r = r.borrow_mut();
        if r.grow(chunk, deadline) {
            Some(chunk)
        } else if chunk > missing && r.grow(missing, deadline) {
            Some(missing)
        } else {
            None
        }
    });
    let Some(granted) = granted else {
        trip(Limit::SharedMemory)
    };
    METER.with(|m| {
        m.mem_left.set(left - bytes);
        m.reserved_left.set(reserved + granted - bytes);
    });
}

/// Charges `bytes` ahead for an allocation made by code that cannot charge
/// it before allocating (a native of jaq's standard library); the allocation
/// then calls [`charge_prepaid`]. Replaces what was prepaid before.
pub(crate) fn prepay(bytes: usize) {
    charge(bytes);
    METER.with(|m| m.prepaid.set(bytes));
}

/// Charges `bytes` as far as they were not prepaid.
pub(crate) fn charge_prepaid(bytes: usize) {
    let left = METER.with(|m| {
        let prepaid = m.prepaid.get();
        let used = prepaid.min(bytes);
        m.prepaid.set(prepaid - used);
        bytes - used
    });
    charge(left);
}

/// Charges `bytes` if the query's budget and what it can reserve from the
/// shared budget right now allow it (no waiting, no kept document dropped);
/// returns whether it did. Never trips.
pub(crate) fn try_charge(bytes: usize) -> bool {
    let (left, reserved) = METER.with(|m| (m.mem_left.get(), m.reserved_left.get()));
    if left < bytes {
        return false;
    }
    let missing = bytes.saturating_sub(reserved);
    if missing > 0 && !RESERVATION.with(|r| r.borrow_mut().try_grow(missing)) {
        return false;
    }
    METER.with(|m| {
        m.mem_left.set(left - bytes);
        m.reserved_left.set(reserved + missing - bytes);
    });
    true
}

/// Returns `bytes` charged before and no longer used to the query's budget;
/// the query keeps them reserved from the shared budget.
pub(crate) fn refund(bytes: usize) {
    METER.with(|m| {
        m.mem_left.set(m.mem_left.get().saturating_add(bytes));
        m.reserved_left
            .set(m.reserved_left.get().saturating_add(bytes));
    });
}

/// Sets aside `bytes` of the query's own budget for a helper thread (which
/// reserves from the shared budget by itself, see [`install_helper`]);
/// returns whether the budget had them. Never trips.
pub(crate) fn set_aside(bytes: usize) -> bool {
    METER.with(|m| {
        let left = m.mem_left.get();
        if left < bytes {
            return false;
        }
        m.mem_left.set(left - bytes);
        true
    })
}

/// Gives back to the query's own budget `bytes` set aside and not used.
pub(crate) fn put_back(bytes: usize) {
    METER.with(|m| m.mem_left.set(m.mem_left.get().saturating_add(bytes)));
}

/// The current query's deadline, if one is installed.
pub(crate) fn deadline() -> Option<Instant> {
    METER.with(|m| m.deadline.get())
}

/// Whether the current thread's charges reserve from the shared budget
/// (false where no query budget is installed).
pub(crate) fn is_pooled() -> bool {
    METER.with(|m| m.reserved_left.get() != usize::MAX)
}

/// Installs, on a helper thread of a query, a budget of `memory` bytes set
/// aside by the query ([`set_aside`]) and the query's `deadline`. When
/// `pooled`, charges reserve from the shared budget as the query's would
/// (the helper hands its reservation over with [`hand_over`]). No evaluation
/// runs there: no step or stack limit.
pub(crate) fn install_helper(deadline: Option<Instant>, memory: usize, pooled: bool) {
    METER.with(|m| {
        m.steps_left.set(u64::MAX);
        m.next_clock.set(0);
        m.deadline.set(deadline);
        m.mem_left.set(memory);
        m.reserved_left.set(if pooled { 0 } else { usize::MAX });
        m.prepaid.set(0);
        m.stack_floor.set(0);
        m.tripped.set(None);
    });
    RESERVATION.with(|r| *r.borrow_mut() = Reservation::default());
}

/// What a helper thread reserved from the shared budget, to be taken over
/// by the query ([`take_over`]).
pub(crate) struct Handover {
    reservation: Reservation,
    /// Bytes reserved and not charged.
    reserved_left: usize,
}

/// The current (helper) thread's reservation, handed over; `uncharged` of
/// the bytes it charged are not taken over as charged (memory of its own it
/// frees), and join those reserved and not charged.
pub(crate) fn hand_over(uncharged: usize) -> Handover {
    let reserved_left = METER.with(|m| m.reserved_left.replace(usize::MAX));
    let reservation = RESERVATION.with(|r| core::mem::take(&mut *r.borrow_mut()));
    let reserved_left = if reserved_left == usize::MAX {
        0
    } else {
        reserved_left + uncharged
    };
    Handover {
        reservation,
        reserved_left,
    }
}

/// Takes over a helper's reservation: its bytes join the query's, and those
/// it reserved and did not charge can be charged by the query.
pub(crate) fn take_over(handover: Handover) {
    RESERVATION.with(|r| r.borrow_mut().absorb(handover.reservation));
    METER.with(|m| {
        m.reserved_left
            .set(m.reserved_left.get().saturating_add(handover.reserved_left));
    });
}

/// Bytes left in the cumulative allocation budget.
pub(crate) fn memory_left() -> usize {
    METER.with(|m| m.mem_left.get())
}

/// The step and memory counters at one moment (see [`give_back`]).
pub(crate) struct Spent {
    steps_left: u64,
    next_clock: u64,
    mem_left: usize,
}

/// The step and memory counters now.
pub(crate) fn spent() -> Spent {
    METER.with(|m| Spent {
        steps_left: m.steps_left.get(),
        next_clock: m.next_clock.get(),
        mem_left: m.mem_left.get(),
    })
}

/// Gives back the steps and memory used since `before`, by an attempt that
/// was abandoned and has dropped everything it built (time is not given
/// back). The memory returns to the query's budget and to what it holds
/// reserved from the shared budget.
pub(crate) fn give_back(before: Spent) {
    METER.with(|m| {
        let returned = before.mem_left.saturating_sub(m.mem_left.get());
        m.steps_left.set(before.steps_left);
        m.next_clock.set(before.next_clock);
        m.mem_left.set(before.mem_left);
        m.reserved_left
            .set(m.reserved_left.get().saturating_add(returned));
    });
}
