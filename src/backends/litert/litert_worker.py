"""LiteRT on CPU as an nncheck engine, over the worker protocol: conversion as a configuration.

A model is converted as onnx2tf converts it (onnx-simplifier first, three times over, then
onnx2tf's ONNX-to-Keras translation) and made a .tflite by TensorFlow's TFLite
converter with the settings onnx2tf uses (built-in ops, select TensorFlow ops allowed). The
converted model runs in ai-edge-litert's interpreter with the configuration's kernels. Every
configuration shares the conversion, so a fault at every configuration is the converter's and
one only where the kernels differ is the interpreter's (the `shared_stage` fact says so).

Layouts: onnx2tf turns NCHW-like inputs and outputs into NHWC. Each graph input of rank 3 to 5
is taken in ONNX's layout and transposed first (`keep_ncw_or_nchw_or_ncdhw_input_names`: inside,
the same path as onnx2tf's default; its `keep_shape_absolutely_input_names` takes another, which
gets even a Relu of a [2,3,3] input wrong), and each output is flattened by a Reshape the worker
appends: onnx2tf must give a Reshape ONNX's element order, so the flat values have one reading,
the declared shape, whatever layout onnx2tf chose inside. (Rank 1 too: a constant output
onnx2tf keeps as is is lost from the converted model's signature.)

Configurations (`kernels=NAME`), one thread each:
  xnnpack    BUILTIN, the built-in kernels with the XNNPACK delegate: the default, as LiteRT's
  builtin    BUILTIN_WITHOUT_DEFAULT_DELEGATES, the optimized built-in kernels
  reference  BUILTIN_REF, TFLite's reference kernels: the baseline (they lack a few ops the
             others have, ELU, CEIL and ROUND among them: unsupported there)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import io
import os
import pathlib
import random
import re
import sys
import tempfile
from typing import Any

# Read when TensorFlow loads: no CUDA probing, no C++ log lines on every conversion.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx2tf  # noqa: E402
import onnxsim  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402

from nncheck_engine import Engine, Unsupported, probed_ops, serve  # noqa: E402


def sample_images() -> np.ndarray:
    """What onnx2tf downloads from its GitHub releases for a model whose inputs all look like
    batches of RGB images (20 images, 128x128x3, float32 in [0, 1)), to run onnxruntime on while
    it converts: seeded values of that shape instead. Nothing is downloaded at run time, and the
    conversion does not hang on the network or depend on it."""
    return np.random.default_rng(0).random((20, 128, 128, 3), dtype=np.float32)


sys.modules["onnx2tf.onnx2tf"].download_test_image_data = sample_images  # type: ignore[attr-defined]

ONNX2TF = importlib.metadata.version("onnx2tf")
LITERT = importlib.metadata.version("ai-edge-litert")
KERNELS: dict[str, OpResolverType] = {  # the default first
    "xnnpack": OpResolverType.BUILTIN,
    "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    "reference": OpResolverType.BUILTIN_REF,
}
ONNXSIM = "onnxsim"  # the converter's switch: onnx2tf's simplification first
XNNPACK = "xnnpack"  # the interpreter's: the delegate, named when it took a node
FLAT = "_nncheck_flat"
# onnx2tf's words for an ONNX op, attribute or type it does not convert ("ScatterElements
# currently supports only reduction=['none']", "TensorFlow does not support
# noop_with_empty_axes=1", and "Invalid auto_pad attribute: SAME_LOWER", which ONNX allows):
# limits.
_STATED_LIMIT = re.compile(
    r"^.*(?:not supported|not yet implemented|is not implemented|unsupported|supports only"
    r"|only supports|does not support|Invalid \w+ attribute).*$",
    re.M | re.I,
)
# TensorFlow's converter's for a TensorFlow op that is neither a LiteRT op nor a select one
# ("'tf.Asin' op is neither a custom op nor a flex op"): a limit.
_NO_TFLITE_OP = re.compile(r"'(tf\.\w+)' op is neither a custom op nor a flex op")
# What onnx2tf's log says of a failure: the node it was converting; and its colours.
_AT_NODE = re.compile(r"onnx_op_name: (\S+)")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
# The interpreter's for an op (or an op's version) its kernels lack: the reference kernels lack
# some the built-in ones have (ABS version 5, which TensorFlow 2.19's converter writes).
_NO_KERNEL = re.compile(r"Didn't find op for builtin opcode '(\w+)' version '(\d+)'")


def kernels_of(configuration: str) -> str:
    kernels = configuration.removeprefix("kernels=")
    if kernels not in KERNELS:
        raise ValueError(f"no kernels '{kernels}' (kernels: {', '.join(KERNELS)})")
    return kernels


def with_flat_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with each output flattened (a Reshape to [-1] named <output>_nncheck_flat), so that
    the converted model's outputs have ONNX's element order."""
    wrapped = onnx.ModelProto()
    wrapped.CopyFrom(model)
    graph = wrapped.graph
    shape = onnx.numpy_helper.from_array(np.array([-1], np.int64), "nncheck_flat_shape")
    graph.initializer.append(shape)
    for output in graph.output:
        graph.node.append(
            onnx.helper.make_node("Reshape", [output.name, shape.name], [output.name + FLAT])
        )
        size = int(np.prod([d.dim_value for d in output.type.tensor_type.shape.dim]))
        output.name += FLAT
        del output.type.tensor_type.shape.dim[:]
        output.type.tensor_type.shape.dim.add().dim_value = size
    return wrapped


