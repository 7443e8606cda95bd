// Plain file access for the Groth16 file readers and writers: an input file
// read at offsets straight into the caller's memory (keys run to tens of
// gigabytes, so a section goes into its vector in large reads, never point
// by point, and never through a second buffer), and an output file written
// through one large buffer. Messages name the file; the readers add what
// they were reading.
//
// An InputFile's read() may run on several threads at once (each read is
// one pread at its own offset); an OutputFile is one writer's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace stoker::engine::groth16::detail {

class InputFile {
 public:
  // Errors: "PATH: cannot open: <reason>".
  static Result<InputFile> open(const std::string& path);
  // Bytes [offset, offset + bytes) of an open file or shared-memory object
  // (a witness a client hands over in shared memory), read as a file of
  // that size; `fd` is duplicated, `label` names it in messages.
  static Result<InputFile> open_window(int fd, std::string label, std::uint64_t offset,
                                       std::uint64_t bytes);

  InputFile(InputFile&& o) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  const std::string& path() const noexcept { return path_; }
  std::uint64_t size() const noexcept { return size_; }
  // The open file, for what reads it whole (a digest); a window's bytes
  // start at its offset there.
  int fd() const noexcept { return fd_; }

  // Bytes [offset, offset + bytes) into dst. The caller has checked that
  // they lie inside the file; a failed or short read (the file changed
  // under us) is "PATH: WHAT: read of N bytes at byte X failed: <reason>",
  // WHAT saying what was read (a section) when given.
  Error read(std::uint64_t offset, void* dst, std::size_t bytes, std::string_view what = {}) const;

 private:
  InputFile(int fd, std::string path, std::uint64_t size, std::uint64_t base = 0) noexcept
      : fd_(fd), path_(std::move(path)), size_(size), base_(base) {}
  int fd_;
  std::string path_;
  std::uint64_t size_;
  std::uint64_t base_;  // where byte 0 lies in the underlying file
};

// Creates (or truncates) a file and writes it front to back. close() says
// whether everything reached the file; a writer destroyed without a
// successful close() removes the file, so a failed write leaves nothing
// half-written behind.
class OutputFile {
 public:
  // Errors: "PATH: cannot create: <reason>".
  static Result<OutputFile> create(const std::string& path);

  OutputFile(OutputFile&& o) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();

  const std::string& path() const noexcept { return path_; }
  std::uint64_t written() const noexcept { return written_; }

  // Errors: "PATH: write failed at byte X: <reason>".
  Error write(const void* data, std::size_t bytes);
  Error write_u32_le(std::uint32_t v);
  Error write_u64_le(std::uint64_t v);
  Error close();

 private:
  OutputFile(std::FILE* f, std::string path) noexcept : f_(f), path_(std::move(path)) {}
  std::FILE* f_;
  std::string path_;
  std::uint64_t written_ = 0;
  bool closed_ = false;
};

// Little-endian integers out of a byte buffer.
inline std::uint32_t load_u32_le(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
inline std::uint64_t load_u64_le(const unsigned char* p) {
  return std::uint64_t{load_u32_le(p)} | std::uint64_t{load_u32_le(p + 4)} << 32;
}
inline void store_u32_le(std::uint32_t v, unsigned char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace stoker::engine::groth16::detail
