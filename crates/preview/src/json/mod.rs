//! JSON outlines: a validating streaming scanner, a bounded sample of the
//! document, and its rendering within a budget.

mod outline;
mod render;
mod scan;
mod tree;

pub(crate) use outline::outline;