def simplified(model: onnx.ModelProto) -> onnx.ModelProto:
    """What onnx2tf's simplification makes of `model`: the `onnxsim` command three times over, at
    its defaults, the model kept as it was where that fails. onnx2tf runs each as a process of
    its own; in process, the same function takes 0.01 s instead of 0.85 s."""
    for _ in range(3):
        try:
            model, _ = onnxsim.simplify(model)
        except Exception:  # noqa: BLE001 - onnx2tf warns and converts the model it had
            break
    return model


def convert(model: onnx.ModelProto, simplify: bool) -> bytes:
    """The .tflite flatbuffer of `model` (flat outputs), as onnx2tf and TFLite's converter make
    it. onnx2tf's log is caught and given with its failure."""
    log = io.StringIO()
    # onnx2tf's option takes only inputs of rank 3 to 5, the ones it would transpose.
    channels_first = [
        i.name for i in model.graph.input if 3 <= len(i.type.tensor_type.shape.dim) <= 5
    ]
    if simplify:
        model = simplified(model)
    # onnx2tf seeds these once, at import, and draws its dummy inputs from them: seeded again,
    # every conversion is a fresh process's first, whatever the worker converted before.
    random.seed(0)
    np.random.seed(0)
    tf_keras.utils.set_random_seed(0)
    try:
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(log):
            path = os.path.join(folder, "model.onnx")
            onnx.save(model, path)
            keras_model = onnx2tf.convert(
                input_onnx_file_path=path,
                output_folder_path=folder,
                keep_ncw_or_nchw_or_ncdhw_input_names=channels_first,
                not_use_onnxsim=True,  # done above
                disable_model_save=True,  # the .tflite alone: no SavedModel, no float16 copy
                non_verbose=True,
            )
            # onnx2tf's own settings for its float32 .tflite.
            converter = tf.lite.TFLiteConverter.from_keras_model(keras_model)
            converter.target_spec.supported_ops = [
                tf.lite.OpsSet.TFLITE_BUILTINS,
                tf.lite.OpsSet.SELECT_TF_OPS,
            ]
            return bytes(converter.convert())
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("onnx2tf.ops."):
            raise Unsupported("op", f"no conversion in onnx2tf for {e.name.rsplit('.', 1)[-1]}")
        raise
    except (Exception, SystemExit) as e:  # onnx2tf ends some failures with sys.exit(1)
        # onnx2tf's ERROR lines (its warnings may name a limit it worked around).
        logged = "\n".join(
            line for line in _COLOUR.sub("", log.getvalue()).splitlines() if "ERROR:" in line
        )
        said = f"{type(e).__name__}: {_COLOUR.sub('', str(e))}"
        if m := _NO_TFLITE_OP.search(said):
            raise Unsupported("limit", f"no LiteRT or select TensorFlow op for {m.group(1)}") from None
        if m := _STATED_LIMIT.search(said + "\n" + logged):
            raise Unsupported("limit", m.group(0).strip()[:500]) from None
        at = _AT_NODE.search(logged)
        where = f" at node {at.group(1)}" if at else ""
        # SystemExit carries no message: onnx2tf said why in its log, on its ERROR lines.
        why = said if not isinstance(e, SystemExit) else logged.strip()[-2000:]
        raise RuntimeError(f"the conversion failed{where}: {why[:3000]}") from None
    finally:
        tf_keras.backend.clear_session()  # Keras names and graphs would pile up otherwise


