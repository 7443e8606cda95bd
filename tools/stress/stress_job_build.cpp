// build_job (stress_jobs.hpp): a spec made into an engine::Job, the memory
// its partitions read and write, and the fault the spec injects.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/host_memory_limit.hpp"
#include "engine/engine.hpp"
#include "tools/stress/stress_blend.hpp"
#include "tools/stress/stress_jobs.hpp"

namespace stoker::tools::stress {

using engine::Input;
using engine::InputKind;
using engine::KernelContext;
using engine::Output;

namespace {

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace

std::size_t pinned_demand(const engine::Job& job) {
  std::size_t n = 0;
  for (const auto& p : job.partitions) n += engine::Engine::pinned_bytes(p);
  return n;
}

void JobBuffers::Aligned::operator()(std::uint32_t* p) const noexcept {
  std::free(p);
}

Result<engine::Job> build_job(const JobSpec& s, devices::Backend backend, alloc::PinnedPool& pool,
                              JobBuffers& buf, const NttSrs* ntt) {
  engine::Job job;
  if (s.workload == Workload::ntt_msm_h) {
    if (ntt == nullptr || !ntt->srs || ntt->devices == nullptr)
      return Error{Errc::invalid_argument,
                   "building " + s.name() + ": ntt_msm_h needs the resident toy SRS"};
    if (s.ntt_log_n > ntt->log_n)
      return Error{Errc::invalid_argument,
                   "building " + s.name() + ": ntt_msm_h 2^" + std::to_string(s.ntt_log_n) +
                       " is larger than the toy SRS's 2^" + std::to_string(ntt->log_n)};
    engine::workloads::NttMsmHOptions o;
    o.partitions = s.partitions;
    o.log_n = s.ntt_log_n;
    o.seed = s.id;
    o.srs = ntt->srs;
    o.devices = ntt->devices;
    o.verify = true;
    o.secret = engine::workloads::toy_srs_secret(s.fault == Fault::verify_error ? kStressSrsSeed + 1
                                                                                : kStressSrsSeed);
    // One thread each: the emulated devices and the workers already run
    // partitions side by side, and the CPU cost stays what the sizes say.
    o.cpu_threads = 1;
    o.verify_threads = 1;
    o.name = s.name();
    auto j = engine::workloads::make_ntt_msm_h_job(o, buf.ntt);
    if (!j) return Error{j.error().code, "building " + s.name() + ": " + j.error().what()};
    job = std::move(*j);
  } else if (s.workload == Workload::synthetic) {
    engine::workloads::SyntheticOptions o;
    o.partitions = s.partitions;
    o.input_bytes = s.synthetic_bytes;
    o.rounds = s.mix_rounds;
    o.pageable = s.synthetic_pageable;
    o.seed = s.id;
    o.name = s.name();
    auto j = engine::workloads::make_synthetic_job(o, buf.synthetic);
    if (!j) return Error{j.error().code, "building " + s.name() + ": " + j.error().what()};
    job = std::move(*j);
    if (!s.synthetic_streamed)
      for (auto& part : job.partitions) part.share_align = 0;
  } else {
    job.name = s.name();
    const std::uint32_t salt = static_cast<std::uint32_t>(s.id);
    const int rounds = s.mix_rounds;
    // Reserved up front: the engine keeps pointers into these vectors.
    std::size_t n_pageable = 0, n_registered = 0, n_out = 0, n_pinned_out = 0;
    for (const auto& ps : s.parts) {
      for (auto k : ps.inputs) {
        n_pageable += k == InputKind::pageable;
        n_registered += k == InputKind::registered;
      }
      (ps.pinned_output ? n_pinned_out : n_out) += 1;
    }
    buf.pageable.reserve(n_pageable);
    buf.registered.reserve(n_registered);
    buf.outputs.reserve(n_out);
    buf.pinned_outputs.reserve(n_pinned_out);
    for (std::size_t p = 0; p < s.parts.size(); ++p) {
      const auto& ps = s.parts[p];
      const std::size_t n = ps.words, bytes = n * 4;
      engine::Partition part;
      std::vector<std::size_t> produced_inputs;
      for (std::size_t k = 0; k < ps.inputs.size(); ++k) {
        auto fill = [&](std::span<std::uint32_t> w) {
          for (std::size_t i = 0; i < w.size(); ++i) w[i] = blend_input_word(s.id, p, k, i);
        };
        switch (ps.inputs[k]) {
          case InputKind::produced:
            part.inputs.push_back(Input::produced(bytes));
            produced_inputs.push_back(k);
            break;
          case InputKind::pageable: {
            auto& v = buf.pageable.emplace_back(n);
            fill(v);
            part.inputs.push_back(Input::pageable(std::as_bytes(std::span(v))));
            break;
          }
          case InputKind::registered: {
            // Whole pages of its own: registrations of one page cannot overlap.
            const std::size_t alloc_bytes = round_up(bytes, 4096);
            auto* raw = static_cast<std::uint32_t*>(std::aligned_alloc(4096, alloc_bytes));
            if (!raw)
              return common::host_memory_refused(s.name() + ": a registered input", alloc_bytes);
            auto& mem = buf.registered.emplace_back(raw);
            fill(std::span(mem.get(), n));
            auto reg = devices::register_host(backend, mem.get(), alloc_bytes);
            if (!reg)
              return Error{reg.error().code,
                           s.name() + ": registering an input: " + reg.error().what()};
            buf.registrations.push_back(std::move(*reg));
            part.inputs.push_back(
                Input::registered(std::as_bytes(std::span<const std::uint32_t>(mem.get(), n))));
            break;
          }
          case InputKind::pinned: {
            alloc::PinnedVec<std::uint32_t> v(pool);
            if (auto ec = v.try_resize_for_overwrite(n))
              return Error{ec, s.name() + ": the stress tool's own pinned pool could not give " +
                                   std::to_string(bytes) + " bytes: " + ec.message()};
            fill(v.span());
            part.inputs.push_back(Input::pinned(std::move(v)));
            break;
          }
        }
      }
      if (!produced_inputs.empty()) {
        const Fault fault = p == s.fault_partition ? s.fault : Fault::none;
        part.producer = [id = s.id, p, produced_inputs,
                         fault](std::span<const std::span<std::byte>> spans) -> std::error_code {
          if (fault == Fault::producer_error) return make_error_code(Errc::io_error);
          if (fault == Fault::producer_throws) throw std::runtime_error("stress: producer threw");
          for (std::size_t i = 0; i < spans.size(); ++i) {
            auto* w = reinterpret_cast<std::uint32_t*>(spans[i].data());
            for (std::size_t j = 0; j < spans[i].size() / 4; ++j)
              w[j] = blend_input_word(id, p, produced_inputs[i], j);
          }
          return {};
        };
      }
      std::span<std::uint32_t> out;
      if (ps.pinned_output) {
        alloc::PinnedVec<std::uint32_t> v(pool);
        if (auto ec = v.try_resize_for_overwrite(n))
          return Error{ec, s.name() + ": the stress tool's own pinned pool could not give " +
                               std::to_string(bytes) + " bytes for an output: " + ec.message()};
        std::fill(v.begin(), v.end(), 0u);
        out = v.span();
        buf.pinned_outputs.push_back(std::move(v));
        part.outputs.push_back(Output::to(std::as_writable_bytes(out), /*is_pinned=*/true));
      } else {
        out = buf.outputs.emplace_back(n);
        part.outputs.push_back(Output::to(std::as_writable_bytes(out)));
      }
      buf.out_views.push_back(out);
      part.scratch_bytes = ps.scratch_bytes;
      const bool two = ps.inputs.size() > 1;
      part.work.cpu = [salt, rounds, two](const KernelContext& c) {
        if (c.scratch) std::memset(c.scratch, 0xab, c.scratch_bytes);
        blend_cpu(reinterpret_cast<const std::uint32_t*>(c.inputs[0]),
                  two ? reinterpret_cast<const std::uint32_t*>(c.inputs[1]) : nullptr,
                  reinterpret_cast<std::uint32_t*>(c.outputs[0]), c.output_bytes[0] / 4, salt,
                  rounds);
        return std::error_code{};
      };
      part.work.gpu = [salt, rounds, two](const KernelContext& c) {
        return blend_gpu(reinterpret_cast<const std::uint32_t*>(c.inputs[0]),
                         two ? reinterpret_cast<const std::uint32_t*>(c.inputs[1]) : nullptr,
                         reinterpret_cast<std::uint32_t*>(c.outputs[0]), c.output_bytes[0] / 4,
                         salt, rounds, c.scratch, c.scratch_bytes, c.stream.native());
      };
      part.label = s.name() + "#" + std::to_string(p);
      job.partitions.push_back(std::move(part));
    }
    // The workload's own check before any device work: inputs and the
    // output agree in size.
    job.validate = [](const engine::Partition& p, std::size_t) -> Error {
      for (std::size_t k = 1; k < p.inputs.size(); ++k)
        if (p.inputs[k].bytes != p.inputs[0].bytes)
          return {Errc::invalid_argument,
                  "blend inputs differ in size: input " + std::to_string(k) + " has " +
                      std::to_string(p.inputs[k].bytes) + " bytes, input 0 has " +
                      std::to_string(p.inputs[0].bytes)};
      if (p.outputs.size() != 1 || p.outputs[0].bytes != p.inputs[0].bytes)
        return {Errc::invalid_argument, "blend output must be as large as its inputs"};
      return {};
    };
  }

  job.name = s.name();
  job.priority = s.priority;
  if (!s.affinity.empty()) job.devices = s.affinity;
  auto& fp = job.partitions[s.fault_partition];
  switch (s.fault) {
    case Fault::none:
    case Fault::bad_device:
      break;
    case Fault::empty_input:
      fp.inputs[0].bytes = 0;
      break;
    case Fault::mismatched_sizes:
      fp.inputs[1].bytes -= 16;
      break;
    case Fault::too_big_for_device:
      fp.scratch_bytes = std::size_t{1} << 50;  // beyond any device: refused, never allocated
      break;
    case Fault::too_big_for_host:
      // Checked before allocation: the engine must refuse it, not try it.
      fp.inputs.push_back(Input::produced(std::size_t{1} << 50));
      if (!fp.producer && !fp.split_producer)
        fp.producer = [](std::span<const std::span<std::byte>>) { return std::error_code{}; };
      break;
    case Fault::kernel_error: {
      auto fail = [](const KernelContext&) { return make_error_code(Errc::kernel_failed); };
      // The GPU version reports the error without launching: a kernel that
      // traps would poison the whole CUDA context of the process.
      fp.work.cpu = fail;
      fp.work.gpu = fail;
      break;
    }
    case Fault::producer_error:
    case Fault::producer_throws: {
      const bool throws = s.fault == Fault::producer_throws;
      const auto fail = [throws]() -> std::error_code {
        if (throws) throw std::runtime_error("stress: producer threw");
        return make_error_code(Errc::io_error);
      };
      if ((s.workload == Workload::synthetic && s.synthetic_streamed) ||
          s.workload == Workload::ntt_msm_h) {
        // One share fails, maybe while the partition waits on a device for it.
        fp.split_producer = [inner = fp.split_producer, fail](
                                std::span<const std::span<std::byte>> in, engine::ProducerTask t) {
          return t.index == t.count / 2 ? fail() : inner(in, t);
        };
      } else if (s.workload == Workload::synthetic) {
        fp.split_producer = nullptr;  // the synthetic workload's own, replaced
        fp.share_align = 0;           // a plain producer is never streamed
        fp.producer = [fail](std::span<const std::span<std::byte>>) { return fail(); };
      }
      break;
    }
    case Fault::verify_error:
    case Fault::verify_throws: {
      // ntt_msm_h fails its own check: the job verifies with another
      // SRS's secret (above).
      if (s.fault == Fault::verify_error && s.workload == Workload::ntt_msm_h) break;
      auto inner = job.verify;
      job.verify = [inner, bad = s.fault_partition, throws = s.fault == Fault::verify_throws](
                       const engine::Partition& p, std::size_t i) -> std::error_code {
        if (i == bad && throws) throw std::runtime_error("stress: check threw");
        if (i == bad) return make_error_code(Errc::verification_failed);
        return inner ? inner(p, i) : std::error_code{};
      };
      break;
    }
  }
  return job;
}

}  // namespace stoker::tools::stress
