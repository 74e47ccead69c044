// S3Storage: offloaded blocks as objects of one S3 bucket, uploaded, downloaded and
// searched natively, and the SDK's unified S3 storage on the same prefix.
import { native, toBytes } from '../native.js'
import { checkNumber, checkPathForm, describe, integerIn, positiveUpTo } from '../numbers.js'
import { LIFECYCLE_OPTION_NAMES, lifecycleOptions, startLifecycle } from '../lifecycle.js'
import { warnUnknownOptions } from '../option-names.js'
import { NATIVE, NativeBackedStorage, SWEEP, kvCall } from './native-backed.js'
import { checkKeyForm } from './unified.js'

/** The connection options of S3Storage and S3SnapshotStorage (see {@link s3ConnectionOptions}). */
export const S3_CONNECTION_OPTION_NAMES = ['region', 'endpoint', 'forcePathStyle', 'credentials', 'timeoutMs', 'maxAttempts', 'maxInFlight']

/** What the SDK's S3 storages take that ours take in another form. */
export const S3_OPTION_NOTES = {
  s3Client: 'not taken: requests run natively; pass region, endpoint, forcePathStyle and credentials instead',
}

/** Longest per-attempt timeout accepted, in ms (a day). */
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000

/**
 * The connection options shared by S3Storage and S3SnapshotStorage, checked, as the
 * native store takes them.
 */
export function s3ConnectionOptions(options) {
  const { region, endpoint, forcePathStyle, credentials, timeoutMs, maxAttempts, maxInFlight } = options ?? {}
  for (const [name, value] of Object.entries({ region, endpoint })) {
    if (value !== undefined && typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${describe(value)}`)
  }
  if (forcePathStyle !== undefined && typeof forcePathStyle !== 'boolean') {
    throw new TypeError(`forcePathStyle must be a boolean, got ${describe(forcePathStyle)}`)
  }
  if (credentials !== undefined) {
    const { accessKeyId, secretAccessKey, sessionToken } = credentials ?? {}
    if (typeof accessKeyId !== 'string' || typeof secretAccessKey !== 'string' || !['string', 'undefined'].includes(typeof sessionToken)) {
      throw new TypeError('credentials must be { accessKeyId: string, secretAccessKey: string, sessionToken?: string }')
    }
  }
  if (timeoutMs !== undefined) checkNumber('timeoutMs', timeoutMs, `a number of milliseconds in (0, ${MAX_TIMEOUT_MS}]`, positiveUpTo(MAX_TIMEOUT_MS))
  if (maxAttempts !== undefined) checkNumber('maxAttempts', maxAttempts, 'an integer from 1 to 100', integerIn(1, 100))
  if (maxInFlight !== undefined) checkNumber('maxInFlight', maxInFlight, 'an integer from 1 to 1024', integerIn(1, 1024))
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
    if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
      throw new TypeError(`S3Storage options must be an object such as { prefix, region }, got ${describe(options)}`)
    }
    warnUnknownOptions('S3Storage', options, ['prefix', ...S3_CONNECTION_OPTION_NAMES, 'ttlSeconds', 'cleanupIntervalSeconds', 'clock', 'maxBytes', 'dedup'], S3_OPTION_NOTES)
    const prefix = options?.prefix
    if (prefix !== undefined && typeof prefix !== 'string') throw new TypeError(`prefix must be a string, got ${describe(prefix)}`)
    if (prefix !== undefined) checkPathForm(prefix, 'S3Storage prefix')
    const lifecycle = lifecycleOptions(options, { budget: false, dedup: false }, 'S3Storage')
    super(new native.NativeS3Store(bucket, { prefix, ...s3ConnectionOptions(options) }), false)
    Object.defineProperty(this, SWEEP, { value: startLifecycle(this, this[NATIVE], lifecycle) })
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
    checkKeyForm(key, 'key')
    const bytes = toBytes(data)
    await kvCall(() => this[NATIVE].kvWrite(key, bytes))
  }
}
