// npm hashring 3.2.0 (its default, ketama-compatible continuum) as a ring-harness peer
// behind the process protocol (docs/guide/foreign-peers.md), under node 20.
//
// Install its one dependency offline-free once: `npm install --prefix peers/js hashring@3.2.0`
// (peers/js/node_modules is ignored by git); run: `node peers/js/hashring_peer.js`.
//
// hashring 3.2.0 builds libketama's continuum: MD5 of "host:port-<i>", four little-endian
// 32-bit points per digest, floor(weight / total * 40 * servers) digests per server (in
// double precision); the key's hash is the first four bytes of its MD5, little-endian; the
// owner is the first point >= the hash, wrapping. That is our `libketama` construction,
// except where double precision floors a share differently from the exact fraction, and
// for equal points (hashring's stable sort keeps the first server's, libketama the last).
'use strict';

const HashRing = require('hashring');

const TIME = 2;
let ring = null;
let index = new Map();
let pending = Buffer.alloc(0);

function u32(value) { const b = Buffer.alloc(4); b.writeUInt32LE(value); return b; }
function i64(value) { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(value)); return b; }
function text(value) { const b = Buffer.from(value, 'utf8'); return Buffer.concat([u32(b.length), b]); }

class Request {
  constructor(body) { this.body = body; this.at = 1; }
  take(n) {
    if (this.at + n > this.body.length) throw new Error('request cut short');
    const chunk = this.body.subarray(this.at, this.at + n);
    this.at += n;
    return chunk;
  }
  u32() { return this.take(4).readUInt32LE(0); }
  f64() { return this.take(8).readDoubleLE(0); }
  string() { return this.take(this.u32()).toString('utf8'); }
  // A ROUTE payload: n, n + 1 offsets, the key bytes (keys are strings to hashring).
  keys() {
    const n = this.u32();
    const offsets = [];
    for (let i = 0; i <= n; i++) offsets.push(this.u32());
    const blob = this.take(offsets[n]);
    const keys = new Array(n);
    for (let i = 0; i < n; i++) keys[i] = blob.toString('utf8', offsets[i], offsets[i + 1]);
    return keys;
  }
}

function route(keys) {
  const owners = Buffer.alloc(2 * keys.length);
  for (let i = 0; i < keys.length; i++) owners.writeUInt16LE(index.get(ring.get(keys[i])), 2 * i);
  return owners;
}

function answer(request) {
  switch (String.fromCharCode(request.body[0])) {
    case 'H':
      return Buffer.concat([u32(request.u32()), u32(TIME), text('npm hashring'), text('3.2.0')]);
    case 'B': {
      const servers = {};
      index = new Map();
      const n = request.u32();
      for (let i = 0; i < n; i++) {
        const name = request.string();
        servers[name] = request.f64();
        index.set(name, i);
      }
      // The cache would answer repeated keys without the ring: off, to time the ring.
      ring = new HashRing(servers, 'md5', { 'max cache size': 1 });
      return i64(ring.ring.length);
    }
    case 'R': {
      const keys = request.keys();
      return Buffer.concat([u32(keys.length), route(keys)]);
    }
    case 'T': {
      const repeats = request.u32();
      const keys = request.keys();
      const out = Buffer.alloc(4 + 8 * repeats);
      out.writeUInt32LE(repeats, 0);
      for (let r = 0; r < repeats; r++) {
        const start = process.hrtime.bigint();
        route(keys);
        out.writeDoubleLE(Number(process.hrtime.bigint() - start) / Math.max(1, keys.length), 4 + 8 * r);
      }
      return out;
    }
    default:
      throw new Error(`unsupported request ${request.body[0]}`);
  }
}

function reply(status, payload) {
  process.stdout.write(Buffer.concat([u32(1 + payload.length), Buffer.from(status), payload]));
}

process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32LE(0)) {
    const body = pending.subarray(4, 4 + pending.readUInt32LE(0));
    pending = pending.subarray(4 + body.length);
    if (body[0] === 'Q'.charCodeAt(0)) process.exit(0);
    try {
      reply('K', answer(new Request(body)));
    } catch (error) {
      reply('E', text(String(error.message)));
    }
  }
});
process.stdin.on('end', () => process.exit(0));
