#!/usr/bin/env node
/*
 * ort_bench.js - ONNX Runtime (onnxruntime-node) counterpart of rknn_bench: whole-model latency, load
 * time and peak memory of one ONNX model, printed as one JSON line with the same fields.
 *
 * Usage: node ort_bench.js MODEL.onnx --shape NAME=1x3x224x224 [--shape ...] [--threads T]
 *                          [--iters N] [--warmup N] [--min-time-ms MS] [--max-iters N] [--label NAME]
 *
 * --shape fixes the dims of a graph input: the model is rewritten with those dims (by a child process,
 * into a temporary file, so the copy never counts in this process's peak memory) and ONNX Runtime
 * loads that, optimising a static graph as our converter does (it pins the same dims). The Node
 * binding has no other way to say this.
 *
 * Measured the way rknn_bench measures (see bench/rknn_bench.c):
 *   load_ms      wall time of InferenceSession.create() on the model file (read from the page cache).
 *   first_ms     the first session.run().
 *   median/min/max_ms  session.run() after `warmup` untimed runs; at least `iters` samples and at
 *                least `min-time-ms` of sampling, at most `max-iters`.
 *   rss_*_mb     process.resourceUsage().maxRSS (peak resident set, MiB) before the session, after it,
 *                and after all runs. The Node process itself accounts for ~40-50 MiB of rss_start.
 * Session options: CPU provider, graphOptimizationLevel 'all', intraOpNumThreads T, interOpNumThreads
 * 1, sequential execution; everything else ONNX Runtime's defaults.
 * Inputs: float32, seeded uniform [0, 1).
 *
 * onnxruntime-node comes from tests/models/node_modules (scripts/prepare_test_models.sh) or ORT_NODE_DIR.
 */
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

function usage(msg) {
  if (msg) console.error(`ort_bench.js: ${msg}`);
  console.error('usage: node ort_bench.js MODEL.onnx --shape NAME=1x3x224x224 [--threads T] [--iters N] ' +
    '[--warmup N] [--min-time-ms MS] [--max-iters N] [--label NAME]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { shapes: {}, threads: 1, iters: 30, warmup: 5, 'min-time-ms': 2000, 'max-iters': 1000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      if (args.model) usage(`unexpected argument ${a}`);
      args.model = a;
      continue;
    }
    const key = a.slice(2);
    const value = argv[++i];
    if (value === undefined) usage(`${a} needs a value`);
    if (key === 'shape') {
      const [name, dims] = value.split('=');
      if (!dims || !/^\d+(x\d+)*$/.test(dims)) usage(`bad --shape ${value}`);
      args.shapes[name] = dims.split('x').map(Number);
    } else if (key === 'label' || key === 'write-pinned') {
      args[key] = value;
    } else if (key in args) {
      if (!/^\d+$/.test(value)) usage(`${a} needs a non-negative integer`);
      args[key] = Number(value);
    } else {
      usage(`unknown option ${a}`);
    }
  }
  if (!args.model) usage('no model given');
  return args;
}

// ---- protobuf: just enough to replace the dims of graph inputs -------------------------------------
// ModelProto.graph = 7; GraphProto.input = 11; ValueInfoProto.name = 1, .type = 2;
// TypeProto.tensor_type = 1; TypeProto.Tensor.shape = 2; TensorShapeProto.dim = 1;
// TensorShapeProto.Dimension.dim_value = 1 (varint).
const WIRE_VARINT = 0; const WIRE_I64 = 1; const WIRE_LEN = 2; const WIRE_I32 = 5;

function readVarint(buf, pos) {
  let value = 0n; let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return { value, pos };
    shift += 7n;
  }
}

