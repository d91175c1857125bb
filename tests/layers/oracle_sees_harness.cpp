// Compiled with the oracle layer's include root: the harness (corpus, campaigns) sits above the
// oracle, so this public header must be out of its reach.
#include "nncheck/corpus.h"
#include "nncheck/property.h"

int nncheckLayerProbe() { return 0; }
