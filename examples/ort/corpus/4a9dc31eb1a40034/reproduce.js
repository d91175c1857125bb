#!/usr/bin/env node
// ort 1.30.0: Resize returns wrong values (with coordinate_transformation_mode) — Resize with align_corners and scales: the coordinate mapping divides by the integer output length minus 1, not by input x scale minus 1 (a known, deliberate divergence; ORT's test runners skip ONNX's two tests for it)
// ort 1.30.0, Node.js 20.20.2; configuration level=disabled,threads=1
// Upstream: https://github.com/onnx/onnx/issues/2462 (closed)
//
// The ONNX specification, Resize-13 (https://onnx.ai/onnx/operators/onnx__Resize.html#resize-13):
//   | Resize the input tensor. In general, it calculates every value in the output tensor as a weighted average of neighborhood (a.k.a. sampling locations) in the input tensor.
//   | Each dimension value of the output tensor is:
//   |   output_dimension = floor(input_dimension * (roi_end - roi_start) * scale) if input \"sizes\" is not specified.
//   coordinate_transformation_mode="align_corners":
// This attribute describes how to transform the coordinate in the resized tensor to the coordinate in the original tensor. <br/>
//
// The coordinate of each dimension is transformed individually. Let's describe a case using axis x as an example.
// Denote x_resized as the coordinate of axis x in the resized tensor, x_original as the coordinate of axis x in the original tensor, length_original as the length of the original tensor in axis x, length_resized as the length of the resized tensor in axis x, roi_x = (start_x, end_x) of the axis x in input "roi", scale = length_resized / length_original, <br/>
//
// if coordinate_transformation_mode is "half_pixel", <br/>
// x_original = (x_resized + 0.5) / scale - 0.5, <br/>
//
// if coordinate_transformation_mode is "pytorch_half_pixel", <br/>
// x_original = length_resized > 1 ? (x_resized + 0.5) / scale - 0.5 : 0, <br/>
//
// if coordinate_transformation_mode is "align_corners", <br/>
// x_original = x_resized * (length_original - 1) / (length_resized - 1), <br/>
//
// if coordinate_transformation_mode is "asymmetric", <br/>
// x_original = x_resized / scale, <br/>
//
// if coordinate_transformation_mode is "tf_crop_and_resize", <br/>
// x_original = length_resized > 1 ? start_x * (length_original - 1) + x_resized * (end_x - start_x) * (length_original - 1) / (length_resized - 1) : 0.5 * (start_x + end_x) * (length_original - 1).
//
// What goes wrong: outputs differ from the reference (worst abs error 1, worst rel error 1; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 1.66893e-06 at most)
//   first diverging node: node 'Resize_1' (Resize), output 'v5': 1 of 2 elements differ beyond rtol=0.001 atol=1e-05; max abs error 1, max rel error 1; first at [0, 0, 1, 0]: got 2, expected 1
// Configurations: fails at level=all,threads=1 (mismatch), level=basic,threads=1 (mismatch), level=disabled,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at none: fails at every configuration: the fault is in what they share
//
// The model (model.onnx, beside this script):
//   graph nncheck_16629 (opset 17, 1 nodes)
//     input  x0: float32[1, 1, 5, 1]
//     init   s4: float32[4] {1, 1, 0.5, 1}
//     v5 = Resize(x0, -, s4) {coordinate_transformation_mode="align_corners"}
//     output v5: float32[1, 1, 2, 1]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/4a9dc31eb1a40034 --backend ort
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
  ["x0"]: {type: 'float32', dims: [1, 1, 5, 1], data: Float32Array.from([1, 1, 1, 1, 2])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["v5", {type: 'float32', dims: [1, 1, 2, 1], data: Float32Array.from([1, 1])}],
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
