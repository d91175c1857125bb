// ONNX Runtime 1.30, CommonSubexpressionElimination (level basic and above) merges two Splits of one
// input that have different numbers of outputs, so a one-output Split returns the first third of its
// input. Standalone: onnxruntime-node and this folder's model.onnx.
//   model: v4 = Split(v2[3]) (one output); v5 = Concat(v4) axis=-1; v8, v9, v10 = Split(v2)   (opset 17;
//          no split input, axis 0)
//   Split-13 without 'split' divides the axis into as many equal parts as the node has outputs:
//     one output -> v4 = v2 whole, so v5 = Concat(v4) = v2 = [1, 2, 3] (shape [3]);
//     three outputs -> v8 = [1], v9 = [2], v10 = [3].   (ORT at level disabled gives exactly this.)
//   ORT basic/extended/all gives v5 = [1] (shape [1]): CSE's equivalence key of a node output is op type,
//   domain, inputs, attributes and output index, never the node's output count, so v4 (output 0 of
//   Split(v2)) is taken for v8 (output 0 of Split(v2)).
//   upstream: no report found (searched 2026-11-26).
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const v2 = new ort.Tensor('float32', Float32Array.from([1, 2, 3]), [3]);
  const expected = {v5: {dims: [3], data: [1, 2, 3]}, v8: {dims: [1], data: [1]}};
  let ok = true;
  for (const level of ['disabled', 'basic']) {
    const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: level, intraOpNumThreads: 1});
    const r = await s.run({v2});
    const got = {v5: {dims: r.v5.dims, data: Array.from(r.v5.data)},
                 v8: {dims: r.v8.dims, data: Array.from(r.v8.data)}};
    const same = JSON.stringify(got) === JSON.stringify(expected);
    console.log(`ORT ${ort.env.versions.common} ${level}: ${JSON.stringify(got)} -> ${same ? 'OK' : 'MISMATCH'}`);
    ok = ok && same;
  }
  console.log(`expected ${JSON.stringify(expected)}`);
  process.exit(ok ? 0 : 1);
})();
