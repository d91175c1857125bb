// A module compiled by clang with -fsanitize-coverage=inline-8bit-counters,pc-table
// (tests/CMakeLists.txt defines NNCHECK_PC_TABLE_FIXTURE when it is built): three functions of
// different sizes, for the report of the functions no run reached (coverage::Reached).
//
//   nncheck::fixture::reached(1);   // the other two stay unreached
#pragma once

namespace nncheck::fixture {

int reached(int x);
int neverReachedLarge(int x);  // more blocks than neverReachedSmall
int neverReachedSmall(int x);

}  // namespace nncheck::fixture
