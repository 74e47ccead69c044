// The SDK's session validation (identifiers, scopes, UUID v7 snapshot ids) with its
// messages, and what both snapshot storages share: paging arguments and the default manifest.

/** The manifest schema version the SDK writes. */
export const SNAPSHOT_SCHEMA_VERSION = '1.0'

/** The SDK's `validateIdentifier`, with its message. */
export function validateIdentifier(id) {
  if (!/^[a-z0-9_-]+$/.test(id)) {
    throw new Error(`Identifier '${id}' can only contain lowercase letters, numbers, hyphens, and underscores`)
  }
  return id
}

/** The SDK's `validateScope`, with its message. */
export function validateScope(scope) {
  if (scope !== 'agent' && scope !== 'multiAgent') {
    throw new Error(`Invalid scope '${String(scope)}': must be 'agent' or 'multiAgent'`)
  }
  return scope
}

/** The SDK's `validateUuidV7`, with its message. */
export function validateUuidV7(id) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) {
    throw new Error(`'${id}' is not a valid UUID v7 snapshot ID`)
  }
}

/**
 * The page a `listSnapshotIds` call asks for, checked as the SDK checks it: `null` for
 * an empty page (`limit <= 0`), else the exclusive cursor and the page size with
 * `Array.prototype.slice` semantics (NaN -> 0, fractions truncated; `undefined`: all).
 * @param {{ startAfter?: string, limit?: number }} params
 * @returns {{ startAfter: string | undefined, limit: number | undefined } | null}
 */
export function snapshotPage(params) {
  if (params.limit !== undefined && params.limit <= 0) return null
  if (params.startAfter) validateUuidV7(params.startAfter)
  let limit
  if (params.limit !== undefined) {
    const n = Math.trunc(Number(params.limit))
    limit = Number.isNaN(n) ? 0 : n
  }
  return { startAfter: params.startAfter ? String(params.startAfter) : undefined, limit }
}

/** The manifest of a scope with none saved: schema 1.0, updated now (as the SDK returns it). */
export function defaultManifest() {
  return { schemaVersion: SNAPSHOT_SCHEMA_VERSION, updatedAt: new Date().toISOString() }
}