class LiteRt(Engine):
    name = "litert"
    version = f"{LITERT} (onnx2tf {ONNX2TF}, TensorFlow {tf.__version__})"
    description = (
        f"LiteRT {LITERT} on CPU, from ONNX by onnx2tf {ONNX2TF} and TensorFlow {tf.__version__}'s "
        "TFLite converter; configurations kernels=" + "|".join(KERNELS)
    )
    configurations = [f"kernels={k}" for k in KERNELS]
    baseline = "kernels=reference"
    install = "scripts/install-deps.sh litert"
    shared_stage = f"the conversion (onnxsim, onnx2tf {ONNX2TF}, TensorFlow's TFLite converter)"
    reproducer_requirements = (
        f"pip install onnx2tf=={ONNX2TF} tensorflow=={tf.__version__} ai-edge-litert=={LITERT} "
        "tf-keras onnx-graphsurgeon sng4onnx onnxsim psutil numpy"
    )
    capabilities = {
        # float32, int32, int64, bool. onnx2tf makes float16 inputs float32, and TensorFlow's
        # converter keeps float64, int8 and uint8 arithmetic as select TensorFlow ops.
        "dtypes": [1, 6, 7, 9],
        "opset": 17,
        # nncheck probe --backend litert --per-op 2 (at the default, kernels=xnnpack)
        "ops": probed_ops(pathlib.Path(__file__).resolve().parent / "litert_capabilities.inc"),
        "weights_must_be_initializers": True,
        "shape_operands_must_be_initializers": True,
    }
    # TensorFlow and onnx2tf import in about 4 s.
    start_seconds = 10
    # A fork of a worker that imported them and converted nothing converts as a new one does:
    # nncheck confirms a failure in such forks, not in a new worker that imports them again.
    fresh_forks = True

    def __init__(self) -> None:
        self.cached: tuple[bytes, bytes] | None = None  # (key, .tflite): one model, each kernels

    def optimizations(self, configuration: str) -> list[str]:
        return [XNNPACK] if kernels_of(configuration) == "xnnpack" else []

    def unreported_optimizations(self, configuration: str) -> list[str]:
        kernels_of(configuration)
        return [ONNXSIM]

    def run(self, model, inputs, configuration, disabled):  # type: ignore[no-untyped-def]
        kernels = kernels_of(configuration)
        if XNNPACK in disabled and kernels == "xnnpack":
            kernels = "builtin"
        proto = onnx.load_from_string(model)
        if constant := constant_outputs(proto.graph):
            # onnx2tf builds a Keras functional model: with no input TensorFlow's converter
            # fails ("Could not translate MLIR to FlatBuffer"), and an output computed from
            # constants alone is missing from the converted model's signature. A fault of the
            # conversion, in the README; refused, so that it does not stand in for others.
            raise Unsupported(
                "limit", f"outputs computed from constants alone, which the conversion loses: {constant}"
            )
        flatbuffer = self.converted(model, proto, simplify=ONNXSIM not in disabled)
        outputs, delegated = run_converted(flatbuffer, KERNELS[kernels], proto.graph, inputs)
        return outputs, [XNNPACK] if delegated else []

    def converted(self, model: bytes, proto: onnx.ModelProto, simplify: bool) -> bytes:
        """The .tflite of `model` (`proto` parsed), converted once for every kernels."""
        key = hashlib.sha256(model + bytes([simplify])).digest()
        if self.cached is None or self.cached[0] != key:
            self.cached = (key, convert(with_flat_outputs(proto), simplify))
        return self.cached[1]

    def reproducer(self, configuration: str) -> str:
        resolver = KERNELS[kernels_of(configuration)].name
        return f"""import os
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
    declared = {{}}
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
        experimental_op_resolver_type=OpResolverType.{resolver},
        num_threads=1,
    )
    results = interpreter.get_signature_runner()(**feeds)
    return [np.asarray(results[name]).reshape(shape) for name, shape in declared.items()]
"""


