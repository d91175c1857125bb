#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# litert 2.3.0 (onnx2tf 1.29.24: Gemm fails on a valid model — Gemm with a bias of shape [1] fails to run: TensorFlow's converter folds the Add into FULLY_CONNECTED's bias without broadcasting it (NumElements(bias) != SizeOfDimension(filter, 0))
# litert 2.3.0 (onnx2tf 1.29.24, TensorFlow 2.19.0), Python 3.11.2, numpy 1.26.4; configuration kernels=reference
# Upstream: tensorflow/tensorflow#60929 and google-ai-edge/LiteRT#166 (both closed; still in TensorFlow 2.19)
#
# The ONNX specification, Gemm-13 (https://onnx.ai/onnx/operators/onnx__Gemm.html#gemm-13):
#   | General Matrix multiplication:
#   | https://en.wikipedia.org/wiki/Basic_Linear_Algebra_Subprograms#Level_3
#
# What goes wrong: (as recorded at kernels=xnnpack) litert (kernels=xnnpack) failed: litert (kernels=xnnpack): RuntimeError: tflite/kernels/fully_connected.cc:506 NumElements(bias) != SizeOfDimension(filter, 0) (1 != 2)Node number 0 (FULLY_CONNECTED) failed to prepare.
# Configurations: fails at kernels=builtin (error), kernels=reference (error), kernels=xnnpack (error); passes at none: fails at every configuration: the fault is in what they share, the conversion (onnxsim, onnx2tf 1.29.24, TensorFlow's TFLite converter)
#
# The model (model.onnx, beside this script):
#   graph nncheck_190 (opset 17, 1 nodes)
#     input  v22: float32[1, 1]
#     init   w23: float32[1, 2] {0.742078, 0.46}
#     init   w24: float32[1] {0.0013355}
#     v25 = Gemm(v22, w23, w24)
#     output v25: float32[1, 2]
#
# Needs: pip install onnx2tf==1.29.24 tensorflow==2.19.0 ai-edge-litert==2.3.0 tf-keras onnx-graphsurgeon sng4onnx onnxsim psutil numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/litert/corpus/30baa5c61cde1d5b/ --backend litert
import os
import sys

import numpy as np

# --- the engine, alone ---
import os
import sys
import tempfile

import numpy as np
import onnx
import onnx2tf
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType

# onnx2tf runs onnx-simplifier as the `onnxsim` command of this environment.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
# As nncheck ran it: the sample images onnx2tf would download, as seeded values.
sys.modules["onnx2tf.onnx2tf"].download_test_image_data = (
    lambda: np.random.default_rng(0).random((20, 128, 128, 3), dtype=np.float32)
)


def run(model_path, feeds):
    model = onnx.load(model_path)
    # Each output flattened by a Reshape, so that its element order is ONNX's whatever layout
    # (NCHW or NHWC) onnx2tf picks; the flat values are reshaped as ONNX declares them.
    declared = {}
    flat = onnx.numpy_helper.from_array(np.array([-1], np.int64), "flat_shape")
    model.graph.initializer.append(flat)
    for o in model.graph.output:
        dims = [d.dim_value for d in o.type.tensor_type.shape.dim]
        declared[o.name + "_flat"] = dims
        model.graph.node.append(onnx.helper.make_node("Reshape", [o.name, flat.name], [o.name + "_flat"]))
        o.name += "_flat"
        del o.type.tensor_type.shape.dim[:]
        o.type.tensor_type.shape.dim.add().dim_value = int(np.prod(dims))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        onnx.save(model, path)
        keras_model = onnx2tf.convert(
            input_onnx_file_path=path,
            output_folder_path=folder,
            keep_ncw_or_nchw_or_ncdhw_input_names=[n for n, v in feeds.items() if 3 <= v.ndim <= 5],
            disable_model_save=True,
            non_verbose=True,
        )
    converter = tf.lite.TFLiteConverter.from_keras_model(keras_model)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
    interpreter = Interpreter(
        model_content=converter.convert(),
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
        num_threads=1,
    )
    results = interpreter.get_signature_runner()(**feeds)
    return [np.asarray(results[name]).reshape(shape) for name, shape in declared.items()]

# --- the case ---
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
FEEDS = {
    "v22": np.array([0], dtype=np.float32).reshape([1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v25", np.array([0.00133550342, 0.00133550342], dtype=np.float32).reshape([1, 2])),
]
OUTPUT_NAMES = [name for name, _ in EXPECTED]
RTOL, ATOL = 0.001, 9.9999999999999995e-08


def differs(got, want):
    """None when `got` is `want` within the tolerance (NaN where NaN), else how it differs."""
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "fc":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.abs(g - w) <= ATOL + RTOL * np.abs(w)) | (np.isnan(g) & np.isnan(w))
    else:
        same = got == want
    bad = np.flatnonzero(~np.asarray(same).reshape(-1))
    if bad.size == 0:
        return None
    at = np.unravel_index(bad[0], want.shape)
    return (f"{bad.size} of {want.size} elements differ beyond rtol={RTOL} atol={ATOL}; "
            f"first at {[int(i) for i in at]}: got {got[at]}, expected {want[at]}")


def main():
    try:
        outputs = run(MODEL, FEEDS)
    except Exception as e:  # the engine fails on a valid model
        print(f"FAILS: the engine raised {type(e).__name__}: {e}")
        return 1
    if len(outputs) != len(EXPECTED):
        print(f"FAILS: {len(outputs)} outputs, expected {len(EXPECTED)}")
        return 1
    failed = False
    for (name, want), got in zip(EXPECTED, outputs):
        got = np.asarray(got)
        why = differs(got, want)
        print(f"output {name}: {'MISMATCH: ' + why if why else 'OK'}")
        if want.size <= 32:
            print(f"  expected {want.dtype}{list(want.shape)}: {want.reshape(-1).tolist()}")
            print(f"  got      {got.dtype}{list(got.shape)}: {got.reshape(-1).tolist()}")
        failed = failed or why is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
