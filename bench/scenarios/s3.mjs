/**
 * Scenario: offloading many 100 KB tool results to S3, through each side's plugin
 * with each side's `S3Storage`, against a single-node Garage on 127.0.0.1 started
 * for the scenario (`node scripts/garage.mjs ensure` installs it). Offloads are
 * issued by a fixed number of concurrent callers, as parallel tool calls would;
 * ours keeps at most 8 requests in flight per storage, the SDK's client up to its
 * socket pool. Reports the total time per run and the per-offload latency.
 */
import { S3Client } from '@aws-sdk/client-s3'
import { S3Storage as SdkS3Storage } from '@strands-agents/sdk/vended-plugins/context-offloader'
import { findGarage, startGarage } from '../../scripts/garage.mjs'
import { createPluginAgent, offload } from '../lib/agent.mjs'
import { collectGarbage, summarize } from '../lib/measure.mjs'
import { bar, ms, row, times } from '../lib/results.mjs'

export const id = 's3'
export const title = 'S3Storage: 100 KB offloads to a loopback Garage'

/** Concurrent callers issuing offloads. */
const CALLERS = 16
/** Allowance for noise in "at least as fast". */
const NOISE = 1.05

function payload(size) {
  const line = 'INFO worker=3 handled request in 12ms status=200 path=/api/v1/items\n'
  return line.repeat(Math.ceil(size / line.length)).slice(0, size)
}

/** One run: `count` offloads by CALLERS concurrent callers; total ms and per-offload ms. */
async function runOnce(impl, storage, count, text) {
  const { agent } = createPluginAgent(impl, storage, { maxResultTokens: 1_000, previewTokens: 100 })
  const latencies = []
  let next = 0
  await collectGarbage()
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < count) {
        next++
        const t0 = performance.now()
        await offload(agent, text)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  return { total: performance.now() - start, latency: summarize(latencies).median }
}

export async function run({ impls, quick, log }) {
  if (!findGarage()) {
    log('  garage is not installed (node scripts/garage.mjs ensure): skipping')
    return { rows: [], bars: [bar(id, 'ours at least as fast as the SDK', null, 'garage not installed')] }
  }
  const count = quick ? 200 : 1_000
  const runs = quick ? 2 : 3
  const text = payload(100 * 1024)
  const garage = await startGarage({ bucket: 'bench-bucket' })
  const credentials = { accessKeyId: garage.accessKeyId, secretAccessKey: garage.secretAccessKey }
  const client = new S3Client({ endpoint: garage.endpoint, region: garage.region, forcePathStyle: true, credentials })
  try {
    const storages = {
      sdk: () => new SdkS3Storage(garage.bucket, { prefix: 'sdk', s3Client: client }),
      ours: () =>
        new impls.ours.S3Storage(garage.bucket, {
          prefix: 'ours',
          endpoint: garage.endpoint,
          region: garage.region,
          forcePathStyle: true,
          credentials,
          maxInFlight: 8,
        }),
    }
    const sides = impls.ours?.S3Storage ? ['sdk', 'ours'] : ['sdk']
    const samples = { sdk: [], ours: [] }
    for (const side of sides) await runOnce(impls[side], storages[side](), Math.min(count, 100), text) // warm-up
    for (let i = 0; i < runs; i++) {
      for (const side of sides) {
        const result = await runOnce(impls[side], storages[side](), count, text)
        log(`  ${side}: ${count} offloads in ${ms(result.total)} (median ${ms(result.latency)} each)`)
        samples[side].push(result)
      }
    }
    const pick = (key) => ({
      sdk: summarize(samples.sdk.map((s) => s[key])),
      ours: samples.ours.length ? summarize(samples.ours.map((s) => s[key])) : null,
    })
    const n = count.toLocaleString()
    const total = row(id, `${n} offloads of 100 KB, ${CALLERS} callers, total`, 'ms', pick('total'))
    const latency = row(id, 'per offload (median)', 'ms', pick('latency'))
    const pass = total.ratio == null ? null : total.ratio * NOISE >= 1
    return {
      rows: [total, latency],
      bars: [
        bar(id, `${n} offloads to S3: ours at least as fast (5% noise allowance)`, pass, `SDK/ours ${times(total.ratio)} (SDK ${ms(total.sdk.median)}, ours ${ms(total.ours?.median)})`),
      ],
      details: { count, callers: CALLERS, samples },
    }
  } finally {
    client.destroy()
    await garage.stop()
  }
}
