// ONNX Runtime 1.30, LSTM with `clip` does not clip the input of h (Ct) before h(Ct). Standalone: onnxruntime-node and this folder's model.onnx.
//   model: v10 = LSTM(X=x0, W=x5 (initializer), R=x6, B=x7, sequence_lens=w8=[1], initial_h='', initial_c=x9)
//          hidden_size=1, clip=1.45931828, default activations f=Sigmoid g=Tanh h=Tanh  (opset 17, LSTM-14)
//   spec: "clip: Cell clip threshold. Clipping bounds the elements of a tensor in the range of
//          [-threshold, +threshold] and is applied to the input of activations."  and  Ht = ot (.) h(Ct)
//   feeds: X=[1,1], R=0, B=0, C0=1; W rows (i,o,f,c) sum to 1.43176, 0.44367, 10.3361, 18.1756
//     i = sigmoid(1.43176)=0.807175  o = sigmoid(0.44367)=0.609133
//     f = sigmoid(clip 10.3361 -> 1.45932)=0.811428  c = tanh(clip 18.1756 -> 1.45932)=0.897520
//     Ct = f*1 + i*c = 1.535884 ;  H = o * tanh(clip(Ct)) = 0.609133*tanh(1.459318) = 0.5467093
//     ORT returns o * tanh(1.535884) = 0.5551800 (Ct not clipped before h)
//   upstream: known, microsoft/onnxruntime#27224 (closed by the stale bot), fix in PR #27239 (open).
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
  const f32 = (d, dims) => new ort.Tensor('float32', Float32Array.from(d), dims);
  const r = await s.run({
    x0: f32([1, 1], [1, 1, 2]),
    x6: f32([0, 0, 0, 0], [1, 4, 1]),
    x7: f32([0, 0, 0, 0, 0, 0, 0, 0], [1, 8]),
    x9: f32([1], [1, 1, 1]),
  });
  const got = r.v10.data[0], expected = 0.5467093047734845;
  const ok = Math.abs(got - expected) <= 1e-4 + 1e-4 * Math.abs(expected);
  console.log(`Y[0,0,0,0]: ORT ${got}, expected ${expected} (spec: h(clip(Ct))) -> ${ok ? 'OK' : 'MISMATCH'}`);
  process.exit(ok ? 0 : 1);
})();
