//! Options of an [`S3Store`](crate::S3Store) and construction of its client.

use std::time::Duration;

use aws_config::meta::region::RegionProviderChain;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;
use aws_sdk_s3::config::{Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

/// Region used when neither the options nor the environment name one (as the SDK).
pub const DEFAULT_REGION: &str = "us-east-1";
/// Default bound on one attempt of a request (connect included).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of attempts per request (1 = no retry).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Default number of requests in flight per store.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 8;
/// Bodies larger than this are uploaded in parts.
pub const DEFAULT_MULTIPART_THRESHOLD: usize = 16 * 1024 * 1024;
/// Size of each part of a multipart upload (the last one may be smaller).
pub const DEFAULT_PART_SIZE: usize = 8 * 1024 * 1024;

/// Static credentials; without them the standard AWS provider chain is used
/// (environment, shared profile files, web identity, container and instance metadata).
#[derive(Clone, Debug)]
pub struct StaticCredentials {
    /// Access key id.
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: String,
    /// Session token of temporary credentials.
    pub session_token: Option<String>,
}

/// How to reach the bucket.
#[derive(Clone, Debug)]
pub struct S3Options {
    /// The bucket objects are written to.
    pub bucket: String,
    /// Key prefix (normalised like the SDK's: `a/b//` becomes `a/b/`).
    pub prefix: String,
    /// Region; default: the environment's, else `us-east-1`.
    pub region: Option<String>,
    /// Endpoint URL of an S3-compatible server (e.g. `http://127.0.0.1:3900`).
    pub endpoint: Option<String>,
    /// Path-style addressing (`<endpoint>/<bucket>/<key>`), needed by most
    /// S3-compatible servers.
    pub force_path_style: bool,
    /// Static credentials; `None` uses the standard provider chain.
    pub credentials: Option<StaticCredentials>,
    /// Bound on connecting and on each attempt of a request.
    pub timeout: Duration,
    /// Attempts per request; throttling, 5xx and connection errors are retried
    /// with exponential backoff.
    pub max_attempts: u32,
    /// Requests in flight at once for this store.
    pub max_in_flight: usize,
    /// Bodies larger than this go up as multipart uploads.
    pub multipart_threshold: usize,
    /// Part size of multipart uploads (at least 5 MiB for AWS).
    pub part_size: usize,
    /// Whether reading an expired object deletes it (it is refused either
    /// way); off for an operator's tool that looks before it removes.
    pub delete_expired_on_read: bool,
}

impl S3Options {
    /// Options for `bucket` with every default.
    pub fn new(bucket: impl Into<String>) -> Self {
        Self {
            bucket: bucket.into(),
            prefix: String::new(),
            region: None,
            endpoint: None,
            force_path_style: false,
            credentials: None,
            timeout: DEFAULT_TIMEOUT,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            multipart_threshold: DEFAULT_MULTIPART_THRESHOLD,
            part_size: DEFAULT_PART_SIZE,
            delete_expired_on_read: true,
        }
    }
}

/// Builds the S3 client for `options` (loads region and credentials from the
/// standard chain where the options leave them out).
pub(crate) async fn build_client(options: &S3Options) -> aws_sdk_s3::Client {
    let http_client = aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let region = RegionProviderChain::first_try(options.region.clone().map(Region::new))
        .or_default_provider()
        .or_else(Region::new(DEFAULT_REGION));
    let timeouts = TimeoutConfig::builder()
        .connect_timeout(options.timeout)
        .operation_attempt_timeout(options.timeout)
        .build();
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http_client)
        .region(region)
        .timeout_config(timeouts)
        .retry_config(RetryConfig::standard().with_max_attempts(options.max_attempts.max(1)))
        // Plain Content-MD5-free uploads that every S3-compatible server accepts.
        .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
        .response_checksum_validation(ResponseChecksumValidation::WhenRequired);
    if let Some(creds) = &options.credentials {
        loader = loader.credentials_provider(Credentials::new(
            creds.access_key_id.clone(),
            creds.secret_access_key.clone(),
            creds.session_token.clone(),
            None,
            "context-offloader",
        ));
    }
    if let Some(endpoint) = &options.endpoint {
        loader = loader.endpoint_url(endpoint.clone());
    }
    let shared = loader.load().await;
    let config = aws_sdk_s3::config::Builder::from(&shared).force_path_style(options.force_path_style).build();
    aws_sdk_s3::Client::from_conf(config)
}
