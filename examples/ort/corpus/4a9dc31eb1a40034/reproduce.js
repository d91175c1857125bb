// ONNX Runtime 1.30, Resize align_corners with scales uses the integer output length instead of input*scale (ONNX reference/conformance tests). Standalone: onnxruntime-node and this folder's model.onnx.
//   model: v5 = Resize(x0[1,1,5,1], roi='', scales=[1,1,0.5,1]) mode=nearest (nearest_mode round_prefer_floor), coordinate_transformation_mode=align_corners  (opset 17)
//   output length = floor(5*0.5) = 2. ONNX's reference (onnx/reference/ops/op_resize.py, backend test resize.py, and the node tests
//   test_resize_downsample_scales_{linear,cubic}_align_corners) take length_resized = input*scale = 2.5:
//     x=0 -> 0 -> x0[0]=1;  x=1 -> 1*(5-1)/(2.5-1) = 2.667 -> round -> 3 -> x0[3]=1.   expected [1, 1]
//   ORT uses length_resized = 2: x=1 -> 1*4/1 = 4 -> x0[4]=2 -> [1, 2]. (Spec text itself is ambiguous; see onnx/onnx#2462.)
//   upstream: no ORT issue found; ORT's own test filters skip ONNX's two align_corners
//   downsampling node tests ("results mismatch with onnx tests"); onnx/onnx#2462 settled the length.
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1 });
  const x0 = new ort.Tensor('float32', Float32Array.from([1, 1, 1, 1, 2]), [1, 1, 5, 1]);
  const out = (await session.run({ x0 })).v5;
  const got = Array.from(out.data), expected = [1, 1];
  const ok = out.dims.join() === '1,1,2,1' && got.every((v, i) => v === expected[i]);
  console.log(`dims ${JSON.stringify(out.dims)} got ${JSON.stringify(got)} expected ${JSON.stringify(expected)} -> ${ok ? 'OK' : 'MISMATCH (bug present)'}`);
  process.exit(ok ? 0 : 1);
})();
