// A module compiled by clang with -fsanitize-coverage=inline-8bit-counters,pc-table
// (tests/CMakeLists.txt defines NNCHECK_PC_TABLE_FIXTURE when it is built): functions of
// different sizes, one of them instantiating std::vector's code in this module, for the report
// of the functions no run reached (coverage::Reached).
//
//   pc_table_fixture::reached(1);   // the others stay unreached
#pragma once

namespace pc_table_fixture {

int reached(int x);
int neverReachedLarge(int x);  // more blocks than neverReachedSmall
int neverReachedSmall(int x);
int neverReachedUsingTheLibrary(int n);  // std::vector's code is not the module's own

}  // namespace pc_table_fixture
