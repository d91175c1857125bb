// ONNX Runtime 1.30, MaxPool with auto_pad=SAME_* and dilations > 1 gets the wrong output shape (SAME padding computed from the undilated kernel). Standalone: onnxruntime-node and this folder's model.onnx.
//   model: v11 = MaxPool(v1[1,1,2,1]; auto_pad="SAME_LOWER", kernel_shape=[2,3], dilations=[2,1], strides default)  (opset 17)
//   spec (MaxPool): SAME_UPPER/SAME_LOWER: output_spatial_shape[i] = ceil(input_spatial_shape[i] / strides[i]);
//     pad_shape[i] = (output_spatial_shape[i] - 1) * strides[i] + ((kernel_shape[i] - 1) * dilations[i] + 1) - input_spatial_shape[i]
//   H: out = ceil(2/1) = 2, pad = 1*1 + (1*2+1) - 2 = 2 -> [1,1];  W: out = ceil(1/1) = 1, pad = 0 + 3 - 1 = 2 -> [1,1]
//   x = [1, 2]: y[0] = max over h in {0-1, 0+2-1} = {-1, 1} -> x[1] = 2;  y[1] = max over h in {0, 2} -> x[0] = 1
//   expected Y = [2, 1], shape [1,1,2,1].  ORT pads by (out-1)*stride + kernel - in = 1 (no dilation) and returns shape [1,1,1,1].
//   upstream: no report found (searched 2026-11-26); related but different: #10083.
//   node reproduce.js [path to node_modules]   -> exit 1 while the bug is there
const path = require('path');
const ort = require(path.join(process.argv[2] || 'node_modules', 'onnxruntime-node'));
(async () => {
  const model = require('fs').readFileSync(path.join(__dirname, 'model.onnx'));
  const s = await ort.InferenceSession.create(model);
  const feeds = { v1: new ort.Tensor('float32', Float32Array.from([1, 2]), [1, 1, 2, 1]) };
  const expected = { dims: [1, 1, 2, 1], data: [2, 1] };
  let ok = false;
  try {
    const y = (await s.run(feeds)).v11;
    console.log('got', y.dims, Array.from(y.data), 'expected', expected.dims, expected.data);
    ok = JSON.stringify(y.dims) === JSON.stringify(expected.dims) &&
         expected.data.every((v, i) => y.data[i] === v);
  } catch (e) { console.log('error:', e.message, '\nexpected', expected.dims, expected.data); }
  console.log(ok ? 'OK' : 'MISMATCH');
  process.exit(ok ? 0 : 1);
})();
