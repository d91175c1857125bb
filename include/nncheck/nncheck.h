// nncheck: property-based testing for deep-learning compilers. The umbrella header of the core
// library (nncheck::nncheck); the GoogleTest and RapidCheck glue is <nncheck/gtest.h>.
//
//   #include <nncheck/nncheck.h>
//   nncheck::TestCase tc = nncheck::makeTestCase(nncheck::GeneratorConfig{}, /*seed=*/1);
//   nncheck::checkValid(tc.model);
//   nncheck::TensorMap out = nncheck::runReference(tc.model, tc.inputs);
#pragma once

#include "nncheck/backend.h"
#include "nncheck/compare.h"
#include "nncheck/conformance.h"
#include "nncheck/corpus.h"
#include "nncheck/dtype.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/graph.h"
#include "nncheck/onnx_io.h"
#include "nncheck/property.h"
#include "nncheck/reference.h"
#include "nncheck/shrink.h"
#include "nncheck/tensor.h"
#include "nncheck/test_case.h"
#include "nncheck/validity.h"
