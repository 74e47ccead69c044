// The retrieval tool's answers. With the defaults they are the SDK's: the full content,
// or a grep / line slice cut at `maxResultTokens × 4` characters. Opt-in:
// - opaque references: the model's ids resolve through the offload manifest of the
//   calling agent's session only; anything else is "not found", as a missing one is;
// - extended retrieval: answers are paged within the output budget (tokens of a native
//   tokenizer, else characters), jq queries over JSON, and the session's manifest (`list`).
import { randomBytes } from 'node:crypto'
import { decodeStoredContent } from './content.js'
import { manifestText } from './manifest.js'
import { syncClock } from './lifecycle.js'
import { asUint8Array, mustYield, native, toBytes, toNativeText } from './native.js'
import { isFullRetrieval, searchQueryOf, searchStored } from './search.js'
import { nativeFor } from './storage/native-backed.js'
import { retrieveContent } from './storage/unified.js'
import { RETRIEVAL_EVENT, traceEvent } from './telemetry.js'

/** The largest output budget the native search and paging take (u32). */
export const MAX_OUTPUT_UNITS = 0xffff_ffff

/** The retrieval mode of a tool input, as `stats()` counts it. */
export function retrievalMode(input) {
  if (input.list === true) return 'list'
  if (input.query !== undefined) return 'query'
  if (input.pattern) return 'pattern'
  if (input.line_range) return 'lineRange'
  if (input.context_lines !== undefined) return 'head'
  return 'full'
}

/** The answer to a pattern with an unpaired surrogate. */
const UNPAIRED_PATTERN_ANSWER =
  'Error: the pattern has an unpaired surrogate (half of a character); stored text holds whole characters only. Search for the whole character.'

/** The error answer for a reference that cannot be read (expired or evicted ones say so). */
function notFoundAnswer(err, shown) {
  const reason = /^Reference not found \((expired|evicted to stay under maxBytes)\)/.exec(String(err?.message ?? ''))?.[1]
  return reason ? `Error: reference not found (${reason}): ${shown}` : `Error: reference not found: ${shown}`
}

/** A failure past reading the content (paging, a query) with the answer the model gets. */
class AnswerFailure extends Error {
  constructor(answer, cause) {
    super(answer, { cause })
    this.answer = answer
  }
}

/**
 * Runs native work on content already read; its failure (a string too long for
 * JavaScript, an exhausted machine) is said as such, not as a missing reference. With
 * opaque references the native message is left out (it could name a path).
 */
async function nativeStep(what, opaque, run) {
  try {
    return await run()
  } catch (err) {
    const detail = opaque ? '' : `: ${String(err?.message ?? err).split('\n')[0].slice(0, 200)}`
    throw new AnswerFailure(`Error: ${what} failed${detail}`, err)
  }
}

/**
 * Answers retrieval tool calls for one plugin.
 */
export class Retrieval {
  /**
   * @param {object} options
   * @param {(context: unknown) => object} options.storageFor - the storage serving a tool call
   * @param {(context: unknown) => string[]} options.sessionsOf - the manifest sessions a tool
   *   call reads: its own first, then any whose entries it may also read
   * @param {() => import('./manifest.js').OffloadManifest} options.manifestOf - the plugin's manifest
   * @param {boolean} options.opaque - references are manifest ids
   * @param {boolean} options.extended - paging, query and list
   * @param {number} options.maxChars - the SDK's output budget (UTF-16 units)
   * @param {number} options.maxResultTokens
   * @param {string | undefined} options.encoding - a native tokenizer's encoding, if any
   * @param {Promise<unknown> | undefined} options.encodingReady
   * @param {import('./telemetry.js').OffloaderCounters} options.counters
   * @param {(reference: string, context: unknown) => void} [options.onUse] - told of every
   *   storage reference a tool call reads (a retrieval is a use, for cycle eviction)
   * @param {boolean} [options.parseJson=true] - a full retrieval of JSON answers it parsed
   *   (the SDK's answer), else its text
   */
  constructor(options) {
    Object.assign(this, options)
  }

