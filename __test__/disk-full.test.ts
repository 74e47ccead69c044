// Fault injection: writes fail as on a full disk (a per-file size limit makes the
// kernel refuse them with EFBIG). The store reports a clear error, the plugin keeps
// the tool result in context, and nothing stored before is lost or left half-written.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

describe('FileStorage when writes fail (disk full)', () => {
  it('reports the failure, keeps the result in context and loses nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'co-disk-full-'))
    try {
      const fixture = join(import.meta.dirname, 'fixtures', 'disk-full-writer.mjs')
      // 200 KiB per file: small artifacts and the journal fit, 1 MB and 2 MB writes do not.
      const child = spawnSync(
        'bash',
        ['-c', `trap '' XFSZ; ulimit -f 200; exec "${process.execPath}" "${fixture}" "${dir}"`],
        { encoding: 'utf8', timeout: 60_000 },
      )
      expect(child.status, child.stderr).toBe(0)
      const report = JSON.parse(child.stdout.trim().split('\n').at(-1)!)

      expect(report.bigError).toMatch(/^failed to write artifact .*File too large/)
      expect(report.keptOriginal).toBe(true)
      expect(report.warnings).toHaveLength(1)
      expect(report.warnings[0]).toContain('tool_use_id=<call_1> | failed to offload tool result, keeping original')
      expect(report.warnings[0]).toContain('File too large')
      expect(report.intact).toEqual([true, true, true, true, true])
      expect(report.afterOk).toBe(true)
      // Six artifacts (five before, one after) and the journal: no partial or temporary file.
      expect(report.files).toHaveLength(7)
      expect(report.files.filter((f: string) => f.startsWith('.'))).toEqual(['.metadata.journal'])
      expect(report.files.filter((f: string) => /^\d+_\d+_(small_\d|after)\.txt$/.test(f))).toHaveLength(6)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
