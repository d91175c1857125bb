// ONNX Runtime 1.30, rule PadFusion (in Level1_RuleBasedTransformer, level basic and above) fuses a
// Pad that feeds a Conv's WEIGHT input as if it fed the data input, and the session fails to load:
// "Node input 'w1' is not a graph input, initializer, or output of a previous node".
// Standalone: onnxruntime-node and this folder's model.onnx.
//   model: w1_eq0 = Sigmoid(w40 = [[[[0.904305]]]]); w1 = Pad(w1_eq0, pads=[0,0,0,0,0,0,0,0]) (mode constant);
//          v2 = Conv(x0[1,1,1,1], w1)   (opset 17; passes onnx.checker full_check with strict shape inference)
//   A Pad with all-zero pads is the identity (Pad-13), so v2 = x0 * sigmoid(0.904305)
//     = 2 * 0.7118334 = 1.4236667 for x0 = 2. ORT at level disabled loads and gives this.
//   pad_fusion.cc checks that the Pad's only child is a Conv/MaxPool/AveragePool, then
//   ReplaceNodeInput(child, 0, pad input) and removes the Pad: it never checks that the Pad output is
//   the child's input 0. Here the Conv becomes Conv(w1_eq0, w1) with w1's producer gone.
//   (mode="edge", which PadFusion skips, loads fine.) The same happens with Resize -> Pad -> Conv weight.
//   Found by `nncheck fuzz --oracle equivalence`: the Pad of zeros is the variant's rewrite pad-zero.
//   upstream: no report found (searched 2026-11-26); PadFusion PRs #18136, #18544, #21640, #22001, #28780
//   do not add the input-index check.
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const x0 = new ort.Tensor('float32', Float32Array.from([2]), [1, 1, 1, 1]);
  const expected = 1.4236667;
  let ok = true;
  for (const level of ['disabled', 'basic']) {
    try {
      const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: level, intraOpNumThreads: 1});
      const got = (await s.run({x0})).v2.data[0];
      const same = Math.abs(got - expected) <= 1e-5;
      console.log(`ORT ${ort.env.versions.common} ${level}: v2 = ${got} -> ${same ? 'OK' : 'MISMATCH'}`);
      ok = ok && same;
    } catch (e) {
      console.log(`ORT ${ort.env.versions.common} ${level}: error: ${e.message}`);
      ok = false;
    }
  }
  console.log(`expected v2 = ${expected}`);
  process.exit(ok ? 0 : 1);
})();