def constant_outputs(graph: Any) -> list[str]:
    """The graph's outputs that no graph input reaches (all of them for a graph without one)."""
    initializers = {i.name for i in graph.initializer}
    live = {i.name for i in graph.input if i.name not in initializers}
    for node in graph.node:
        if any(name in live for name in node.input):
            live.update(node.output)
    return [o.name for o in graph.output if o.name not in live]


def run_converted(
    flatbuffer: bytes, resolver: OpResolverType, graph: Any, inputs: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], bool]:
    """The graph's outputs by name, from the converted model's signature, each reshaped from
    flat to its declared shape; and whether the XNNPACK delegate took a node."""
    try:
        interpreter = Interpreter(
            model_content=flatbuffer, experimental_op_resolver_type=resolver, num_threads=1
        )
    except ValueError as e:
        if m := _NO_KERNEL.search(str(e)):
            raise Unsupported("limit", f"no {m.group(1)} version {m.group(2)} in these kernels")
        raise
    ops = [op["op_name"] for op in interpreter._get_ops_details()]
    # A TensorFlow op the converter kept (float64 or int8 arithmetic): the reference kernels
    # cannot run it, the others hand it to the Flex delegate, so the configurations would not
    # compare. LiteRT's own ops only.
    if flex := sorted({op for op in ops if op.startswith("Flex")}):
        raise Unsupported("limit", f"the converted model needs select TensorFlow ops: {flex}")
    initializers = {i.name for i in graph.initializer}
    feeds = {i.name: inputs[i.name] for i in graph.input if i.name not in initializers}
    # TensorFlow's converter writes no SignatureDef when it cannot export the Keras model as a
    # SavedModel (onnx2tf's grouped Conv leaves an untracked variable) and falls back to its
    # frozen-graph path: then the inputs by tensor name (the ONNX names) and the outputs in
    # the Keras model's order, the graph's.
    signed = bool(interpreter.get_signature_list())
    if signed:
        runner = interpreter.get_signature_runner()
        expected = runner.get_input_details()
    else:
        interpreter.allocate_tensors()
        expected = {d["name"]: d for d in interpreter.get_input_details()}
    if set(expected) != set(feeds):
        raise RuntimeError(f"the converted model's inputs {sorted(expected)} are not {sorted(feeds)}")
    for name, value in feeds.items():
        if expected[name]["dtype"] != value.dtype:
            # onnx2tf makes float16 and float64 inputs float32 (its own choice: not generated).
            raise Unsupported(
                "dtype",
                f"the converted model takes '{name}' as {np.dtype(expected[name]['dtype'])}, "
                f"not {value.dtype}",
            )
    if signed:
        results = runner(**feeds)
    else:
        for name, value in feeds.items():
            interpreter.set_tensor(expected[name]["index"], value)
        interpreter.invoke()
        details = interpreter.get_output_details()
        if len(details) != len(graph.output):
            raise RuntimeError(
                f"the converted model has {len(details)} outputs, not {len(graph.output)}"
            )
        results = {
            o.name + FLAT: interpreter.get_tensor(d["index"]) for o, d in zip(graph.output, details)
        }
    outputs: dict[str, np.ndarray] = {}
    for o in graph.output:
        shape = [d.dim_value for d in o.type.tensor_type.shape.dim]
        name = o.name + FLAT
        if name not in results:
            raise RuntimeError(f"the converted model has no output '{name}': {sorted(results)}")
        outputs[o.name] = np.asarray(results[name]).reshape(shape)
    # After the Flex check, a delegate node is XNNPACK's; it is there only once the interpreter
    # has prepared (the ops read before running do not have it).
    delegated = "DELEGATE" in [op["op_name"] for op in interpreter._get_ops_details()]
    return outputs, delegated


if __name__ == "__main__":
    serve(LiteRt())
