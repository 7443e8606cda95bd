#include <algorithm>
#include <string>

#include "common/bytes_str.hpp"
#include "engine/detail/device_layout.hpp"
#include "engine/detail/engine_core.hpp"
#include "engine/detail/guarded_call.hpp"
#include "engine/job.hpp"

namespace stoker::engine {

std::size_t Partition::input_bytes() const {
  std::size_t n = 0;
  for (const auto& i : inputs) n += i.bytes;
  return n;
}

std::size_t Partition::output_bytes() const {
  std::size_t n = 0;
  for (const auto& o : outputs) n += o.bytes;
  return n;
}

namespace detail {

using common::bytes_str;

Error EngineCore::validate(const Job& job) const {
  const std::string who = "job '" + job.name + "'";
  if (job.partitions.empty()) return {Errc::invalid_argument, who + " has no partitions"};
  if (job.devices) {
    if (job.devices->empty())
      return {Errc::invalid_argument, who + ": device affinity lists no device"};
    for (int d : *job.devices)
      if (d < 0 || static_cast<std::size_t>(d) >= set_.size())
        return {Errc::invalid_argument, who + ": device " + std::to_string(d) +
                                            " does not exist (this engine has " +
                                            std::to_string(set_.size()) + " devices)"};
  }
  const bool cuda = set_.backend() == devices::Backend::cuda;
  for (std::size_t i = 0; i < job.partitions.size(); ++i) {
    const auto& p = job.partitions[i];
    const std::string where = who + " partition " + std::to_string(i);
    if (cuda ? !p.work.gpu : !p.work.cpu)
      return {Errc::invalid_argument,
              where + " has no " + (cuda ? "GPU" : "CPU") + " version of its device work"};
    // Memory the caller declares page-locked must be: copied as such, it
    // would crawl through the driver's pageable path without a word.
    const auto page_locked = [&](const void* ptr, std::size_t bytes, const std::string& what,
                                 const char* declared, const char* remedy) -> Error {
      const auto locked = devices::is_page_locked(set_.backend(), ptr, bytes);
      if (!locked)
        return {locked.error().code,
                where + ": checking that " + what + " is page-locked: " + locked.error().what()};
      if (!*locked)
        return {Errc::invalid_argument, where + ": " + what + " is declared " + declared +
                                            " but its memory is not page-locked (" + remedy + ")"};
      return {};
    };
    bool any_produced = false;
    for (std::size_t k = 0; k < p.inputs.size(); ++k) {
      const auto& in = p.inputs[k];
      if (in.bytes == 0)
        return {Errc::invalid_argument,
                where + ": input " + std::to_string(k) + " is empty (0 bytes)"};
      if (in.kind == InputKind::produced)
        any_produced = true;
      else if (in.data == nullptr)
        return {Errc::invalid_argument, where + ": input " + std::to_string(k) + " has no data"};
      else if (in.kind == InputKind::registered)
        if (auto e = page_locked(in.data, in.bytes, "input " + std::to_string(k), "registered",
                                 "cudaHostRegister it, or pass it as Input::pageable"))
          return e;
    }
    const bool has_producer = p.producer || p.split_producer;
    if (p.producer && p.split_producer)
      return {Errc::invalid_argument, where + " has both a producer and a split producer"};
    if (any_produced && !has_producer)
      return {Errc::invalid_argument, where + " has produced inputs but no producer"};
    if (!any_produced && has_producer)
      return {Errc::invalid_argument, where + " has a producer but no produced input"};
    if (p.share_align != 0 && p.producer)
      return {Errc::invalid_argument,
              where + " sets share_align (" + std::to_string(p.share_align) +
                  ") with a plain producer: only a split producer's shares can be streamed"};
    if (p.producer_tasks > 4096)
      return {Errc::invalid_argument, where + " asks for " + std::to_string(p.producer_tasks) +
                                          " producer tasks (at most 4096)"};
    for (std::size_t k = 0; k < p.outputs.size(); ++k) {
      const auto& out = p.outputs[k];
      if (out.bytes == 0 || out.destination == nullptr)
        return {Errc::invalid_argument,
                where + ": output " + std::to_string(k) +
                    (out.bytes == 0 ? " is empty (0 bytes)" : " has no destination")};
      if (out.pinned)
        if (auto e =
                page_locked(out.destination, out.bytes, "output " + std::to_string(k), "pinned",
                            "cudaHostRegister it, or land it through a bounce block: "
                            "Output::to(span, false)"))
          return e;
    }
    const std::size_t host_bytes = Engine::pinned_bytes(p);
    if (host_bytes > staging_->budget().limit())
      return {Errc::invalid_argument, where + " needs " + bytes_str(host_bytes) +
                                          " of pinned host memory; the host budget is " +
                                          bytes_str(staging_->budget().limit())};
    std::size_t largest = 0;
    for (std::size_t d = 0; d < slots_->size(); ++d)
      if (allowed_on(job, d)) largest = std::max(largest, slots_->budget(d));
    // What the slot allocates: the inputs, outputs and scratch each at an
    // aligned offset.
    if (detail::DeviceLayout::of(p).bytes > largest)
      return {Errc::invalid_argument, where + " needs " + bytes_str(p.device_bytes()) +
                                          " of device memory; the largest device budget is " +
                                          bytes_str(largest)};
    if (job.validate) {
      Error e;
      std::string thrown;
      const auto ec = detail::guarded_call(thrown, [&] {
        e = job.validate(p, i);
        return std::error_code{};
      });
      if (ec) return {ec, where + ": its validate threw: " + thrown};
      if (e) return {e.code, where + ": " + e.what()};
    }
  }
  return {};
}

}  // namespace detail
}  // namespace stoker::engine
