// See pc_table_fixture.h. Branches make blocks: the large function has several, the small one
// and the reached one have one or two.
#include "pc_table_fixture.h"

#include <vector>

namespace pc_table_fixture {

__attribute__((noinline)) int reached(int x) { return x + 1; }

__attribute__((noinline)) int neverReachedLarge(int x) {
  int y = 0;
  for (int i = 0; i < x; ++i) {
    if (i % 3 == 0)
      y += i;
    else if (i % 5 == 0)
      y -= x;
    else
      y ^= i;
  }
  return y > 100 ? y / 2 : y;
}

__attribute__((noinline)) int neverReachedSmall(int x) { return x * 2; }

__attribute__((noinline)) int neverReachedUsingTheLibrary(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return static_cast<int>(v.size());
}

}  // namespace pc_table_fixture
