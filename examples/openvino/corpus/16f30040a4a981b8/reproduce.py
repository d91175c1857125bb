#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: MaxPool returns an output of the wrong shape or type (with kernel_shape, storage_order) — MaxPool with storage_order=1 transposes the Indices tensor instead of computing column-major index values: wrong shape for a non-square output
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: related: https://github.com/openvinotoolkit/openvino/issues/20879 (open, the index values); none found for the shape
#
# The ONNX specification, MaxPool-12 (https://onnx.ai/onnx/operators/onnx__MaxPool.html#maxpool-12):
#   | MaxPool consumes an input tensor X and applies max pooling across
#   |  the tensor according to kernel sizes, stride sizes, and pad lengths.
#   |  max pooling consisting of computing the max on all values of a
#   |  subset of the input tensor according to the kernel size and downsampling the
#   |  data into the output tensor Y for further processing. The output spatial shape will be following:
#   |  ```
#   |  output_spatial_shape[i] = floor((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * dilations[i] + 1)) / strides_spatial_shape[i] + 1)
#   |  ```
#   |  or
#   |  ```
#   |  output_spatial_shape[i] = ceil((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * dilations[i] + 1)) / strides_spatial_shape[i] + 1)
#   |  ```
#   |  if ceil_mode is enabled
#   kernel_shape=[1, 1]: The size of the kernel along each axis.
#   storage_order=1: The storage order of the tensor. 0 is row major, and 1 is column major.
#
# What goes wrong: (as recorded at mode=performance) outputs differ from the reference in shape, dtype or presence (no values compared)
#   first diverging node: node 'MaxPool_13' (MaxPool), output 'v100': shape differs: expected int64[1, 1, 1, 2], got int64[1, 1, 2, 1]
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_140 (opset 17, 1 nodes)
#     input  x10: float32[1, 1, 1, 2]
#     v99, v100 = MaxPool(x10) {kernel_shape=[1, 1], storage_order=1}
#     output v100: int64[1, 1, 1, 2]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/16f30040a4a981b8/ --backend openvino
import os
import sys

import numpy as np

# --- the engine, alone ---
import numpy as np
import openvino as ov


def run(model_path, feeds):
    compiled = ov.Core().compile_model(model_path, "CPU", {'INFERENCE_NUM_THREADS': 1, 'NUM_STREAMS': 1, 'ENABLE_CPU_PINNING': False, 'EXECUTION_MODE_HINT': 'ACCURACY'})
    # Inputs by name; by position if OpenVINO renamed one (a graph input that is a graph
    # output as is takes the output's name).
    names = [next((n for n in feeds if n in i.get_names()), None) for i in compiled.inputs]
    if None in names:
        names = list(feeds)
    results = compiled.create_infer_request().infer([feeds[n] for n in names])
    return [np.array(results[output]) for output in compiled.outputs]

# --- the case ---
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
FEEDS = {
    "x10": np.array([0, 0], dtype=np.float32).reshape([1, 1, 1, 2]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v100", np.array([0, 1], dtype=np.int64).reshape([1, 1, 1, 2])),
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
