// The public headers need nothing of ONNX: this file includes them all in a target that gets
// no ONNX include path or definition.
#include <nncheck/nncheck.h>

#if defined(ONNX_NAMESPACE) || defined(ONNX_ML)
#error "ONNX definitions reached a consumer of nncheck::nncheck"
#endif

int main() {
  nncheck::TestCase tc = nncheck::makeTestCase(nncheck::GeneratorConfig{}, 1);
  nncheck::checkValid(tc.model);
  return nncheck::runReference(tc.model, tc.inputs).empty() ? 1 : 0;
}
