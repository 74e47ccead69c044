// Token counting for the offloader and for SDK models: the SDK's characters/4
// heuristic, and exact BPE counts (OpenAI encodings) computed natively, with an
// early-exit decision for "is this result larger than N tokens?".
import { availableParallelism } from 'node:os'
import { mediaKind, mediaTokens } from './media.js'
import { native } from './native.js'
import { tokenApi } from './tokens.js'

/**
 * Counts on worker threads at once, at most: one core is left to the JavaScript thread,
 * so that counting many long texts (a conversation's messages, the windows of an
 * estimate) never has the event loop wait for a core behind the counting threads.
 */
const MAX_CONCURRENT_COUNTS = Math.max(1, availableParallelism() - 1)

/** Runs async tasks with at most `limit` in flight, in the order they were asked for. */
export function createLimiter(limit) {
  let running = 0
  const waiting = []
  const next = () => {
    if (running >= limit || waiting.length === 0) return
    running += 1
    const { task, resolve, reject } = waiting.shift()
    Promise.resolve()
      .then(task)
      .then(resolve, reject)
      .finally(() => {
        running -= 1
        next()
      })
  }
  return (task) =>
    new Promise((resolve, reject) => {
      waiting.push({ task, resolve, reject })
      next()
    })
}

/**
 * Texts are counted on the JavaScript thread only when that is cheap whatever their
 * script: up to 4,096 units of any text (at most about a millisecond, for CJK, whose long
 * runs are the costliest to encode), or up to 32,768 units of ASCII (about 0.8 ms).
 * Everything else goes to a worker thread.
 */
const INLINE_ANY_UNITS = 4096
const INLINE_ASCII_UNITS = 32_768

/** Matches a character beyond ASCII (compiled once; see `BEYOND_LATIN1` in ./native.js). */
const BEYOND_ASCII = /[^\x00-\x7f]/

/** Whether counting `text` on the JavaScript thread is cheap (see above). */
function countsInline(text) {
  return text.length <= INLINE_ANY_UNITS || (text.length <= INLINE_ASCII_UNITS && !BEYOND_ASCII.test(text))
}
/** Windows sampled to estimate the tokens of a text above the exact-count limit. */
const ESTIMATE_WINDOWS = 16
/** UTF-16 units per sampled window. */
const ESTIMATE_WINDOW_UNITS = 8192

/** The SDK's `heuristicText`: ceil(characters / 4). */
export function heuristicText(text) {
  return Math.ceil(text.length / 4)
}

/** The SDK's `heuristicJson`: ceil(compact JSON length / 2); 0 when not serialisable. */
export function heuristicJson(value) {
  try {
    return Math.ceil(JSON.stringify(value).length / 2)
  } catch {
    return 0
  }
}

/**
 * The tokens the SDK's base `Model.countTokens` gives a tool result with these
 * content blocks (text: chars/4, JSON: compact length/2, media: 0).
 */
export function heuristicContentTokens(content) {
  let total = 0
  for (const block of content) {
    if (block?.type === 'textBlock') total += heuristicText(block.text)
    else if (block?.type === 'jsonBlock') total += heuristicJson(block.json)
  }
  return total
}

/** The text a model sees for a JSON block: compact JSON (`''` when not serialisable). */
export function compactJson(value) {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}

/** A slice of `text` that does not cut a surrogate pair at either end. */
function wholeCharacters(text, start, end) {
  const isLow = (i) => i > 0 && i < text.length && (text.charCodeAt(i) & 0xfc00) === 0xdc00
  if (isLow(start)) start += 1
  if (isLow(end)) end -= 1
  return text.slice(start, Math.max(start, end))
}

/**
 * Native counting bound to one addon. `native` is the binding; `tokenApi` the
 * validated `countTokens`/`countTokensSync` of `tokens.js`.
 */
