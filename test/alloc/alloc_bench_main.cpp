// A stand-alone driver for tools/bench/alloc_bench.cpp, so the benchmark can run
// before it is wired into `stoker bench alloc`. Not built by default.
#include "tools/bench/alloc_bench.hpp"

int main(int argc, char** argv) {
  char name[] = "alloc";
  argv[0] = name;
  return stoker::tools::bench_alloc_command(argc, argv);
}
