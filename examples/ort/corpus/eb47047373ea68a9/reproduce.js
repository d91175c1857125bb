#!/usr/bin/env node
// ort 1.30.0: Mul returns an output of the wrong shape or type after SimplifiedLayerNormFusion — SimplifiedLayerNormFusion fuses an RMSNorm chain whose ReduceMean has keepdims=0
// ort 1.30.0, Node.js 20.20.2; configuration level=all,threads=1
// Upstream: https://github.com/microsoft/onnxruntime/issues/30513 (known; fix in PR #31144, open)
//
// The ONNX specification, Mul-14 (https://onnx.ai/onnx/operators/onnx__Mul.html#mul-14):
//   | Performs element-wise binary multiplication (with Numpy-style broadcasting support).
//
// What goes wrong: outputs differ from the reference in shape, dtype or presence (no values compared)
//   first diverging node: node 'Mul_7' (Mul), output 'v11' [differs only with its inputs kept internal: fusion?]: shape differs: expected float32[2, 2], got float32[2, 1]
// Configurations: fails at level=all,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at level=basic,threads=1, level=disabled,threads=1: passes at level=disabled,threads=1: a bug of the optimizing configurations
// Culprit: fails with only SimplifiedLayerNormFusion enabled; passes with it disabled; workaround: the configuration level=all,threads=1,disable=SimplifiedLayerNormFusion
//
// The model (model.onnx, beside this script):
//   graph nncheck_4164 (opset 17, 6 nodes)
//     input  v2: float32[2, 1]
//     init   w3: float32[] {2}
//     init   w6: float32[] {1e-05}
//     init   w10: float32[1] {-0.739685}
//     v4 = Pow(v2, w3)
//     v5 = ReduceMean(v4) {axes=[-1], keepdims=0}
//     v7 = Add(v5, w6)
//     v8 = Sqrt(v7)
//     v9 = Div(v2, v8)
//     v11 = Mul(v9, w10)
//     output v11: float32[2, 2]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/eb47047373ea68a9 --backend ort
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
  ["v2"]: {type: 'float32', dims: [2, 1], data: Float32Array.from([1, 1])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["v11", {type: 'float32', dims: [2, 2], data: Float32Array.from([-0.739681184, -0.739681184, -0.739681184, -0.739681184])}],
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
