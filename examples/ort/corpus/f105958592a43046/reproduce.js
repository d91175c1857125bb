// ONNX Runtime 1.30, rule EliminateDropout (level basic and above): the reader of a Dropout whose
// ratio input a node computes reads the ratio instead of the data. Standalone: onnxruntime-node
// and this folder's model.onnx, nothing of nncheck.
//   model: x5 = Shrink(x10); x0 = Dropout(x4, x5); v3 = Shrink(x0)     (opset 17)
//   Dropout-13 in inference (no training_mode) is the identity on its data, so v3 = Shrink(x4),
//   of x4's shape [1]. Shrink's defaults (lambd 0.5, bias 0) map 2 to 2.
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const feeds = {x4: new ort.Tensor('float32', Float32Array.from([2]), [1]),
                 x10: new ort.Tensor('float32', Float32Array.from([0.25]), [])};
  const out = {};
  for (const level of ['disabled', 'basic']) {
    const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: level});
    const v3 = (await s.run(feeds)).v3;
    out[level] = JSON.stringify({dims: v3.dims, data: Array.from(v3.data)});
    console.log(`ORT ${ort.env.versions.common} ${level}: v3 = ${out[level]}`);
  }
  const ok = out.disabled === out.basic;
  console.log(ok ? 'same result: fixed' : 'differs: the bug is there (expected dims [1], data [2])');
  process.exit(ok ? 0 : 1);
})();