export function createCounting(native, tokenApi) {
  const limited = createLimiter(MAX_CONCURRENT_COUNTS)
  /** Exact count, on the JavaScript thread for short strings, else on a worker. */
  async function countExact(text, encoding) {
    if (countsInline(text)) return native.countTokensSync(text, encoding)
    return limited(() => native.countTokens(text, encoding))
  }

  /**
   * Estimated tokens of a long text: 16 evenly spaced windows of 8,192 units are
   * counted exactly and the tokens per unit extrapolated to the whole length.
   */
  async function estimate(text, encoding) {
    const stride = Math.floor((text.length - ESTIMATE_WINDOW_UNITS) / (ESTIMATE_WINDOWS - 1))
    const windows = []
    for (let i = 0; i < ESTIMATE_WINDOWS; i++) {
      const start = i * stride
      windows.push(wholeCharacters(text, start, start + ESTIMATE_WINDOW_UNITS))
    }
    const counts = await Promise.all(windows.map((w) => limited(() => native.countTokens(w, encoding))))
    const units = windows.reduce((sum, w) => sum + w.length, 0)
    const tokens = counts.reduce((sum, n) => sum + n, 0)
    return units === 0 ? 0 : Math.round((tokens * text.length) / units)
  }

  /**
   * Tokens of a text: exact up to `exactLimit` UTF-16 units, else an estimate.
   * @returns {Promise<{ tokens: number, approximate: boolean }>}
   */
  async function countText(text, encoding, exactLimit) {
    if (text.length <= exactLimit || text.length < ESTIMATE_WINDOWS * ESTIMATE_WINDOW_UNITS) {
      return { tokens: await countExact(text, encoding), approximate: false }
    }
    return { tokens: await estimate(text, encoding), approximate: true }
  }

  /**
   * Whether a tool result with these blocks has more than `limit` tokens, deciding
   * as early as possible: every token covers at most `maxTokenBytes` UTF-8 bytes and
   * every UTF-16 unit is at least one byte, so a text of `n` units has at least
   * `ceil(n / maxTokenBytes)` tokens and a long text is decided without encoding;
   * otherwise encoding stops as soon as the running total passes `limit`.
   * JSON blocks are counted as the compact JSON a model receives (`compact` collects
   * them by block index for later use). Media blocks count by `media.js` estimates.
   */
  async function exceedsLimit(content, encoding, limit, maxTokenBytes, compact) {
    let total = 0
    for (const [i, block] of content.entries()) {
      let text
      if (block?.type === 'textBlock') text = block.text ?? ''
      else if (block?.type === 'jsonBlock') {
        text = compactJson(block.json)
        compact.set(i, text)
      } else if (mediaKind(block)) {
        total += await mediaTokens(block, (t) => countText(t, encoding, Infinity).then((r) => r.tokens))
        if (total > limit) return true
        continue
      } else continue
      const remaining = limit - total
      if (Math.ceil(text.length / maxTokenBytes) > remaining) return true
      const counted =
        countsInline(text)
          ? native.countTokensUpTo(text, encoding, remaining)
          : await limited(() => native.countTokensUpToAsync(text, encoding, remaining))
      if (counted.exceeded) return true
      total += counted.count
    }
    return total > limit
  }

  /**
   * Tokens of a tool result's blocks for the offload header: text and JSON exact up
   * to `exactLimit` units each (else estimated), media by estimate.
   * @returns {Promise<{ tokens: number, approximate: boolean }>}
   */
  async function contentTokens(content, encoding, exactLimit, compact = new Map()) {
    const parts = await Promise.all(
      content.map(async (block, i) => {
        if (block?.type === 'textBlock') return countText(block.text ?? '', encoding, exactLimit)
        if (block?.type === 'jsonBlock') {
          return countText(compact.get(i) ?? compactJson(block.json), encoding, exactLimit)
        }
        if (mediaKind(block)) {
          const count = (t) => countText(t, encoding, exactLimit).then((r) => r.tokens)
          return { tokens: await mediaTokens(block, count), approximate: true }
        }
        return { tokens: 0, approximate: false }
      }),
    )
    return {
      tokens: parts.reduce((sum, p) => sum + p.tokens, 0),
      approximate: parts.some((p) => p.approximate && p.tokens > 0),
    }
  }

  /**
   * Tokens of an SDK model input (messages, system prompt, tool specs), structured
   * as the SDK's heuristic but counted exactly: text, tool names, tool inputs and JSON
   * results (compact JSON), reasoning, guard content, citations; media by estimate.
   */
  async function messagesTokens(messages, options, encoding) {
    const texts = []
    let media = 0
    const addJson = (value) => texts.push(compactJson(value))
    const count = (t) => countExact(t, encoding)
    const addBlock = async (block) => {
      switch (block?.type) {
        case 'textBlock':
          texts.push(block.text ?? '')
          break
        case 'toolUseBlock':
          texts.push(block.name ?? '')
          addJson(block.input)
          break
        case 'toolResultBlock':
          for (const item of block.content ?? []) {
            if (item?.type === 'textBlock') texts.push(item.text ?? '')
            else if (item?.type === 'jsonBlock') addJson(item.json)
            else if (mediaKind(item)) media += await mediaTokens(item, count)
          }
          break
        case 'reasoningBlock':
          if (block.text) texts.push(block.text)
          break
        case 'guardContentBlock':
          if (block.text?.text) texts.push(block.text.text)
          break
        case 'citationsBlock':
          for (const item of block.content ?? []) if (typeof item?.text === 'string') texts.push(item.text)
          break
        default:
          if (mediaKind(block)) media += await mediaTokens(block, count)
      }
    }
    const systemPrompt = options?.systemPrompt
    if (typeof systemPrompt === 'string') texts.push(systemPrompt)
    else if (Array.isArray(systemPrompt)) {
      for (const block of systemPrompt) {
        if (block?.type === 'textBlock') texts.push(block.text ?? '')
        else if (block?.type === 'guardContentBlock' && block.text?.text) texts.push(block.text.text)
      }
    }
    for (const message of messages ?? []) for (const block of message?.content ?? []) await addBlock(block)
    for (const spec of options?.toolSpecs ?? []) addJson(spec)
    const counts = await Promise.all(texts.filter((t) => t.length > 0).map(count))
    return counts.reduce((sum, n) => sum + n, media)
  }

  /**
   * Gives an SDK `Model` native counting for its `countTokens` (so the SDK's
   * conversation and context managers, and the offloader with `tokenizer: 'model'`,
   * get exact OpenAI-encoding counts). The model object is changed and returned.
   */
  function withNativeTokenCounting(model, encoding = 'o200k_base') {
    if (model === null || typeof model !== 'object' || typeof model.countTokens !== 'function') {
      throw new TypeError('withNativeTokenCounting expects an SDK Model (an object with a countTokens method)')
    }
    tokenApi.countTokensSync('', encoding)
    Object.defineProperty(model, 'countTokens', {
      value: (messages, options) => messagesTokens(messages, options, encoding),
      configurable: true,
      writable: true,
      enumerable: false,
    })
    return model
  }

  return { countText, exceedsLimit, contentTokens, messagesTokens, withNativeTokenCounting }
}

/** Native counting over the loaded addon. */
export const counting = createCounting(native, tokenApi)

/**
 * Gives an SDK `Model` native counting for its `countTokens`, so the SDK's
 * conversation and context managers get exact OpenAI-encoding counts. Returns the model.
 */
export const withNativeTokenCounting = counting.withNativeTokenCounting