function writeVarint(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes = [];
  while (v >= 0x80n) { bytes.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
  bytes.push(Number(v));
  return Buffer.from(bytes);
}

// Splits a message into its fields; for length-delimited ones `body` is the payload.
function parseMessage(buf) {
  const fields = [];
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    const key = readVarint(buf, pos); pos = key.pos;
    const number = Number(key.value >> 3n); const wire = Number(key.value & 7n);
    let body = null;
    if (wire === WIRE_VARINT) pos = readVarint(buf, pos).pos;
    else if (wire === WIRE_I64) pos += 8;
    else if (wire === WIRE_I32) pos += 4;
    else if (wire === WIRE_LEN) {
      const len = readVarint(buf, pos); pos = len.pos;
      body = buf.subarray(pos, pos + Number(len.value)); pos += Number(len.value);
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    fields.push({ number, wire, body, raw: buf.subarray(start, pos) });
  }
  return fields;
}

const lenField = (number, body) => Buffer.concat([writeVarint((number << 3) | WIRE_LEN), writeVarint(body.length), body]);

// Rebuilds `buf` with each length-delimited field `number` replaced by edit(body).
function editFields(buf, number, edit) {
  return Buffer.concat(parseMessage(buf).map((f) =>
    (f.number === number && f.wire === WIRE_LEN ? lenField(number, edit(f.body)) : f.raw)));
}

function fixedShape(dims) {
  const dimMsg = (d) => Buffer.concat([writeVarint((1 << 3) | WIRE_VARINT), writeVarint(d)]);
  return Buffer.concat(dims.map((d) => lenField(1, dimMsg(d))));
}

function pinInputShapes(modelBytes, shapes) {
  const pinned = new Set();
  const out = editFields(modelBytes, 7, (graph) => editFields(graph, 11, (valueInfo) => {
    const nameField = parseMessage(valueInfo).find((f) => f.number === 1 && f.wire === WIRE_LEN);
    const name = nameField ? nameField.body.toString('utf8') : '';
    if (!shapes[name]) return valueInfo;
    pinned.add(name);
    return editFields(valueInfo, 2, (type) => editFields(type, 1, (tensorType) => {
      const rest = parseMessage(tensorType).filter((f) => f.number !== 2).map((f) => f.raw);
      return Buffer.concat([...rest, lenField(2, fixedShape(shapes[name]))]);
    }));
  }));
  for (const name of Object.keys(shapes)) {
    if (!pinned.has(name)) throw new Error(`--shape ${name}: the model has no graph input of that name`);
  }
  return out;
}

// ---- measurement ------------------------------------------------------------------------------------
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const rssMb = () => process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB

function seededUniform(seed) { // xorshift32, as in rknn_bench.c
  let s = seed >>> 0;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s >>> 8) / 16777216;
  };
}

function loadOrt() {
  const where = process.env.ORT_NODE_DIR ||
    path.join(__dirname, '..', 'tests', 'models', 'node_modules', 'onnxruntime-node');
  try {
    return require(where);
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node from ${where} (run scripts/prepare_test_models.sh): ${e.message}`);
  }
}

// Writes the model with pinned input dims to a temporary file, from a child process.
function pinnedCopy(args) {
  const file = path.join(os.tmpdir(), `ort_bench_${process.pid}_${path.basename(args.model)}`);
  const shapeArgs = Object.entries(args.shapes).flatMap(([n, d]) => ['--shape', `${n}=${d.join('x')}`]);
  const child = spawnSync(process.execPath, [__filename, args.model, ...shapeArgs, '--write-pinned', file],
    { encoding: 'utf8' });
  if (child.status !== 0) {
    throw new Error(child.stderr.trim().replace(/^ort_bench\.js: /, '') || 'pinning the input shapes failed');
  }
  return file;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args['write-pinned']) {
    fs.writeFileSync(args['write-pinned'], pinInputShapes(fs.readFileSync(args.model), args.shapes));
    return;
  }
  const modelFile = Object.keys(args.shapes).length ? pinnedCopy(args) : args.model;
  const ort = loadOrt();
  const rssStart = rssMb();
  let t0 = nowMs();
  let session;
  try {
    session = await ort.InferenceSession.create(modelFile, {
      executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
      intraOpNumThreads: args.threads, interOpNumThreads: 1,
    });
  } finally {
    if (modelFile !== args.model) fs.unlinkSync(modelFile);
  }
  const loadMs = nowMs() - t0;
  const rssLoad = rssMb();

  const random = seededUniform(42);
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata[i] || {};
    const dims = args.shapes[name] || (meta.shape || []).map((d) => (typeof d === 'number' ? d : 1));
    if (meta.type && meta.type !== 'float32') throw new Error(`input ${name}: only float32 inputs are supported`);
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let k = 0; k < data.length; k++) data[k] = random();
    feeds[name] = new ort.Tensor('float32', data, dims);
  });

  t0 = nowMs();
  await session.run(feeds);
  const firstMs = nowMs() - t0;
  for (let i = 0; i < args.warmup; i++) await session.run(feeds);
  const samples = [];
  const start = nowMs();
  const iters = Math.max(1, args.iters);
  while (samples.length < Math.max(iters, args['max-iters']) &&
         (samples.length < iters || nowMs() - start < args['min-time-ms'])) {
    t0 = nowMs();
    await session.run(feeds);
    samples.push(nowMs() - t0);
  }
  samples.sort((a, b) => a - b);
  const mid = samples.length >> 1;
  const median = samples.length % 2 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  const r = (x, d) => Number(x.toFixed(d));
  console.log(JSON.stringify({
    runtime: 'onnxruntime', model: args.label || path.basename(args.model), threads: args.threads,
    load_ms: r(loadMs, 3), first_ms: r(firstMs, 3), n: samples.length, median_ms: r(median, 4),
    min_ms: r(samples[0], 4), max_ms: r(samples[samples.length - 1], 4),
    rss_start_mb: r(rssStart, 1), rss_load_mb: r(rssLoad, 1), rss_peak_mb: r(rssMb(), 1),
    ort_version: ort.env.versions && ort.env.versions.common,
  }));
}

main().catch((e) => { console.error(`ort_bench.js: ${e.message}`); process.exit(1); });
