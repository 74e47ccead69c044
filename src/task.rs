//! [`Work`]: one generic `Task` for blocking work on the libuv worker pool.
//!
//! A binding method checks and converts its arguments on the JavaScript
//! thread, then hands a closure to [`on_worker`]; the closure runs on a
//! worker thread and its value is handed to JavaScript as is; a panic in it
//! rejects the promise.

use napi::bindgen_prelude::*;

/// The closure a [`Work`] runs.
type Job<T> = Box<dyn FnOnce() -> Result<T> + Send>;

/// What runs on the JavaScript thread once a [`Work`] settled, either way.
pub type Settled = Box<dyn FnOnce(&Env) + Send>;

/// Blocking work whose result JavaScript receives unchanged.
pub struct Work<T> {
  job: Option<Job<T>>,
  settled: Option<Settled>,
}

impl<T> Task for Work<T>
where
  T: ToNapiValue + TypeName + Send + 'static,
{
  type Output = T;
  type JsValue = T;

  fn compute(&mut self) -> Result<T> {
    let job = self.job.take().ok_or_else(|| Error::new(Status::GenericFailure, "a worker task ran twice"))?;
    // A panic becomes a rejected promise; it never unwinds into libuv.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(panic_to_error)?
  }

  fn resolve(&mut self, _env: Env, output: T) -> Result<T> {
    Ok(output)
  }

  fn finally(self, env: Env) -> Result<()> {
    if let Some(settled) = self.settled {
      settled(&env);
    }
    Ok(())
  }
}

/// A promise of `job`'s value, computed on a libuv worker thread.
pub fn on_worker<T, F>(job: F) -> AsyncTask<Work<T>>
where
  T: ToNapiValue + TypeName + Send + 'static,
  F: FnOnce() -> Result<T> + Send + 'static,
{
  AsyncTask::new(Work { job: Some(Box::new(job)), settled: None })
}

/// [`on_worker`], then `settled` on the JavaScript thread once the promise settled.
pub fn on_worker_then<T, F>(job: F, settled: Option<Settled>) -> AsyncTask<Work<T>>
where
  T: ToNapiValue + TypeName + Send + 'static,
  F: FnOnce() -> Result<T> + Send + 'static,
{
  AsyncTask::new(Work { job: Some(Box::new(job)), settled })
}
