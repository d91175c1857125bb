#!/usr/bin/env node
// ort 1.30.0: Shrink returns an output of the wrong shape or type after EliminateDropout + Level1_RuleBasedTransformer — EliminateDropout makes the reader of a Dropout whose ratio a node computes read the ratio instead of the data
// ort 1.30.0, Node.js 20.20.2; configuration level=all,threads=1
// Upstream: none found
//
// The ONNX specification, Shrink-9 (https://onnx.ai/onnx/operators/onnx__Shrink.html#shrink-9):
//   | Shrink takes one input data (Tensor<numeric>) and produces one Tensor output,
//   | having same datatype and shape with input. It has two attributes, lambd and
//   | bias. The formula of this operator is: If x < -lambd, y = x + bias;
//   | If x > lambd, y = x - bias; Otherwise, y = 0.
//
// What goes wrong: outputs differ from the reference in shape, dtype or presence (no values compared)
//   first diverging node: node 'Shrink_1' (Shrink), output 'v3' [differs only with its inputs kept internal: fusion?]: shape differs: expected float32[1], got float32[]
// Configurations: fails at level=all,threads=1 (mismatch), level=basic,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at level=disabled,threads=1: passes at level=disabled,threads=1: a bug of the optimizing configurations
// Culprit: fails with only EliminateDropout and Level1_RuleBasedTransformer enabled; passes with them disabled; workaround: the configuration level=basic,threads=1,disable=EliminateDropout+Level1_RuleBasedTransformer
//
// The model (model.onnx, beside this script):
//   graph nncheck_563 (opset 17, 3 nodes)
//     input  x4: float32[1]
//     input  x10: float32[]
//     x5 = Shrink(x10)
//     x0 = Dropout(x4, x5)
//     v3 = Shrink(x0)
//     output v3: float32[1]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/f105958592a43046 --backend ort
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
  ["x4"]: {type: 'float32', dims: [1], data: Float32Array.from([0])},
  ["x10"]: {type: 'float32', dims: [], data: Float32Array.from([0])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["v3", {type: 'float32', dims: [1], data: Float32Array.from([0])}],
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