  /** The output budget of extended answers: tokens of the native encoding, else characters. */
  _budget() {
    const units = this.encoding ? this.maxResultTokens : this.maxResultTokens * 4
    return Math.min(Math.floor(units), MAX_OUTPUT_UNITS)
  }

  /** The tool's answer to `input` (a string, or content for binary and JSON blocks). */
  async answer(input, context) {
    const started = performance.now()
    const mode = retrievalMode(input)
    const outcome = { pages: 0, error: false }
    let answer
    try {
      answer = await this._answer(input, context, mode, outcome)
    } catch (err) {
      outcome.error = true
      answer = err instanceof AnswerFailure ? err.answer : notFoundAnswer(err, input.reference)
    }
    if (typeof answer === 'string' && answer.startsWith('Error: ')) outcome.error = true
    this._count(mode, outcome)
    traceEvent(context?.agent, RETRIEVAL_EVENT, {
      'context_offloader.reference': input.reference,
      'context_offloader.mode': mode,
      'context_offloader.page': input.page,
      'context_offloader.output_chars': typeof answer === 'string' ? answer.length : undefined,
      'context_offloader.error': outcome.error,
      'context_offloader.duration_ms': performance.now() - started,
    })
    return answer
  }

  _count(mode, outcome) {
    this.counters.retrievals[mode] += 1
    this.counters.pagesServed += outcome.pages
    if (outcome.error) this.counters.errors.retrieval += 1
  }

  async _answer(input, context, mode, outcome) {
    if (this.extended && mode === 'list') {
      const lists = await Promise.all(this.sessionsOf(context).map((s) => this.manifestOf().list(s)))
      const seen = new Set()
      const entries = lists.flat().filter((e) => !seen.has(e.id) && seen.add(e.id))
      entries.sort((a, b) => b.created - a.created || b.seq - a.seq)
      return this._page(manifestText(entries), input.page, outcome)
    }
    if (this.extended && (typeof input.reference !== 'string' || input.reference.length === 0)) {
      return 'Error: reference is required (or list: true to see what was offloaded in this session).'
    }
    // Stored text is UTF-8: it holds whole characters, never half of one (a pattern's
    // unpaired surrogate would be read natively as U+FFFD and match that instead).
    if (typeof input.pattern === 'string' && !input.pattern.isWellFormed()) return UNPAIRED_PATTERN_ANSWER
    const storage = this.storageFor(context)
    const { reference, issued } = await this._storageReference(input.reference, context)
    if (!issued) {
      // Not this session's: the decoy lookup (if any) fails as a deleted id's would.
      if (reference !== undefined) await retrieveContent(storage, reference).catch(() => {})
      throw new Error('Reference not found')
    }
    this.onUse?.(reference, context)
    if (!this.extended) return this._sdkAnswer(storage, { ...input, reference }, input.reference)
    if (mode === 'query') {
      if (input.pattern || input.line_range || input.context_lines !== undefined) {
        return 'Error: query cannot be combined with pattern, line_range or context_lines.'
      }
      return this._pageOf(storage, reference, input, { kind: 'query', query: String(input.query) }, outcome)
    }
    if (mode === 'full') return this._pageOf(storage, reference, input, { kind: 'full' }, outcome)
    return this._pageOf(storage, reference, input, { kind: 'search', search: searchQueryOf(input) }, outcome)
  }

