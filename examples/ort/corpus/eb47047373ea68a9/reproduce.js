// ONNX Runtime 1.30, SimplifiedLayerNormFusion (level extended and above) fuses an RMSNorm-shaped
// chain whose ReduceMean has keepdims=0, which is not a normalization. Standalone: onnxruntime-node
// and this folder's model.onnx.
//   model: v4 = Pow(v2[2,1], w3=2); v5 = ReduceMean(v4) axes=[-1] keepdims=0 -> [2];
//          v7 = Add(v5, w6=1e-05); v8 = Sqrt(v7); v9 = Div(v2, v8); v11 = Mul(v9, w10=[-0.7396849])  (opset 17)
//   With keepdims=0, v8 has shape [2], and Div broadcasts [2,1] with [2] to [2,2]:
//     v9[i,j] = v2[i,0] / v8[j],  v8[j] = sqrt(v2[j,0]^2 + 1e-05)
//   feeds v2 = [[1],[1]]: v8 = [1.000005, 1.000005], v9 = 0.999995 everywhere, so
//     v11 = 0.999995 x -0.7396849 = -0.7396812 at each of the [2,2] places.   (ORT at level disabled/basic
//     gives exactly this.)
//   ORT extended/all replaces the chain by SimplifiedLayerNormalization(axis=-1), i.e. x / rms(x) with
//   keepdims=1 semantics: shape [2,1] instead of [2,2]. layer_norm_fusion.cc's SimplifiedLayerNormFusion
//   never reads ReduceMean's keepdims (nor LayerNormFusion). With x of shape [1,3,3] the values go
//   wrong too (each row divided by its own RMS instead of row j's).
//   upstream: known, microsoft/onnxruntime#30513 (open, labelled stale), fix PR #31144 (open).
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const v2 = new ort.Tensor('float32', Float32Array.from([1, 1]), [2, 1]);
  const expected = [-0.7396812, -0.7396812, -0.7396812, -0.7396812];
  let ok = true;
  for (const level of ['disabled', 'extended']) {
    const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: level, intraOpNumThreads: 1});
    const y = (await s.run({v2})).v11;
    const got = Array.from(y.data);
    const same = y.dims.join() === '2,2' && got.length === expected.length &&
        expected.every((e, i) => Math.abs(got[i] - e) <= 1e-5 + 1e-4 * Math.abs(e));
    console.log(`ORT ${ort.env.versions.common} ${level}: dims ${JSON.stringify(y.dims)} ` +
                `${JSON.stringify(got.map(v => +v.toFixed(7)))} -> ${same ? 'OK' : 'MISMATCH'}`);
    ok = ok && same;
  }
  console.log(`expected dims [2,2] ${JSON.stringify(expected)}`);
  process.exit(ok ? 0 : 1);
})();
