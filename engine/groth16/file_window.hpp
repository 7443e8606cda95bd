// A window of an open file or shared-memory object, read as if it were a
// whole file: how the witness readers take a witness that a client wrote
// into a region of its shared memory, without a copy to a file first.
#pragma once

#include <cstdint>
#include <string>

namespace stoker::engine::groth16 {

struct FileWindow {
  int fd = -1;          // not taken over: the reader duplicates it
  std::string label;    // names it in messages ("shm:/w1 bytes 0..4096")
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

}  // namespace stoker::engine::groth16
