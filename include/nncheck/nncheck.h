// nncheck: property-based testing for deep-learning compilers. The umbrella header of the
// library (nncheck::nncheck): every public header but the GoogleTest and RapidCheck glue, which
// is <nncheck/gtest.h> (nncheck::gtest; it includes this one) and engines (<nncheck/opencv.h>).
//
//   #include <nncheck/nncheck.h>
//   nncheck::TestCase tc = nncheck::makeTestCase(nncheck::GeneratorConfig{}, /*seed=*/1);
//   nncheck::checkValid(tc.model);
//   nncheck::TensorMap out = nncheck::runReference(tc.model, tc.inputs);
#pragma once

// core: the IR, files, the engine interface
#include "nncheck/backend.h"
#include "nncheck/capabilities.h"
#include "nncheck/closeness.h"
#include "nncheck/dtype.h"
#include "nncheck/error.h"
#include "nncheck/graph.h"
#include "nncheck/onnx_io.h"
#include "nncheck/outcome.h"
#include "nncheck/tensor.h"
#include "nncheck/test_case.h"
// ops, interpreter, engines by name, isolation
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "nncheck/registry.h"
#include "nncheck/validity.h"
// generation and shrinking
#include "nncheck/generator.h"
#include "nncheck/shrink.h"
#include "nncheck/value_search.h"
#include "nncheck/variants.h"
// the oracle
#include "nncheck/compare.h"
#include "nncheck/localize.h"
#include "nncheck/oracle.h"
#include "nncheck/property.h"
#include "nncheck/tolerance.h"
// the harness
#include "nncheck/campaign.h"
#include "nncheck/corpus.h"
