#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# litert 2.3.0 (onnx2tf 1.29.24: Mod returns wrong values (with fmod) — Mod with fmod=1 computes a floored modulus: onnx2tf's Mod conversion never reads fmod and always emits FLOOR_MOD
# litert 2.3.0 (onnx2tf 1.29.24, TensorFlow 2.19.0), Python 3.11.2, numpy 1.26.4; configuration kernels=reference
# Upstream: none found
#
# The ONNX specification, Mod-13 (https://onnx.ai/onnx/operators/onnx__Mod.html#mod-13):
#   | Performs element-wise binary modulus (with Numpy-style broadcasting support).
#   |     The sign of the remainder is the same as that of the Divisor.
#   fmod=1: Whether the operator should behave like fmod (default=0 meaning it will do integer mods); Set this to 1 to force fmod treatment
#
# What goes wrong: (as recorded at kernels=xnnpack) outputs differ from the reference (worst abs error 0.595074, worst rel error 1.46959; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 1.90735e-06 at most)
#   first diverging node: node 'Mod_7' (Mod), output 'x2': 1 of 1 elements differ beyond rtol=0.001 atol=1e-05; max abs error 0.59507376, max rel error 1.46958557; first at [0]: got -0.190147519, expected 0.40492624
# Configurations: fails at kernels=builtin (mismatch), kernels=reference (mismatch), kernels=xnnpack (mismatch); passes at none: fails at every configuration: the fault is in what they share, the conversion (onnxsim, onnx2tf 1.29.24, TensorFlow's TFLite converter)
#
# The model (model.onnx, beside this script):
#   graph nncheck_212 (opset 17, 1 nodes)
#     input  x85: float32[1]
#     input  x86: float32[1]
#     x2 = Mod(x85, x86) {fmod=1}
#     output x2: float32[1]
#
# Needs: pip install onnx2tf==1.29.24 tensorflow==2.19.0 ai-edge-litert==2.3.0 tf-keras onnx-graphsurgeon sng4onnx onnxsim psutil numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/litert/corpus/fe85f8c58ff869d8/ --backend litert
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
    "x85": np.array([1], dtype=np.float32).reshape([1]),
    "x86": np.array([-0.59507376], dtype=np.float32).reshape([1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("x2", np.array([0.40492624], dtype=np.float32).reshape([1])),
]
OUTPUT_NAMES = [name for name, _ in EXPECTED]
RTOL, ATOL = 0.001, 1.0000000000000001e-05


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
