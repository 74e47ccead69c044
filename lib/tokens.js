// Exact BPE token counting in OpenAI encodings, computed natively: argument
// checking in front of the addon's counting functions.
import { native } from './native.js'
import { describe } from './numbers.js'

/**
 * The encodings that can be counted natively: `'o200k_base'` (GPT-4o, GPT-4.1,
 * GPT-5, o-series) and `'cl100k_base'` (GPT-4, GPT-3.5-turbo).
 * @type {readonly ['o200k_base', 'cl100k_base']}
 */
export const ENCODINGS = Object.freeze(['o200k_base', 'cl100k_base'])

/** Throws a `TypeError` unless `text` is a string and `encoding` a supported name. */
function checkArguments(text, encoding) {
  if (typeof text !== 'string') {
    throw new TypeError(`text must be a string, got ${describe(text)}`)
  }
  if (!ENCODINGS.includes(encoding)) {
    throw new TypeError(`encoding must be one of ${ENCODINGS.map((e) => `'${e}'`).join(', ')}, got ${describe(encoding)}`)
  }
}

/**
 * The token counting API over a loaded addon (`native`, as exported by `binding.cjs`).
 *
 * Counts are those of OpenAI's tokenizer (`encode_ordinary`): special tokens such
 * as `<|endoftext|>` are counted as ordinary text, and lone surrogates count as
 * U+FFFD, as `TextEncoder` encodes them. A vocabulary is loaded on first use, once
 * per process (a few tenths of a second).
 */
export function createTokenApi(native) {
  return {
    /**
     * Number of tokens of `text` in `encoding`, counted on a worker thread.
     * Rejects with a `TypeError` for a non-string text or an unknown encoding.
     * @param {string} text
     * @param {'o200k_base' | 'cl100k_base'} [encoding]
     * @returns {Promise<number>}
     */
    async countTokens(text, encoding = 'o200k_base') {
      checkArguments(text, encoding)
      return native.countTokens(text, encoding)
    },

    /**
     * {@link countTokens} on the calling thread, for short texts (about 0.1 ms per
     * kilobyte; the first call per encoding also loads its vocabulary). Throws a
     * `TypeError` for a non-string text or an unknown encoding.
     * @param {string} text
     * @param {'o200k_base' | 'cl100k_base'} [encoding]
     * @returns {number}
     */
    countTokensSync(text, encoding = 'o200k_base') {
      checkArguments(text, encoding)
      return native.countTokensSync(text, encoding)
    },

    ENCODINGS,
  }
}

/** The token counting API over the loaded addon. */
export const tokenApi = createTokenApi(native)

/**
 * Number of BPE tokens of `text` in an OpenAI encoding (`'o200k_base'`, the default,
 * or `'cl100k_base'`), counted natively on a worker thread. Exact for OpenAI models
 * using that encoding; only an approximation for other model families.
 * @type {(text: string, encoding?: 'o200k_base' | 'cl100k_base') => Promise<number>}
 */
export const countTokens = tokenApi.countTokens
/** {@link countTokens} on the calling thread (for short texts). */
export const countTokensSync = tokenApi.countTokensSync
