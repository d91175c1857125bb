// Compiled with the core layer's include root: the ops layer sits above core, so this include
// must fail to compile. Layers.CoreIncludingOpsFailsTheBuild checks that it does.
#include "nncheck/graph.h"
#include "ops/infer.h"

int nncheckLayerProbe() { return 0; }
