#!/usr/bin/env node
/*
 * bench_table.js - markdown table from the JSON lines that rknn_bench and ort_bench.js print.
 *
 * Usage: node bench_table.js RESULTS.jsonl
 *
 * One row per model and thread count. With several passes (run_bench.sh --repeat) a row shows the pass
 * with the lowest median per runtime (the least disturbed one on a shared machine), the median load
 * time over the passes and the largest peak RSS. The ratio is ours / ONNX Runtime: below 1 is faster.
 */
'use strict';
const fs = require('fs');

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench_table.js RESULTS.jsonl');
  process.exit(2);
}
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

const keys = [];
for (const r of rows) {
  const k = `${r.model}\u0000${r.threads}`;
  if (!keys.includes(k)) keys.push(k);
}

const out = [];
out.push('| model | threads | ORT ms | ours ms | ours / ORT | ORT load ms | ours load ms | ' +
  'ORT peak RSS MB (above start) | ours peak RSS MB (above start) | passes |');
out.push('|---|---|---|---|---|---|---|---|---|---|');
for (const k of keys) {
  const [model, threads] = k.split('\u0000');
  const pick = (runtime) => rows.filter((r) => r.model === model && String(r.threads) === threads && r.runtime === runtime);
  const ort = summary(pick('onnxruntime'));
  const ours = summary(pick('openrknn'));
  const ratio = ort.median && ours.median ? (ours.median / ort.median).toFixed(2) : '-';
  const cell = (s) => (s.median === undefined ? 'failed' : `**${ms(s.median)}** (${ms(s.min)}–${ms(s.max)})`);
  const rss = (s) => (s.rss === undefined ? '-' : `${mb(s.rss)} (${mb(s.rssAbove)})`);
  out.push(`| ${model} | ${threads} | ${cell(ort)} | ${cell(ours)} | ${ratio} | ${ms(ort.load)} | ${ms(ours.load)} | ` +
    `${rss(ort)} | ${rss(ours)} | ${Math.max(ort.passes || 0, ours.passes || 0)} |`);
}
console.log(out.join('\n'));
