#!/usr/bin/env node
// ort 1.30.0: LSTM returns wrong values (with clip, hidden_size) — LSTM with clip does not clip Ct before h(Ct)
// ort 1.30.0, Node.js 20.20.2; configuration level=disabled,threads=1
// Upstream: https://github.com/microsoft/onnxruntime/issues/27224 (known; fix in PR #27239, open)
//
// The ONNX specification, LSTM-14 (https://onnx.ai/onnx/operators/onnx__LSTM.html#lstm-14):
//   | Computes an one-layer LSTM. This operator is usually supported via some
//   | custom implementation such as CuDNN.
//   clip=1.45932: Cell clip threshold. Clipping bounds the elements of a tensor in the range of [-threshold, +threshold] and is applied to the input of activations. No clip if not specified.
//   hidden_size=1: Number of neurons in the hidden layer
//
// What goes wrong: (as recorded at level=basic,threads=1) outputs differ from the reference (worst abs error 0.00847065, worst rel error 0.0154939; tolerance rtol=0.001 atol=0.0001; a correct engine's float error there is estimated at 2.38419e-07 at most)
//   first diverging node: node 'LSTM_0' (LSTM), output 'v10': 1 of 1 elements differ beyond rtol=0.001 atol=0.0001; max abs error 0.00847065449, max rel error 0.0154938914; first at [0, 0, 0, 0]: got 0.555179954, expected 0.546709299
// Configurations: fails at level=all,threads=1 (mismatch), level=basic,threads=1 (mismatch), level=disabled,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at none: fails at every configuration: the fault is in what they share
//
// The model (model.onnx, beside this script):
//   graph nncheck_10427 (opset 17, 1 nodes)
//     input  x6: float32[1, 4, 1]
//     input  x7: float32[1, 8]
//     input  x9: float32[1, 1, 1]
//     input  x0: float32[1, 1, 2]
//     init   w8: int32[1] {1}
//     init   x5: float32[1, 4, 2] {0.753067, 0.678692, 0.186256, 0.257414, 6.25723, 4.07891, ...}
//     v10 = LSTM(x0, x5, x6, x7, w8, -, x9) {clip=1.45932, hidden_size=1}
//     output v10: float32[1, 1, 1, 1]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/15ee1d35a1c80749 --backend ort
'use strict';
const path = require('path');

// --- the engine, alone ---
const ort = require('onnxruntime-node');

async function run(modelPath, feeds) {
  const session = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'disabled',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const inputs = {};  // defined, not assigned: an input may be named __proto__
  for (const [name, t] of Object.entries(feeds)) {
    const value = new ort.Tensor(t.type, t.data, t.dims);
    Object.defineProperty(inputs, name, {value, enumerable: true});
  }
  const results = await session.run(inputs);
  return session.outputNames.map((name) => results[name]);
}

// --- the case ---
const MODEL = path.join(__dirname, 'model.onnx');
const FEEDS = {
  ["x6"]: {type: 'float32', dims: [1, 4, 1], data: Float32Array.from([0, 0, 0, 0])},
  ["x7"]: {type: 'float32', dims: [1, 8], data: Float32Array.from([0, 0, 0, 0, 0, 0, 0, 0])},
  ["x9"]: {type: 'float32', dims: [1, 1, 1], data: Float32Array.from([1])},
  ["x0"]: {type: 'float32', dims: [1, 1, 2], data: Float32Array.from([1, 1])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["v10", {type: 'float32', dims: [1, 1, 1, 1], data: Float32Array.from([0.546709299])}],
];
const OUTPUT_NAMES = EXPECTED.map(([name]) => name);
const RTOL = 0.001, ATOL = 0.0001;

// A tensor's elements as numbers (float16 from its bits) or bigints.
function values(t) {
  if (t.type !== 'float16') return Array.from(t.data);
  return Array.from(t.data, (h) => {
    const e = (h >> 10) & 0x1f, m = h & 0x3ff, sign = h & 0x8000 ? -1 : 1;
    if (e === 0) return sign * m * 2 ** -24;
    if (e === 31) return m ? NaN : sign * Infinity;
    return sign * (1 + m / 1024) * 2 ** (e - 15);
  });
}

// null when `got` is `want` within the tolerance (NaN where NaN), else how it differs.
function differs(got, want) {
  const dims = Array.from(got.dims, Number);
  if (got.type !== want.type) return `type ${got.type}, expected ${want.type}`;
  if (dims.join() !== want.dims.join()) return `shape [${dims}], expected [${want.dims}]`;
  const g = values(got), w = values(want);
  const float = ['float16', 'float32', 'float64'].includes(want.type);
  const bad = [];
  for (let i = 0; i < w.length; ++i) {
    const same = g[i] === w[i] || (float && (Math.abs(g[i] - w[i]) <= ATOL + RTOL * Math.abs(w[i]) ||
                                             (Number.isNaN(g[i]) && Number.isNaN(w[i]))));
    if (!same) bad.push(i);
  }
  if (!bad.length) return null;
  return `${bad.length} of ${w.length} elements differ beyond rtol=${RTOL} atol=${ATOL}; ` +
         `first at flat index ${bad[0]}: got ${g[bad[0]]}, expected ${w[bad[0]]}`;
}

(async () => {
  let outputs;
  try {
    outputs = await run(MODEL, FEEDS);
  } catch (e) {  // the engine fails on a valid model
    console.log(`FAILS: the engine threw ${e && e.message || e}`);
    process.exit(1);
  }
  if (outputs.length !== EXPECTED.length) {
    console.log(`FAILS: ${outputs.length} outputs, expected ${EXPECTED.length}`);
    process.exit(1);
  }
  let failed = false;
  EXPECTED.forEach(([name, want], k) => {
    const got = outputs[k];
    const why = differs(got, want);
    console.log(`output ${name}: ${why ? 'MISMATCH: ' + why : 'OK'}`);
    if (want.data.length <= 32) {
      console.log(`  expected ${want.type}[${want.dims}]: ${values(want).join(', ')}`);
      console.log(`  got      ${got.type}[${Array.from(got.dims, Number)}]: ${values(got).join(', ')}`);
    }
    failed = failed || why !== null;
  });
  process.exit(failed ? 1 : 0);
})();
