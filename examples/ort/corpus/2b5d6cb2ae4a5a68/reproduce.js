#!/usr/bin/env node
// ort 1.30.0: Resize returns wrong values — Resize returns a copy of its input whenever the output shape equals the input's, even with a scale other than 1
// ort 1.30.0, Node.js 20.20.2; configuration level=disabled,threads=1
// Upstream: none found
//
// The ONNX specification, Resize-13 (https://onnx.ai/onnx/operators/onnx__Resize.html#resize-13):
//   | Resize the input tensor. In general, it calculates every value in the output tensor as a weighted average of neighborhood (a.k.a. sampling locations) in the input tensor.
//   | Each dimension value of the output tensor is:
//   |   output_dimension = floor(input_dimension * (roi_end - roi_start) * scale) if input \"sizes\" is not specified.
//
// What goes wrong: outputs differ from the reference (worst abs error 1, worst rel error inf; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 0 at most)
//   first diverging node: node 'Resize_5' (Resize), output 'x0': 1 of 3 elements differ beyond rtol=0.001 atol=1e-05; max abs error 1, max rel error inf; first at [0, 0, 2]: got -1, expected 0
// Configurations: fails at level=all,threads=1 (mismatch), level=basic,threads=1 (mismatch), level=disabled,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at none: fails at every configuration: the fault is in what they share
//
// The model (model.onnx, beside this script):
//   graph nncheck_51 (opset 17, 1 nodes)
//     input  x13: float32[1, 1, 3]
//     init   s14: float32[3] {1, 1, 1.25}
//     x0 = Resize(x13, -, s14)
//     output x0: float32[1, 1, 3]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/2b5d6cb2ae4a5a68 --backend ort
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
  ["x13"]: {type: 'float32', dims: [1, 1, 3], data: Float32Array.from([0, 0, -1])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["x0", {type: 'float32', dims: [1, 1, 3], data: Float32Array.from([0, 0, 0])}],
];
const OUTPUT_NAMES = EXPECTED.map(([name]) => name);
const RTOL = 0.001, ATOL = 1.0000000000000001e-05;

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
