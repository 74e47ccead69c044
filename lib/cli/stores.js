// The STORE argument: a directory of a FileStorage, or `s3://bucket/prefix` of an
// S3Storage (region and credentials from the AWS environment and profile chain,
// `--endpoint`/`--path-style` on the command line). Opened natively as an operator's store:
// nothing is removed, not even what expired, until a command removes something (gc); the
// SDK is never loaded.
import { statSync } from 'node:fs'
import { native } from '../native.js'
import { UsageError } from './errors.js'

/** The options every command that opens a store takes. */
export const STORE_OPTIONS = {
  endpoint: { type: 'string' },
  'path-style': { type: 'boolean' },
  region: { type: 'string' },
}

/** Help lines of {@link STORE_OPTIONS}. */
export const STORE_HELP = [
  '  --endpoint URL     S3 endpoint (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, or AWS)',
  '  --path-style       address buckets as <endpoint>/<bucket> (MinIO, Garage, ...)',
  '  --region NAME      S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, the profile, us-east-1)',
]

/**
 * `s3://bucket/prefix` split into its bucket and prefix; `null` for anything else.
 * @param {string} spec
 */
export function parseS3Url(spec) {
  if (!/^s3:\/\//i.test(spec)) return null
  const rest = spec.slice(5)
  const slash = rest.indexOf('/')
  const bucket = slash < 0 ? rest : rest.slice(0, slash)
  const prefix = slash < 0 ? '' : rest.slice(slash + 1)
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new UsageError(`bad bucket name in '${spec}' (expected s3://bucket/prefix)`)
  }
  return { bucket, prefix }
}

/** The native S3 options of the command line's flags. */
export function s3Options(values, prefix) {
  const endpoint = values.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL
  if (endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(endpoint)) {
    throw new UsageError(`--endpoint: expected an http(s) URL, got '${endpoint}'`)
  }
  return {
    prefix,
    endpoint,
    region: values.region,
    forcePathStyle: values['path-style'] ? true : undefined,
    maxInFlight: 32,
  }
}

/** Fails unless `dir` is an existing directory. */
export function checkDirectory(dir) {
  let stat
  try {
    stat = statSync(dir)
  } catch (err) {
    throw new UsageError(err?.code === 'ENOENT' ? `no such directory: ${dir}` : `cannot open ${dir}: ${err?.code ?? err}`)
  }
  if (!stat.isDirectory()) throw new UsageError(`not a directory: ${dir}`)
}

/**
 * The artifact store named by `spec`: `{ kind, label, store }` with `store` the native
 * store (`NativeStore` of a directory or `NativeS3Store`).
 * @param {string} spec
 * @param {Record<string, unknown>} values - the parsed options
 */
export function openArtifactStore(spec, values) {
  const s3 = parseS3Url(spec)
  if (s3) {
    const store = new native.NativeS3Store(s3.bucket, { ...s3Options(values, s3.prefix), keepExpired: true })
    return { kind: 's3', label: spec, store }
  }
  checkDirectory(spec)
  return { kind: 'file', label: spec, store: native.NativeStore.file(spec, false, true) }
}
