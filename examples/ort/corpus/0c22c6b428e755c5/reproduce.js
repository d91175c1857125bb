#!/usr/bin/env node
// ort 1.30.0: MatMul returns wrong values after MatmulTransposeFusion — MatmulTransposeFusion drops the Transpose of a MatMul's first input when the second is 1-D: Transpose(A)·b computed as A·b
// ort 1.30.0, Node.js 20.20.2; configuration level=all,threads=1
// Upstream: none found
//
// The ONNX specification, MatMul-13 (https://onnx.ai/onnx/operators/onnx__MatMul.html#matmul-13):
//   | Matrix product that behaves like numpy.matmul: https://docs.scipy.org/doc/numpy-1.13.0/reference/generated/numpy.matmul.html
//
// What goes wrong: outputs differ from the reference (worst abs error 3.5368, worst rel error 1.89776; tolerance rtol=0.001 atol=0.0001; a correct engine's float error there is estimated at 2.86102e-06 at most)
//   first diverging node: node 'MatMul_5' (MatMul), output 'v7' [differs only with its inputs kept internal: fusion?]: 2 of 2 elements differ beyond rtol=0.001 atol=0.0001; max abs error 3.53680134, max rel error 1.89775686; first at [0]: got 4.51627541, expected 4.70682383
// Configurations: fails at level=all,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at level=basic,threads=1, level=disabled,threads=1: passes at level=disabled,threads=1: a bug of the optimizing configurations
// Culprit: fails with only MatmulTransposeFusion enabled; passes with it disabled; workaround: the configuration level=all,threads=1,disable=MatmulTransposeFusion
//
// The model (model.onnx, beside this script):
//   graph nncheck_2724 (opset 17, 2 nodes)
//     input  v3: float32[2, 2]
//     init   w6: float32[2] {0.8842, 0.047637}
//     v4 = Transpose(v3)
//     v7 = MatMul(v4, w6)
//     output v7: float32[2]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/0c22c6b428e755c5 --backend ort
'use strict';
const path = require('path');

// --- the engine, alone ---
const ort = require('onnxruntime-node');

async function run(modelPath, feeds) {
  const session = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'all',
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
  ["v3"]: {type: 'float32', dims: [2, 2], data: Float32Array.from([5, 2, 6, 2])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["v7", {type: 'float32', dims: [2], data: Float32Array.from([4.70682383, 1.86367464])}],
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
