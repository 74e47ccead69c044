// Pins the root package's optionalDependencies on the platform packages
// (npm/<platform>) to the root version. Runs in the `version` script after
// `napi version` has set the same version in every npm/<platform>/package.json,
// so `npm version <x>` keeps the three in step. (`napi pre-publish` rewrites the
// pins again when publishing.)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const manifestPath = join(root, 'package.json')
const pkg = JSON.parse(readFileSync(manifestPath, 'utf8'))

const pins = { ...pkg.optionalDependencies }
for (const platform of readdirSync(join(root, 'npm')).sort()) {
  const platformPkg = JSON.parse(readFileSync(join(root, 'npm', platform, 'package.json'), 'utf8'))
  pins[platformPkg.name] = pkg.version
}
pkg.optionalDependencies = pins
writeFileSync(manifestPath, JSON.stringify(pkg, null, 2) + '\n')
console.log(`optionalDependencies pinned to ${pkg.version}: ${Object.keys(pins).join(', ')}`)
