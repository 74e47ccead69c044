// Between the AI SDK's tool outputs for the model (`ToolResultOutput`: `text`, `json`,
// `content`) and the core's content: what of an output is offloaded, and the output the
// model sees instead. Written against the shapes `ai` 6 and 7 share (and 7's `file` part).

/** URLs of the parts kept in the model's output as they are (`<prefix><index>:<the part as JSON>`). */
const KEPT_PART = 'ai-sdk-part:'

/**
 * A value as the AI SDK makes it JSON for the model (`toJSONValue` of `ai` 7: through
 * `JSON.stringify`; `undefined` is `null`).
 * @param {unknown} value
 */
export function toJSONValue(value) {
  if (value === undefined) return null
  const text = JSON.stringify(value)
  return text === undefined ? null : JSON.parse(text)
}

/**
 * What the AI SDK gives the model for a tool's output when the tool has no
 * `toModelOutput`: a string as text, anything else as JSON.
 * @param {unknown} output
 */
export function defaultModelOutput(output) {
  return typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: toJSONValue(output) }
}

/** Whether a media type is an image's (`image/png`). */
const isImage = (mediaType) => typeof mediaType === 'string' && mediaType.toLowerCase().startsWith('image/')

/** A part with bytes (or base64) as the core's image or file part. */
function mediaPart(data, mediaType, filename) {
  if (isImage(mediaType)) return { type: 'image', data, mediaType }
  return { type: 'file', data, mediaType, ...(typeof filename === 'string' ? { filename } : {}) }
}

/**
 * One part of a `content` output as the core's part: text as text, inline bytes (or
 * base64) as an image or file part, anything else (URLs, provider file ids and
 * references, custom parts) as a URL part the core keeps in context, which names the
 * part so that it comes back as it was.
 * @param {any} part
 * @param {number} index
 */
function toCorePart(part, index) {
  switch (part?.type) {
    case 'text':
      return { type: 'text', text: part.text }
    case 'image-data':
      return { type: 'image', data: part.data, mediaType: part.mediaType }
    case 'media':
    case 'file-data':
      return mediaPart(part.data, part.mediaType, part.filename)
    case 'file':
      if (part.data?.type === 'data') return mediaPart(part.data.data, part.mediaType, part.filename)
      if (part.data?.type === 'text') return { type: 'text', text: part.data.text }
      break
  }
  return { type: 'file', url: `${KEPT_PART}${index}:${JSON.stringify(part)}` }
}

/** Whether a core part stands for a part kept as it was. */
const isKept = (part) => part.type === 'file' && part.data === undefined && typeof part.url === 'string' && part.url.startsWith(KEPT_PART)

/**
 * What the core offloads for a model output: `{ content, parts? }`, where `content` is
 * the text of a `text` output, the value of a `json` output, or the core's parts of a
 * `content` output (`parts`: the output's own parts); `undefined` when the output has
 * nothing to offload (an error, a denial, or only parts kept as they are).
 * @param {any} modelOutput
 */
export function offloadableContent(modelOutput) {
  switch (modelOutput?.type) {
    case 'text':
      return typeof modelOutput.value === 'string' ? { content: modelOutput.value } : undefined
    case 'json':
      return modelOutput.value == null ? undefined : { content: modelOutput.value }
    case 'content': {
      const parts = modelOutput.value
      if (!Array.isArray(parts) || parts.length === 0) return undefined
      const content = parts.map(toCorePart)
      return content.every(isKept) ? undefined : { content, parts }
    }
    default:
      return undefined
  }
}

/**
 * The model output that replaces an offloaded one: the preview text for a `text` or
 * `json` output; for a `content` output, the preview text, a placeholder text for each
 * stored image or file, and the kept parts as they were. The output's `providerOptions`
 * stay.
 * @param {any} modelOutput - the output that was offloaded
 * @param {import('../../../core.d.ts').OffloadedResult} result
 * @param {{ content: unknown, parts?: any[] }} offloaded - what {@link offloadableContent} gave
 */
export function replacementOutput(modelOutput, result, offloaded) {
  const extra = modelOutput.providerOptions === undefined ? {} : { providerOptions: modelOutput.providerOptions }
  if (modelOutput.type !== 'content') return { type: 'text', value: result.text, ...extra }
  const own = new Map(offloaded.content.map((part, i) => [part, offloaded.parts[i]]))
  const value = result.parts.map((part) => {
    if (part.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text }
    if (own.has(part)) return own.get(part)
    if (isKept(part)) {
      const index = Number.parseInt(part.url.slice(KEPT_PART.length), 10)
      if (offloaded.parts[index] !== undefined) return offloaded.parts[index]
    }
    return { type: 'text', text: JSON.stringify(part) }
  })
  return { type: 'content', value, ...extra }
}

/** A copy of a model output to hand out (the SDK owns what it is given). */
export function copyOutput(modelOutput) {
  if (modelOutput === null || typeof modelOutput !== 'object') return modelOutput
  return Array.isArray(modelOutput.value) ? { ...modelOutput, value: modelOutput.value.map((p) => (p && typeof p === 'object' ? { ...p } : p)) } : { ...modelOutput }
}
