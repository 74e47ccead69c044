// Copies the addons built on this machine (`npm run build` leaves
// `<binaryName>.<platform>.node` in the package root) into their platform
// packages under npm/<platform>/, ready for `npm pack` or `npm publish`.
// The release workflow uses `napi artifacts` instead, which collects every
// target's addon from the downloaded CI artifacts.
import { copyFileSync, existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const binaryName = pkg.napi?.binaryName ?? pkg.name
const npmDir = join(root, 'npm')

let copied = 0
for (const platform of readdirSync(npmDir)) {
  const file = `${binaryName}.${platform}.node`
  const source = join(root, file)
  if (!existsSync(source)) continue
  copyFileSync(source, join(npmDir, platform, file))
  console.log(`artifacts: ${file} -> npm/${platform}/`)
  copied++
}

if (copied === 0) {
  console.error(`artifacts: no ${binaryName}.<platform>.node in ${root}; run \`npm run build\` first`)
  process.exit(1)
}
