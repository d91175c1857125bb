#!/usr/bin/env node
// ort 1.30.0: MaxPool returns an output of the wrong shape or type (with auto_pad, dilations, kernel_shape) — MaxPool with auto_pad SAME and dilations pads for the undilated kernel
// ort 1.30.0, Node.js 20.20.2; configuration level=disabled,threads=1
// Upstream: none found
//
// The ONNX specification, MaxPool-12 (https://onnx.ai/onnx/operators/onnx__MaxPool.html#maxpool-12):
//   | MaxPool consumes an input tensor X and applies max pooling across
//   |  the tensor according to kernel sizes, stride sizes, and pad lengths.
//   |  max pooling consisting of computing the max on all values of a
//   |  subset of the input tensor according to the kernel size and downsampling the
//   |  data into the output tensor Y for further processing. The output spatial shape will be following:
//   |  ```
//   |  output_spatial_shape[i] = floor((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * dilations[i] + 1)) / strides_spatial_shape[i] + 1)
//   |  ```
//   |  or
//   |  ```
//   |  output_spatial_shape[i] = ceil((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * dilations[i] + 1)) / strides_spatial_shape[i] + 1)
//   |  ```
//   |  if ceil_mode is enabled
//   auto_pad="SAME_LOWER": auto_pad must be either NOTSET, SAME_UPPER, SAME_LOWER or VALID. Where default value is NOTSET, which means explicit padding is used. SAME_UPPER or SAME_LOWER mean pad the input so that `output_shape[i] = ceil(input_shape[i] / strides[i])` for each axis `i`. The padding is split between the two sides equally or almost equally (depending on whether it is even or odd). In case the padding is an odd number, the extra padding is added at the end for SAME_UPPER and at the beginning for SAME_LOWER.
//   dilations=[2, 1]: Dilation value along each spatial axis of filter. If not present, the dilation defaults to 1 along each spatial axis.
//   kernel_shape=[2, 3]: The size of the kernel along each axis.
//
// What goes wrong: (as recorded at level=extended,threads=1) outputs differ from the reference in shape, dtype or presence (no values compared)
//   first diverging node: node 'MaxPool_4' (MaxPool), output 'v11': shape differs: expected float32[1, 1, 2, 1], got float32[1, 1, 1, 1]
// Configurations: fails at level=all,threads=1 (mismatch), level=basic,threads=1 (mismatch), level=disabled,threads=1 (mismatch), level=extended,threads=1 (mismatch); passes at none: fails at every configuration: the fault is in what they share
//
// The model (model.onnx, beside this script):
//   graph nncheck_1011 (opset 17, 1 nodes)
//     input  v1: float32[1, 1, 2, 1]
//     v11 = MaxPool(v1) {auto_pad="SAME_LOWER", dilations=[2, 1], kernel_shape=[2, 3]}
//     output v11: float32[1, 1, 2, 1]
//
// Needs: npm install onnxruntime-node@1.30.0
// Run: node reproduce.js   (exits 1 while the bug is there, 0 once it is fixed)
// Written by: nncheck repro examples/ort/corpus/a9c539deb9d05cf0 --backend ort
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
  ["v1"]: {type: 'float32', dims: [1, 1, 2, 1], data: Float32Array.from([0, 0])},
};
// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
const EXPECTED = [
  ["v11", {type: 'float32', dims: [1, 1, 2, 1], data: Float32Array.from([0, 0])}],
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
