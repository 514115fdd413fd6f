#!/usr/bin/env node
/*
 * bench_table.js - markdown table from the JSON lines that rknn_bench and ort_bench.js print.
 *
 * Usage: node bench_table.js RESULTS.jsonl [--precision fp16|fp32|int8]
 *
 * One row per model and thread count. With several passes (run_bench.sh --repeat) a row shows the pass
 * with the lowest median per runtime (the least disturbed one on a shared machine), the median load
 * time over the passes and the largest peak RSS. The ratio is ours / ONNX Runtime: below 1 is faster.
 * The last column is ours / the published single-core RK3588 NPU latency of the vendor model zoo
 * (SDK 2.3.2; issue 5), for the models and precisions that have one.
 */
'use strict';
const fs = require('fs');

const file = process.argv[2];
const precisionAt = process.argv.indexOf('--precision');
const precision = precisionAt > 0 ? process.argv[precisionAt + 1] : 'fp16';
if (!file) {
  console.error('usage: node bench_table.js RESULTS.jsonl [--precision fp16|fp32|int8]');
  process.exit(2);
}
// Vendor model zoo, one RK3588 NPU core, ms: INT8 models, and PP-OCRv4 rec in fp16.
const NPU_MS = {
  int8: {mobilenet_v2: 2.2, resnet50: 9.1, ppocrv4_det: 19.7},
  fp16: {ppocrv4_rec: 13.5},
};
const rows = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const digits = (x) => (x < 1 ? 3 : x < 10 ? 2 : 1);
const ms = (x) => (x === undefined ? '-' : x.toFixed(digits(x)));
const mb = (x) => (x === undefined ? '-' : x.toFixed(0));

function summary(results) {
  if (!results.length) return {};
  const best = results.reduce((a, b) => (b.median_ms < a.median_ms ? b : a));
  return {
    median: best.median_ms, min: best.min_ms, max: best.max_ms,
    load: median(results.map((r) => r.load_ms)),
    rss: Math.max(...results.map((r) => r.rss_peak_mb)),
    rssAbove: Math.max(...results.map((r) => r.rss_peak_mb - r.rss_start_mb)),
    passes: results.length,
  };
}

function npu(model, ours) {
  const ref = (NPU_MS[precision] || {})[model];
  if (ref === undefined || ours.median === undefined) return '-';
  return `${(ours.median / ref).toFixed(2)} (NPU ${ref})`;
}

const keys = [];
for (const r of rows) {
  const k = `${r.model}\u0000${r.threads}`;
  if (!keys.includes(k)) keys.push(k);
}

const out = [];
out.push('| model | threads | ORT ms | ours ms | ours / ORT | ORT load ms | ours load ms | ' +
  'ORT peak RSS MB (above start) | ours peak RSS MB (above start) | passes | ours / NPU |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|');
for (const k of keys) {
  const [model, threads] = k.split('\u0000');
  const pick = (runtime) => rows.filter((r) => r.model === model && String(r.threads) === threads && r.runtime === runtime);
  const ort = summary(pick('onnxruntime'));
  const ours = summary(pick('openrknn'));
  const ratio = ort.median && ours.median ? (ours.median / ort.median).toFixed(2) : '-';
  const cell = (s) => (s.median === undefined ? 'failed' : `**${ms(s.median)}** (${ms(s.min)}–${ms(s.max)})`);
  const rss = (s) => (s.rss === undefined ? '-' : `${mb(s.rss)} (${mb(s.rssAbove)})`);
  out.push(`| ${model} | ${threads} | ${cell(ort)} | ${cell(ours)} | ${ratio} | ${ms(ort.load)} | ${ms(ours.load)} | ` +
    `${rss(ort)} | ${rss(ours)} | ${Math.max(ort.passes || 0, ours.passes || 0)} | ${npu(model, ours)} |`);
}
console.log(out.join('\n'));
