// nncheck: property-based testing for deep-learning compilers. The umbrella header.
//
//   #include <nncheck/nncheck.h>
//   nncheck::Model m = nncheck::loadModel("model.onnx");
//   nncheck::checkValid(m);
//   nncheck::TensorMap out = nncheck::runReference(m, inputs);
#pragma once

#include "nncheck/compare.h"
#include "nncheck/conformance.h"
#include "nncheck/dtype.h"
#include "nncheck/error.h"
#include "nncheck/graph.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/tensor.h"
#include "nncheck/validity.h"
