// Compiled with the oracle layer's include root: the harness (corpus, campaigns) sits above the
// oracle, so this public header must be out of its reach.
#include "nncheck/property.h"
#include "nncheck/corpus.h"

int nncheckLayerProbe() { return 0; }
