// The binary container of snarkjs's .zkey and circom's .wtns files
// (docs/GROTH16_FILES.md section 1): a 4-byte magic, a u32 version,
// a u32 section count, then sections of {u32 id, u64 size, data}, all
// little-endian, in any order of ids.
//
// The reader indexes the sections by id and refuses what snarkjs refuses or
// would misread: a duplicated id, a section or section header running past
// the end of the file, bytes after the last section. Messages name the file
// and the section by id and name ("bits.zkey: section 5 (A points)") and
// give byte offsets from the start of the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "engine/groth16/detail/file_io.hpp"

namespace stoker::engine::groth16::detail {

struct Section {
  std::uint32_t id = 0;
  std::uint64_t offset = 0;  // of the data, from the start of the file
  std::uint64_t size = 0;    // bytes of data
};

// A section's name for messages ("A points"); empty for ids the format
// does not define.
using SectionName = std::string_view (*)(std::uint32_t id);

class BinFileReader {
 public:
  // Errors: cannot open; shorter than the 12-byte header; another magic;
  // a section header or section past the end; a duplicated id; bytes after
  // the last section.
  static Result<BinFileReader> open(const std::string& path, std::string_view magic,
                                    SectionName name);
  static Result<BinFileReader> open(InputFile file, std::string_view magic, SectionName name);

  const std::string& path() const noexcept { return file_.path(); }
  int fd() const noexcept { return file_.fd(); }
  std::uint32_t version() const noexcept { return version_; }

  // The section with this id, or nullptr.
  const Section* find(std::uint32_t id) const noexcept;
  // The section with this id; an error names the missing section.
  Result<const Section*> require(std::uint32_t id) const;
  // "PATH: section ID (NAME)" for messages.
  std::string where(std::uint32_t id) const;
  // An error naming a section: "PATH: section ID (NAME): what".
  Error error(std::uint32_t id, const std::string& what) const;

  // Data bytes [at, at + bytes) of a section into dst; the caller has
  // checked the range against the section's size.
  Error read(const Section& s, std::uint64_t at, void* dst, std::size_t bytes) const;

 private:
  BinFileReader(InputFile file, SectionName name) : file_(std::move(file)), name_(name) {}
  InputFile file_;
  SectionName name_;
  std::uint32_t version_ = 0;
  std::vector<Section> sections_;
};

// Writes a container: the header, then each section as begin_section(id,
// size) followed by exactly `size` bytes of write()s. finish() checks that
// every section got the size it announced and closes the file.
class BinFileWriter {
 public:
  static Result<BinFileWriter> create(const std::string& path, std::string_view magic,
                                      std::uint32_t version, std::uint32_t sections);

  Error begin_section(std::uint32_t id, std::uint64_t size);
  Error write(const void* data, std::size_t bytes);
  Error write_u32(std::uint32_t v);
  Error finish();

 private:
  explicit BinFileWriter(OutputFile file, std::uint32_t sections)
      : file_(std::move(file)), sections_left_(sections) {}
  Error section_complete() const;
  OutputFile file_;
  std::uint32_t sections_left_;
  std::uint64_t section_end_ = 0;  // byte at which the open section ends
  bool in_section_ = false;
};

}  // namespace stoker::engine::groth16::detail
