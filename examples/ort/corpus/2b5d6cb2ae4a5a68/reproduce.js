// ONNX Runtime 1.30, Resize returns a copy of X whenever the output shape equals the input shape,
// even when a scale is not 1. Standalone: onnxruntime-node and this folder's model.onnx.
//   model: x0 = Resize(x13[1,1,3], roi='', scales=[1,1,1.25])  mode nearest (round_prefer_floor),
//          coordinate_transformation_mode half_pixel  (opset 17)
//   Resize-13: output length floor(3 x 1.25) = 3, and x_original = (x + 0.5) / 1.25 - 0.5:
//     x = 0 -> -0.1 -> 0;  x = 1 -> 0.7 -> 1;  x = 2 -> 1.5 -> round_prefer_floor -> 1
//   so x13 = [1, 2, 3] gives [1, 2, 2]. ORT returns [1, 2, 3]: upsample.cc copies X when the
//   output dims equal the input dims, whatever the scales say.
//   upstream: no report found (searched 2026-11-26).
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'disabled'});
  const x13 = new ort.Tensor('float32', Float32Array.from([1, 2, 3]), [1, 1, 3]);
  const got = Array.from((await s.run({x13})).x0.data), expected = [1, 2, 2];
  const ok = JSON.stringify(got) === JSON.stringify(expected);
  console.log(`ORT ${ort.env.versions.common}: got ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}` +
              (ok ? ': fixed' : ': the bug is there'));
  process.exit(ok ? 0 : 1);
})();
