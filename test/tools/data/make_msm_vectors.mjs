// Writes the `stoker msm` test vectors in this folder from an independent
// implementation, @noble/curves, for test/tools/msm_cli_test.cpp:
//
//   node test/tools/data/make_msm_vectors.mjs
//
// The script installs the pinned @noble/curves with npm into a temporary
// folder outside the repository and removes it afterwards. Its scalars come
// from SHA-256 of fixed labels, so a second run writes the same files.
//
// For each group (g1: 96-byte points, g2: 192-byte points, both the
// uncompressed zcash/IETF encoding that `stoker msm` reads):
//   GROUP_points.bin   [a]G, [b]G, infinity, [a]G again, [c]G, G
//   GROUP_scalars.bin  32-byte little-endian: s, r - 1, t, 1, 0, a 64-bit u
//   GROUP_sum.bin      sum_i s_i P_i in the point encoding
// and g2_outside.bin: one point of E' (y^2 = x^3 + 4(u + 1)) outside G2,
// the one with the smallest x = k (k an integer, x.c1 = 0) that has a
// point, its y the smaller root.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const NOBLE = '@noble/curves@2.4.0';
const here = dirname(fileURLToPath(import.meta.url));

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
const hash = (label) =>
  BigInt('0x' + createHash('sha256').update('stoker msm vectors ' + label).digest('hex'));
const nonzero = (label) => (hash(label) % (r - 1n)) + 1n;

function scalarBytes(k) {
  const b = Buffer.alloc(32);
  for (let i = 0; i < 32; ++i) b[i] = Number((k >> BigInt(8 * i)) & 0xffn);
  return b;
}

function write(name, bytes) {
  writeFileSync(join(here, name), bytes);
}

for (const [name, Point] of [
  ['g1', bls.G1.Point],
  ['g2', bls.G2.Point],
]) {
  const [a, b, c] = ['a', 'b', 'c'].map((l) => nonzero(`${name} point ${l}`));
  const logs = [a, b, 0n, a, c, 1n];  // each point's discrete log; 0: infinity
  const scalars = [
    hash(`${name} scalar s`) % r,
    r - 1n,
    hash(`${name} scalar t`) % r,
    1n,
    0n,
    hash(`${name} scalar u`) >> 192n,
  ];
  const points = logs.map((k) => (k === 0n ? Point.ZERO : Point.BASE.multiply(k)));
  let sum = Point.ZERO;
  points.forEach((p, i) => {
    sum = sum.add(p.multiplyUnsafe(scalars[i]));
  });
  // The same sum as one multiple of G, a check on the sum above.
  const log = logs.reduce((acc, k, i) => (acc + k * scalars[i]) % r, 0n);
  if (!sum.equals(log === 0n ? Point.ZERO : Point.BASE.multiply(log)))
    throw new Error(`${name}: the two sums differ`);
  write(`${name}_points.bin`, Buffer.concat(points.map((p) => p.toBytes(false))));
  write(`${name}_scalars.bin`, Buffer.concat(scalars.map(scalarBytes)));
  write(`${name}_sum.bin`, Buffer.from(sum.toBytes(false)));
}

// The point of E' outside G2, written by hand: noble's toBytes refuses it.
const { Fp, Fp2 } = bls.fields;
const be48 = (v) => Buffer.from(v.toString(16).padStart(96, '0'), 'hex');
const half = (Fp.ORDER - 1n) / 2n;
const larger = (y) => (y.c1 !== 0n ? y.c1 > half : y.c0 > half);  // zcash's sign rule
const b = Fp2.create({ c0: 4n, c1: 4n });
for (let k = 0n; ; ++k) {
  const x = Fp2.create({ c0: k, c1: 0n });
  const rhs = Fp2.add(Fp2.mul(Fp2.sqr(x), x), b);
  if (!Fp2.eql(Fp2.pow(rhs, (Fp2.ORDER - 1n) / 2n), Fp2.ONE)) continue;  // not a square
  let y = Fp2.sqrt(rhs);
  if (larger(y)) y = Fp2.neg(y);
  const p = bls.G2.Point.fromAffine({ x, y });
  if (!Fp2.eql(Fp2.sqr(y), rhs) || p.isTorsionFree())
    throw new Error(`x = ${k}: not a point of E' outside G2`);
  write('g2_outside.bin', Buffer.concat([x.c1, x.c0, y.c1, y.c0].map(be48)));
  break;
}
