//! A blocking facade implementing [`BlobStore`] on an own Tokio runtime.

use offload_storage::{Blob, BlobStore, NewBlob, StorageError};

use crate::{S3Error, S3Options, S3Store};

/// [`S3Store`] behind the synchronous [`BlobStore`] trait, driving the async
/// client on a runtime of its own. Do not call it from inside an async task
/// (use [`S3Store`] there).
pub struct BlockingS3Store {
    store: S3Store,
    runtime: tokio::runtime::Runtime,
}

impl BlockingS3Store {
    /// A blocking store for `options`, with a two-thread runtime.
    ///
    /// # Errors
    ///
    /// [`S3Error::Config`] for invalid options or when the runtime cannot start.
    pub fn new(options: S3Options) -> Result<Self, S3Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("offload-s3")
            .enable_all()
            .build()
            .map_err(|e| S3Error::Config(format!("cannot start the S3 runtime: {e}")))?;
        Ok(Self { store: S3Store::new(options)?, runtime })
    }

    /// The async store behind this facade.
    #[must_use]
    pub fn inner(&self) -> &S3Store {
        &self.store
    }

    /// Runs `future` on this store's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

impl BlobStore for BlockingS3Store {
    fn next_sequence(&self) -> u64 {
        self.store.next_sequence()
    }

    fn store_blob(&self, blob: NewBlob<'_>) -> Result<String, StorageError> {
        Ok(self.runtime.block_on(self.store.store_blob(blob))?)
    }

    fn retrieve(&self, reference: &str) -> Result<Blob, StorageError> {
        Ok(self.runtime.block_on(self.store.retrieve(reference))?)
    }
}
