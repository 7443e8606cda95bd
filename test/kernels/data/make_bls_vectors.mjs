// Writes bls_vectors.txt: BLS12-381 point encodings and pairing values from
// an independent implementation, @noble/curves, for the kernels' tests.
//
//   node test/kernels/data/make_bls_vectors.mjs > test/kernels/data/bls_vectors.txt
//
// The script installs the pinned @noble/curves with npm into a temporary
// folder outside the repository and removes it afterwards. Its scalars come
// from SHA-256 of fixed labels, so a second run writes the same file.
//
// Lines (hex without 0x; scalars 32 bytes big-endian, below r):
//   g1 <k> <[k]G1 compressed, 48 bytes> <[k]G1 uncompressed, 96 bytes>
//   g2 <k> <[k]G2 compressed, 96 bytes> <[k]G2 uncompressed, 192 bytes>
//   gt <a> <b> <e([a]G1, [b]G2): 12 Fq of 48 bytes, c0.c0.c0, c0.c0.c1,
//      c0.c1.c0, ..., c1.c2.c1 (Fq12 = Fq6[w], Fq6 = Fq2[v], Fq2 = Fq[u])>
// k = 0 is the point at infinity; k and r - k are a point and its negation.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const NOBLE = '@noble/curves@2.4.0';

const dir = mkdtempSync(join(tmpdir(), 'stoker-noble-'));
let bls;
try {
  execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', NOBLE], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const entry = join(dir, 'node_modules', '@noble', 'curves', 'bls12-381.js');
  ({ bls12_381: bls } = await import(pathToFileURL(entry).href));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const r = bls.fields.Fr.ORDER;
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const scalarHex = (k) => k.toString(16).padStart(64, '0');
const scalar = (label) =>
  BigInt('0x' + createHash('sha256').update('stoker bls vectors ' + label).digest('hex')) % r;

const mul = (Point, k) => (k === 0n ? Point.ZERO : Point.BASE.multiply(k));

function scalars(group) {
  const ks = [0n, 1n, 2n, 3n, r - 1n, r - 2n];
  for (let i = 0; i < 16; ++i) ks.push(scalar(`${group} ${i}`));
  for (let i = 0; i < 4; ++i) ks.push(r - scalar(`${group} ${i}`));  // negations of the first
  ks.push(scalar(`${group} small`) >> 192n);  // a short scalar
  return ks;
}

const lines = [
  `# BLS12-381 encodings written by ${NOBLE} through test/kernels/data/make_bls_vectors.mjs.`,
  '# g1 <k> <[k]G1 compressed> <[k]G1 uncompressed>; g2 <k> <[k]G2 compressed> <[k]G2 uncompressed>',
  '# gt <a> <b> <e([a]G1, [b]G2), 12 coefficients c0.c0.c0 .. c1.c2.c1>',
];
for (const [name, Point] of [
  ['g1', bls.G1.Point],
  ['g2', bls.G2.Point],
]) {
  for (const k of scalars(name)) {
    const p = mul(Point, k);
    lines.push(`${name} ${scalarHex(k)} ${hex(p.toBytes(true))} ${hex(p.toBytes(false))}`);
  }
}
const fqHex = (x) => x.toString(16).padStart(96, '0');
const fq12Hex = (f) =>
  [f.c0, f.c1]
    .flatMap((f6) => [f6.c0, f6.c1, f6.c2])
    .flatMap((f2) => [f2.c0, f2.c1])
    .map(fqHex)
    .join('');
for (const [a, b] of [
  [1n, 1n],
  [scalar('gt a'), scalar('gt b')],
]) {
  const e = bls.pairing(mul(bls.G1.Point, a), mul(bls.G2.Point, b));
  lines.push(`gt ${scalarHex(a)} ${scalarHex(b)} ${fq12Hex(e)}`);
}
process.stdout.write(lines.join('\n') + '\n');
