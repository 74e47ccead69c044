// S3Storage: offloaded blocks as objects of one S3 bucket, uploaded, downloaded and
// searched natively, and the SDK's unified S3 storage on the same prefix.
import { native, toBytes } from '../native.js'
import { NATIVE, NativeBackedStorage, kvCall } from './native-backed.js'

/** The connection options shared by S3Storage and S3SnapshotStorage, as the native store takes them. */
export function s3ConnectionOptions(options) {
  const { region, endpoint, forcePathStyle, credentials, timeoutMs, maxAttempts, maxInFlight } = options ?? {}
  return { region, endpoint, forcePathStyle, credentials, timeoutMs, maxAttempts, maxInFlight }
}

/**
 * Offloaded content as objects of one S3 bucket (AWS or any S3-compatible server),
 * with the SDK's object keys (`<prefix><ms>_<n>_<key>`) and references
 * (`s3://<bucket>/<key>`; raw keys are accepted by `retrieve`). Uploads, downloads and
 * searches run natively: at most `maxInFlight` (8) requests at once, each attempt
 * bounded by `timeoutMs`, throttling/5xx/connection errors retried with backoff up to
 * `maxAttempts`, bodies above 16 MiB uploaded in parts (aborted on failure).
 */
export class S3Storage extends NativeBackedStorage {
  /**
   * @param {string} bucket
   * @param {import('../../index.d.ts').S3StorageOptions} [options]
   */
  constructor(bucket, options = {}) {
    if (typeof bucket !== 'string' || bucket.length === 0) throw new TypeError('S3Storage bucket must be a non-empty string')
    super(new native.NativeS3Store(bucket, { prefix: options?.prefix, ...s3ConnectionOptions(options) }), false)
  }

  /** The bucket objects are written to. */
  get bucket() {
    return this[NATIVE].bucket
  }

  /** The normalised key prefix (`''` or ending in `/`). */
  get prefix() {
    return this[NATIVE].prefix
  }

  /**
   * Unified storage: stores `data` under `key` (the object `<prefix><key>`, as the SDK's
   * unified `S3Storage`), replacing any value. Bytes are copied before the upload starts.
   * @param {string} key
   * @param {Uint8Array} data
   */
  async write(key, data) {
    const bytes = toBytes(data)
    await kvCall(() => this[NATIVE].kvWrite(key, bytes))
  }
}
