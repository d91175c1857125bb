#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: AveragePool returns wrong values (with ceil_mode, count_include_pad, kernel_shape, pads, strides) — AveragePool with ceil_mode=1, count_include_pad=1 and non-zero pads divides the last window by the whole kernel, counting positions past pads_end (ORT and PyTorch count only data and pads; with pads 0 OpenVINO does too)
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found (the spec's wording is loose: onnx/onnx#5276, closed unanswered; ORT fixed the same in microsoft/onnxruntime#16752)
#
# The ONNX specification, AveragePool-11 (https://onnx.ai/onnx/operators/onnx__AveragePool.html#averagepool-11):
#   | AveragePool consumes an input tensor X and applies average pooling across
#   |  the tensor according to kernel sizes, stride sizes, and pad lengths.
#   |  average pooling consisting of computing the average on all values of a
#   |  subset of the input tensor according to the kernel size and downsampling the
#   |  data into the output tensor Y for further processing. The output spatial shape will be following:
#   |  ```
#   |  output_spatial_shape[i] = floor((input_spatial_shape[i] + pad_shape[i] - kernel_spatial_shape[i]) / strides_spatial_shape[i] + 1)
#   |  ```
#   |  or
#   |  ```
#   |  output_spatial_shape[i] = ceil((input_spatial_shape[i] + pad_shape[i] - kernel_spatial_shape[i]) / strides_spatial_shape[i] + 1)
#   |  ```
#   |  if ceil_mode is enabled
#   ceil_mode=1: Whether to use ceil or floor (default) to compute the output shape.
#   count_include_pad=1: Whether include pad pixels when calculating values for the edges. Default is 0, doesn't count include pad.
#   kernel_shape=[1, 3]: The size of the kernel along each axis.
#   pads=[0, 2, 0, 0]: Padding for the beginning and ending along each spatial axis, it can take any value greater than or equal to 0. The value represent the number of pixels added to the beginning and end part of the corresponding axis. `pads` format should be as follow [x1_begin, x2_begin...x1_end, x2_end,...], where xi_begin the number of pixels added at the beginning of axis `i` and xi_end, the number of pixels added at the end of axis `i`. This attribute cannot be used simultaneously with auto_pad attribute. If not present, the padding defaults to 0 along start and end of each spatial axis.
#   strides=[1, 3]: Stride along each spatial axis. If not present, the stride defaults to 1 along each spatial axis.
#
# What goes wrong: (as recorded at mode=performance-no-snippets) outputs differ from the reference (worst abs error 0.666667, worst rel error 0.666667; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 1.43051e-06 at most)
#   first diverging node: node 'AveragePool_1' (AveragePool), output 'v10': 1 of 2 elements differ beyond rtol=0.001 atol=1e-05; max abs error 0.666666657, max rel error 0.666666657; first at [0, 0, 0, 1]: got 0.333333343, expected 1
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_4917 (opset 17, 1 nodes)
#     input  v5: float32[1, 1, 1, 2]
#     v10 = AveragePool(v5) {ceil_mode=1, count_include_pad=1, kernel_shape=[1, 3], pads=[0, 2, 0, 0], strides=[1, 3]}
#     output v10: float32[1, 1, 1, 2]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/966ee261de62a7d4/ --backend openvino
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
    "v5": np.array([1, 1], dtype=np.float32).reshape([1, 1, 1, 2]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v10", np.array([0.333333343, 1], dtype=np.float32).reshape([1, 1, 1, 2])),
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