  /**
   * Page `input.page` (default 1) of the extended answer to `request` (a search, the full
   * content, a jq query) about the stored `reference`. The answer is built, kept and cut
   * natively on a search thread; only the page crosses into JavaScript. Binary content
   * comes back whole (as the SDK returns it), and so does a JSON block that fits one
   * page (parsed, as the SDK returns it).
   */
  async _pageOf(storage, reference, input, request, outcome) {
    if (this.encoding) await this.encodingReady
    const page = input.page ?? 1
    const asked = Math.min(page, MAX_OUTPUT_UNITS)
    const nativeStore = nativeFor(storage, 'retrieve')
    let result
    if (typeof nativeStore?.answer === 'function') {
      // An unpaired surrogate would be read natively as U+FFFD (see NativeBackedStorage.retrieve).
      if (!String(reference).isWellFormed()) throw new Error('Reference not found')
      syncClock(storage, nativeStore)
      // A page of a kept answer is cut right away (cheaper than a thread hop), unless
      // inline work has held the event loop for a while.
      if (!this.encoding && !mustYield()) result = nativeStore.answerNow(reference, request, asked, this._budget())
      result ??= await nativeStore.answer(reference, request, asked, this._budget(), this.encoding).catch((err) => {
        // A reference that cannot be read is "not found"; any other failure says so.
        if (/^Reference not found/.test(String(err?.message ?? ''))) throw err
        throw new AnswerFailure(`Error: the retrieval failed${this.opaque ? '' : `: ${String(err?.message ?? err).split('\n')[0].slice(0, 200)}`}`, err)
      })
    } else {
      const stored = await retrieveContent(storage, reference)
      const bytes = stored.content instanceof Uint8Array ? stored.content : toBytes(stored.content)
      result = await nativeStep('paging the answer', this.opaque, () =>
        native.answerContentPage(bytes, stored.contentType, request, asked, this._budget(), this.encoding),
      )
    }
    if (result.content != null) {
      return decodeStoredContent(asUint8Array(result.content), result.contentType, input.reference, this.parseJson !== false)
    }
    if (result.isFinal) return result.text
    if (result.text == null || page > MAX_OUTPUT_UNITS) {
      const count = result.pages ?? MAX_OUTPUT_UNITS
      return `Error: page ${page} is past the end of this answer (${count} page${count === 1 ? '' : 's'}).`
    }
    outcome.pages = 1
    if (result.whole && result.json && this.parseJson !== false) {
      // One page that is the whole JSON text: the parsed JSON, as the SDK returns it.
      try {
        return JSON.parse(result.text)
      } catch {
        return result.text
      }
    }
    return result.text
  }

  /** Page `page` (default 1) of `text` within the budget. */
  async _page(text, page = 1, outcome) {
    if (this.encoding) await this.encodingReady
    // The answer goes to native memory in slices (with yields); paging runs on a worker.
    const pageOf = (n) => nativeStep('paging the answer', this.opaque, async () => native.pageAnswer(await toNativeText(text), n, this._budget(), this.encoding))
    const result = page > MAX_OUTPUT_UNITS ? { text: null, pages: undefined } : await pageOf(page)
    if (result.text == null) {
      const count = result.pages ?? (await pageOf(MAX_OUTPUT_UNITS)).pages
      return `Error: page ${page} is past the end of this answer (${count} page${count === 1 ? '' : 's'}).`
    }
    outcome.pages = 1
    return result.text
  }

  /**
   * The storage reference behind the model's: itself with path references; with opaque
   * ones, the entry this session was given under that id (one manifest read). For any
   * other string the answer is "not found", after the same work as for an issued id
   * whose artifact is gone: the session's own reference with another key of the same
   * length (no such file, object or entry) goes down the same path, and fails there.
   */
  async _storageReference(shown, context) {
    if (!this.opaque) return { reference: shown, issued: true }
    const [session, ...others] = this.sessionsOf(context)
    // Taken first for every id: its cost (one small read, the first time in a process)
    // is the same whether the id was issued or not.
    const sample = await this.manifestOf().anyEntry(session)
    // Every session the agent reads is looked in, whether the id is found early or not.
    const found = await Promise.all([session, ...others].map((s) => this.manifestOf().resolve(s, shown)))
    const entry = found.find(Boolean)
    if (entry) return { reference: entry.reference, issued: true }
    if (sample?.key && sample.reference.includes(sample.key)) {
      const key = randomBytes(sample.key.length).toString('hex').slice(0, sample.key.length)
      return { reference: sample.reference.replace(sample.key, key), issued: false }
    }
    return { reference: undefined, issued: false }
  }

  /** The SDK's answer: a search within `maxChars`, or the full content. */
  async _sdkAnswer(storage, input, shown) {
    if (!isFullRetrieval(input)) return searchStored(storage, input, this.maxChars)
    const result = await retrieveContent(storage, input.reference)
    return decodeStoredContent(result.content, result.contentType, shown, this.parseJson !== false)
  }
}
