#!/usr/bin/env node
/*
 * ort_reference.js - reference outputs from ONNX Runtime for the PP-OCR test models and the QDQ
 * (already-quantized) torchvision models, and a cross-check of the torchvision exports.
 *
 * Usage:
 *   node ort_reference.js WORK_DIR [--force]   write the reference outputs (below)
 *   node ort_reference.js WORK_DIR --check      compare ONNX Runtime with PyTorch on the torchvision models
 *
 * Reference mode reads WORK_DIR/NAME.onnx and WORK_DIR/NAME.in.f32 (raw little-endian float32, NCHW,
 * from render_ocr_inputs.py) and writes ONNX Runtime's output as WORK_DIR/NAME.out.f32 (same encoding)
 * for every PP-OCR model NAME; and for the QDQ models (make_qdq.py) it runs WORK_DIR/NAME_qdq.onnx on
 * the float model's input NAME.in.f32 and writes WORK_DIR/NAME_qdq.out.f32. ONNX Runtime runs a QDQ
 * model with its default optimisations, i.e. with the Q/DQ pairs fused into its integer kernels
 * (QLinearConv, QLinearAdd, QGemm, ...): the output a user of ONNX Runtime gets from that file.
 * An output newer than its model and input is left alone unless --force is given. ONNX Runtime runs
 * on one thread so the reference does not depend on how work is split.
 *
 * Check mode runs each torchvision NAME.onnx on NAME.in.f32 and compares with NAME.out.f32 (PyTorch).
 * It exits non-zero when they disagree: then the export, not our runtime, would be wrong.
 *
 * onnxruntime-node is loaded from tests/models/node_modules (scripts/prepare_test_models.sh installs it)
 * or from ORT_NODE_DIR.
 */
'use strict';
const fs = require('fs');
const path = require('path');

// Input shapes of the PP-OCR models, whose ONNX inputs have dynamic dims. Input "x" in all three.
const OCR_MODELS = {
  ppocrv4_det: [1, 3, 480, 480],
  ppocrv4_rec: [1, 3, 48, 320],
  ppocr_cls: [1, 3, 48, 192],
};
// Torchvision models that make_qdq.py turns into NAME_qdq.onnx (input "input", 1x3x224x224).
const QDQ_MODELS = ['resnet18', 'resnet50', 'mobilenet_v2'];
const TORCHVISION_MODELS = ['resnet18', 'resnet50', 'mobilenet_v2', 'mobilenet_v3_small', 'squeezenet1_1',
  'shufflenet_v2_x1_0', 'efficientnet_b0'];

function loadOrt() {
  const where = process.env.ORT_NODE_DIR || path.join(__dirname, 'node_modules', 'onnxruntime-node');
  try {
    return require(where);
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node from ${where} (run scripts/prepare_test_models.sh): ${e.message}`);
  }
}

function readF32(file) {
  const bytes = fs.readFileSync(file);
  // Copy into a fresh ArrayBuffer: a small Buffer may sit at an unaligned offset of a shared pool.
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

function writeF32Atomically(file, data) {
  fs.writeFileSync(file + '.tmp', Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  fs.renameSync(file + '.tmp', file);
}

const mtime = (file) => fs.statSync(file).mtimeMs;

async function runModel(ort, modelFile, input, shape) {
  const session = await ort.InferenceSession.create(modelFile, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  });
  if (session.inputNames.length !== 1 || session.outputNames.length !== 1) {
    throw new Error(`${modelFile}: expected one input and one output, got ${session.inputNames} -> ${session.outputNames}`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (input.length !== count) {
    throw new Error(`${modelFile}: input has ${input.length} floats, shape ${shape.join('x')} needs ${count}`);
  }
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input, shape) };
  const result = await session.run(feeds);
  return result[session.outputNames[0]];
}

function compare(got, want) {
  let dot = 0; let n1 = 0; let n2 = 0; let maxAbs = 0; let refMax = 0;
  for (let i = 0; i < want.length; i++) {
    dot += got[i] * want[i]; n1 += got[i] * got[i]; n2 += want[i] * want[i];
    maxAbs = Math.max(maxAbs, Math.abs(got[i] - want[i]));
    refMax = Math.max(refMax, Math.abs(want[i]));
  }
  return { cosine: dot / Math.sqrt(n1 * n2), max_abs_diff: maxAbs, ref_max_abs: refMax };
}

async function writeReferences(ort, dir, force) {
  const jobs = [];
  for (const [name, shape] of Object.entries(OCR_MODELS)) {
    jobs.push({ name, shape, model: name + '.onnx', input: name + '.in.f32', output: name + '.out.f32' });
  }
  for (const base of QDQ_MODELS) {
    const name = base + '_qdq';
    // float: PyTorch's output of the float model, printed next to the QDQ output as a sanity check.
    jobs.push({ name, shape: [1, 3, 224, 224], model: name + '.onnx', input: base + '.in.f32',
      output: name + '.out.f32', float: base + '.out.f32' });
  }
  for (const job of jobs) {
    const { name, shape } = job;
    const model = path.join(dir, job.model);
    const input = path.join(dir, job.input);
    const output = path.join(dir, job.output);
    for (const f of [model, input]) if (!fs.existsSync(f)) throw new Error(`${f} is missing`);
    if (!force && fs.existsSync(output) && mtime(output) >= Math.max(mtime(model), mtime(input))) {
      console.log(`${name}: up to date`);
      continue;
    }
    const t0 = Date.now();
    const y = await runModel(ort, model, readF32(input), shape);
    writeF32Atomically(output, y.data);
    let maxV = -Infinity; let minV = Infinity;
    for (const v of y.data) { maxV = Math.max(maxV, v); minV = Math.min(minV, v); }
    console.log(`${name}: output ${y.dims.join('x')} in [${minV.toPrecision(3)}, ${maxV.toPrecision(3)}], ` +
      `${Date.now() - t0} ms -> ${output}`);
    if (job.float && fs.existsSync(path.join(dir, job.float))) {
      const r = compare(y.data, readF32(path.join(dir, job.float)));
      console.log(`${name}: vs the float model (PyTorch) cosine ${r.cosine.toFixed(5)}`);
    }
  }
}

async function checkTorchvision(ort, dir) {
  let bad = 0;
  for (const name of TORCHVISION_MODELS) {
    const base = path.join(dir, name);
    const y = await runModel(ort, base + '.onnx', readF32(base + '.in.f32'), [1, 3, 224, 224]);
    const r = compare(y.data, readF32(base + '.out.f32'));
    // fp32 vs fp32 with different summation orders: anything short of this is a broken export.
    const ok = r.cosine > 0.999999 && r.max_abs_diff <= 1e-4 * Math.max(1, r.ref_max_abs);
    if (!ok) bad++;
    console.log(`${ok ? 'ok ' : 'BAD'} ${name}: ORT vs PyTorch cosine ${r.cosine.toFixed(8)}, ` +
      `max abs diff ${r.max_abs_diff.toExponential(2)} (output max abs ${r.ref_max_abs.toPrecision(3)})`);
  }
  if (bad) throw new Error(`${bad} torchvision export(s) disagree with ONNX Runtime`);
}

async function main() {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--'));
  if (!dir) {
    console.error('usage: node ort_reference.js WORK_DIR [--force | --check]');
    process.exit(2);
  }
  const ort = loadOrt();
  if (args.includes('--check')) await checkTorchvision(ort, dir);
  else await writeReferences(ort, dir, args.includes('--force'));
}

main().catch((e) => { console.error(`ort_reference.js: ${e.message}`); process.exit(1); });
