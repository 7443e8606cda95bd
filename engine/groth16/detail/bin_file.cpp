// The snarkjs / circom binary container; see bin_file.hpp.
#include "engine/groth16/detail/bin_file.hpp"

#include <algorithm>
#include <cctype>

namespace stoker::engine::groth16::detail {
namespace {

constexpr std::uint64_t kFileHeaderBytes = 12;     // magic, version, section count
constexpr std::uint64_t kSectionHeaderBytes = 12;  // u32 id, u64 size

std::string section_label(std::uint32_t id, SectionName name) {
  std::string s = "section " + std::to_string(id);
  const std::string_view n = name ? name(id) : std::string_view{};
  if (!n.empty()) s += " (" + std::string(n) + ")";
  return s;
}

// The first bytes of a file as text when they are printable, else as hex.
std::string describe_magic(const unsigned char* m) {
  bool printable = true;
  for (int i = 0; i < 4; ++i) printable = printable && std::isprint(m[i]);
  if (printable) return "'" + std::string(reinterpret_cast<const char*>(m), 4) + "'";
  static const char* hex = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 0; i < 4; ++i) {
    s += hex[m[i] >> 4];
    s += hex[m[i] & 15];
  }
  return s;
}

}  // namespace

Result<BinFileReader> BinFileReader::open(const std::string& path, std::string_view magic,
                                          SectionName name) {
  auto file = InputFile::open(path);
  if (!file) return std::move(file).error();
  return open(std::move(*file), magic, name);
}

Result<BinFileReader> BinFileReader::open(InputFile file, std::string_view magic,
                                          SectionName name) {
  const std::string path = file.path();
  BinFileReader r(std::move(file), name);
  const std::uint64_t size = r.file_.size();
  if (size < kFileHeaderBytes)
    return Error{Errc::invalid_argument, path + ": truncated: the file has " +
                                             std::to_string(size) + " bytes, its header needs " +
                                             std::to_string(kFileHeaderBytes) +
                                             " (magic, version, section count)"};
  unsigned char header[kFileHeaderBytes];
  if (Error e = r.file_.read(0, header, sizeof header)) return e;
  if (std::string_view(reinterpret_cast<const char*>(header), 4) != magic)
    return Error{Errc::invalid_argument, path + ": not a ." + std::string(magic) +
                                             " file: it starts with " + describe_magic(header) +
                                             ", not '" + std::string(magic) + "'"};
  r.version_ = load_u32_le(header + 4);
  const std::uint32_t count = load_u32_le(header + 8);

  std::uint64_t pos = kFileHeaderBytes;
  for (std::uint32_t k = 0; k < count; ++k) {
    if (size - pos < kSectionHeaderBytes)
      return Error{Errc::invalid_argument,
                   path + ": truncated at byte " + std::to_string(size) +
                       ": the header of section " + std::to_string(k + 1) + " of " +
                       std::to_string(count) + " (u32 id, u64 size) needs bytes " +
                       std::to_string(pos) + ".." + std::to_string(pos + kSectionHeaderBytes - 1)};
    unsigned char sh[kSectionHeaderBytes];
    if (Error e = r.file_.read(pos, sh, sizeof sh)) return e;
    Section s{load_u32_le(sh), pos + kSectionHeaderBytes, load_u64_le(sh + 4)};
    if (s.size > size - s.offset)
      return Error{Errc::invalid_argument,
                   path + ": " + section_label(s.id, name) + " is truncated: it declares " +
                       std::to_string(s.size) + " bytes from byte " + std::to_string(s.offset) +
                       ", the file ends at byte " + std::to_string(size) + " (" +
                       std::to_string(s.size - (size - s.offset)) + " bytes missing)"};
    if (const Section* d = r.find(s.id))
      return Error{Errc::invalid_argument,
                   path + ": " + section_label(s.id, name) + " appears twice (data at bytes " +
                       std::to_string(d->offset) + " and " + std::to_string(s.offset) + ")"};
    r.sections_.push_back(s);
    pos = s.offset + s.size;
  }
  if (pos != size)
    return Error{Errc::invalid_argument,
                 path + ": " + std::to_string(size - pos) + " bytes after the last of its " +
                     std::to_string(count) + " sections, from byte " + std::to_string(pos)};
  return r;
}

const Section* BinFileReader::find(std::uint32_t id) const noexcept {
  const auto it = std::find_if(sections_.begin(), sections_.end(),
                               [id](const Section& s) { return s.id == id; });
  return it == sections_.end() ? nullptr : &*it;
}

Result<const Section*> BinFileReader::require(std::uint32_t id) const {
  if (const Section* s = find(id)) return s;
  return Error{Errc::invalid_argument, where(id) + " is missing"};
}

std::string BinFileReader::where(std::uint32_t id) const {
  return path() + ": " + section_label(id, name_);
}

Error BinFileReader::error(std::uint32_t id, const std::string& what) const {
  return Error{Errc::invalid_argument, where(id) + ": " + what};
}

Error BinFileReader::read(const Section& s, std::uint64_t at, void* dst, std::size_t bytes) const {
  return file_.read(s.offset + at, dst, bytes, section_label(s.id, name_));
}

Result<BinFileWriter> BinFileWriter::create(const std::string& path, std::string_view magic,
                                            std::uint32_t version, std::uint32_t sections) {
  auto file = OutputFile::create(path);
  if (!file) return std::move(file).error();
  BinFileWriter w(std::move(*file), sections);
  if (Error e = w.file_.write(magic.data(), magic.size())) return e;
  if (Error e = w.file_.write_u32_le(version)) return e;
  if (Error e = w.file_.write_u32_le(sections)) return e;
  return w;
}

Error BinFileWriter::section_complete() const {
  if (in_section_ && file_.written() != section_end_)
    return Error{Errc::invalid_argument,
                 file_.path() + ": a section got " + std::to_string(file_.written()) +
                     " bytes where its header announced " + std::to_string(section_end_)};
  return {};
}

Error BinFileWriter::begin_section(std::uint32_t id, std::uint64_t size) {
  if (Error e = section_complete()) return e;
  if (sections_left_ == 0)
    return Error{Errc::invalid_argument,
                 file_.path() + ": more sections than the header announced"};
  --sections_left_;
  if (Error e = file_.write_u32_le(id)) return e;
  if (Error e = file_.write_u64_le(size)) return e;
  in_section_ = true;
  section_end_ = file_.written() + size;
  return {};
}

Error BinFileWriter::write(const void* data, std::size_t bytes) {
  if (!in_section_ || file_.written() + bytes > section_end_)
    return Error{Errc::invalid_argument,
                 file_.path() + ": data written outside the section announced"};
  return file_.write(data, bytes);
}

Error BinFileWriter::write_u32(std::uint32_t v) {
  unsigned char b[4];
  store_u32_le(v, b);
  return write(b, 4);
}

Error BinFileWriter::finish() {
  if (Error e = section_complete()) return e;
  if (sections_left_ != 0)
    return Error{Errc::invalid_argument, file_.path() + ": " + std::to_string(sections_left_) +
                                             " sections announced but not written"};
  return file_.close();
}

}  // namespace stoker::engine::groth16::detail
