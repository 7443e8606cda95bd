#include "engine/workloads/ntt_msm_h_workload.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "kernels/fixed_base.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/msm.hpp"

namespace stoker::engine::workloads {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;

G1Affine NttMsmHRun::point(std::size_t p) const {
  return kernels::to_affine(sums[p]);
}

bool NttMsmHRun::all_verified() const {
  return !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const NttMsmHCheck& c) {
    return c.checked && c.ok && (!c.h_checked || c.h_ok);
  });
}

std::span<const Fr> NttMsmHWeights::get(const Fr& tau, unsigned log_n, unsigned threads) {
  std::call_once(once_, [&] {
    const std::size_t n = std::size_t{1} << log_n;
    data_.reset(static_cast<Fr*>(allocate_pages(n * sizeof(Fr))));
    if (!data_) return;
    hpoly_weights(tau, log_n, std::span(data_.get(), n), threads);
    size_ = n;
    computations_.fetch_add(1);
  });
  return {data_.get(), size_};
}

std::error_code ntt_msm_h_plan(int ordinal, unsigned log_n, std::size_t srs_bytes,
                               std::size_t device_budget_bytes, kernels::gpu::MsmPlan& plan) {
  const std::size_t n = std::size_t{1} << log_n;
  if (auto ec = kernels::gpu::plan_msm(n - 1, ordinal, plan)) return ec;
  std::size_t budget = device_budget_bytes;
  if (budget == 0) {
    std::size_t free = 0, total = 0;
    int previous = 0;
    cudaGetDevice(&previous);
    const bool ok =
        cudaSetDevice(ordinal) == cudaSuccess && cudaMemGetInfo(&free, &total) == cudaSuccess;
    cudaSetDevice(previous);
    if (!ok) return make_error_code(Errc::no_device);
    budget = Config{}.device_budget(total);
  }
  const std::size_t inputs = 3 * n * sizeof(Fr) + sizeof(G1Xyzz) + 1024;
  const auto two_fit = [&](const kernels::gpu::MsmPlan& p) {
    return srs_bytes + 2 * (inputs + p.scratch_bytes) <= budget;
  };
  for (unsigned c = plan.window_bits; c > 8 && !two_fit(plan); --c) {
    kernels::gpu::MsmPlan smaller;
    if (kernels::gpu::plan_msm(n - 1, ordinal, smaller, c - 1)) break;
    plan = smaller;
  }
  return {};
}

std::size_t ntt_msm_h_scratch_bytes(const devices::DeviceSet& set, unsigned log_n,
                                    std::size_t srs_bytes, std::size_t device_budget_bytes) {
  const std::size_t n = std::size_t{1} << log_n;
  if (set.backend() != devices::Backend::cuda) return n * sizeof(Fr);
  std::size_t most = 0;
  for (std::size_t d = 0; d < set.size(); ++d) {
    kernels::gpu::MsmPlan plan;
    if (ntt_msm_h_plan(set[d].info().ordinal, log_n, srs_bytes, device_budget_bytes, plan))
      return 0;
    most = std::max(most, plan.scratch_bytes);
  }
  return most;
}

std::error_code ntt_msm_h_prepare(const devices::DeviceSet& set, unsigned log_n) {
  if (auto ec = hpoly_prepare(set, log_n)) return ec;
  if (set.backend() != devices::Backend::cuda) return {};
  // One small MSM of zeros on each GPU loads its kernels, so that the first
  // partition's launch does not wait for that behind the work queued ahead.
  devices::KeepCurrentDevice keep(true);
  constexpr std::size_t kPoints = 64;
  for (std::size_t d = 0; d < set.size(); ++d) {
    auto& dev = set[d];
    if (auto ec = dev.make_current()) return ec;
    kernels::gpu::MsmPlan plan;
    if (auto ec = kernels::gpu::plan_msm(kPoints, dev.info().ordinal, plan)) return ec;
    const std::size_t points_bytes = kPoints * sizeof(G1Affine),
                      scalars_bytes = kPoints * sizeof(Fr);
    auto mem =
        dev.allocate(points_bytes + scalars_bytes + sizeof(G1Xyzz) + plan.scratch_bytes + 1024);
    if (!mem) return mem.error().code;
    auto* base = mem->as<std::byte>();
    auto stream = dev.create_stream();
    if (!stream) return stream.error().code;
    const auto s = static_cast<cudaStream_t>(stream->native());
    if (cudaMemsetAsync(base, 0, points_bytes + scalars_bytes, s) != cudaSuccess)
      return make_error_code(Errc::kernel_failed);
    auto* result = reinterpret_cast<G1Xyzz*>(base + points_bytes + scalars_bytes);
    auto* scratch = base + ((points_bytes + scalars_bytes + sizeof(G1Xyzz) + 255) / 256 * 256);
    if (auto ec = kernels::gpu::msm(plan, result, reinterpret_cast<const G1Affine*>(base),
                                    reinterpret_cast<const Fr*>(base + points_bytes), scratch,
                                    plan.scratch_bytes, s))
      return ec;
    if (auto ec = stream->synchronize()) return ec;
  }
  return {};
}

namespace {

// The check from the sums on: the expected point, and h's own check where h
// is given (its h(tau) in s.hx).
std::error_code check_from_sums(const HpolySums& s, unsigned log_n, unsigned srs_log_n,
                                const ToySrsSecret& secret, const G1Affine& point,
                                std::span<const Fr> h, NttMsmHCheck* check) {
  const std::uint64_t n = std::uint64_t{1} << log_n;
  const Fr& tau = secret.tau;
  const Fr z = tau.pow(n) - Fr::one();
  const Fr z_over_n = z * Fr::from_u64(n).inverse();
  const Fr ab_c = (z_over_n * s.a) * (z_over_n * s.b) - z_over_n * s.c;  // h(tau) Z(tau)
  const Fr z_srs = tau.pow(std::uint64_t{1} << srs_log_n) - Fr::one();
  const Fr scalar = ab_c * z.inverse() * z_srs * secret.delta.inverse();
  NttMsmHCheck r;
  r.checked = true;
  kernels::cpu::fixed_base_mul(&r.expected, &scalar, 1, 1);
  r.ok = r.expected.x == point.x && r.expected.y == point.y;
  if (!h.empty()) {
    r.h_checked = true;
    r.h_ok = s.hx * z == ab_c && h[n - 1].is_zero();
  }
  if (check) *check = r;
  return r.ok && (!r.h_checked || r.h_ok) ? std::error_code{}
                                          : make_error_code(Errc::verification_failed);
}

bool bad_sizes(unsigned log_n, unsigned srs_log_n) {
  return log_n < kNttMsmHMinLogN || log_n > kNttMsmHMaxLogN || srs_log_n < log_n || srs_log_n > 40;
}

}  // namespace

std::error_code ntt_msm_h_verify(std::uint64_t seed, std::size_t partition, unsigned log_n,
                                 unsigned srs_log_n, const ToySrsSecret& secret,
                                 const G1Affine& point, std::span<const Fr> h, unsigned threads,
                                 NttMsmHCheck* check, std::span<const Fr> tau_weights) {
  const std::uint64_t n = std::uint64_t{1} << log_n;
  if (bad_sizes(log_n, srs_log_n) || (!h.empty() && h.size() != n))
    return make_error_code(Errc::invalid_argument);
  const Fr& tau = secret.tau;
  // Another point's weights would make every check fail for no fault of
  // the GPU's: their first, 1 / (tau - 1), says whose they are.
  if (!tau_weights.empty() &&
      (tau_weights.size() != n || (tau - Fr::one()) * tau_weights[0] != Fr::one()))
    return make_error_code(Errc::invalid_argument);
  const HpolySums s = tau_weights.empty()
                          ? hpoly_sums(seed, partition, log_n, h, tau, threads)
                          : hpoly_sums(seed, partition, log_n, h, tau, tau_weights, threads);
  return check_from_sums(s, log_n, srs_log_n, secret, point, h, check);
}

std::error_code ntt_msm_h_verify_sums(const HpolySums& sums, unsigned log_n, unsigned srs_log_n,
                                      const ToySrsSecret& secret, const G1Affine& point,
                                      NttMsmHCheck* check) {
  if (bad_sizes(log_n, srs_log_n)) return make_error_code(Errc::invalid_argument);
  return check_from_sums(sums, log_n, srs_log_n, secret, point, {}, check);
}

namespace {

Result<Job> build_ntt_msm_h_job(const NttMsmHOptions& o, std::shared_ptr<NttMsmHRun>& run) {
  const std::string who = o.name + ": ";
  if (o.partitions == 0) return Error{Errc::invalid_argument, who + "needs at least one partition"};
  if (o.log_n < kNttMsmHMinLogN || o.log_n > kNttMsmHMaxLogN)
    return Error{Errc::invalid_argument, who + "log_n must be " + std::to_string(kNttMsmHMinLogN) +
                                             ".." + std::to_string(kNttMsmHMaxLogN) + ", not " +
                                             std::to_string(o.log_n)};
  const unsigned log_n = o.log_n;
  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  if (!o.srs) return Error{Errc::invalid_argument, who + "needs an SRS (Engine::load_srs)"};
  if (o.srs.points() < n - 1)
    return Error{Errc::invalid_argument, who + "log_n " + std::to_string(log_n) + " needs " +
                                             std::to_string(n - 1) + " SRS points; SRS '" +
                                             o.srs.label() + "' has " +
                                             std::to_string(o.srs.points())};
  if (o.devices == nullptr)
    return Error{Errc::invalid_argument, who + "needs the engine's devices (options.devices)"};
  if (o.verify && !o.secret)
    return Error{Errc::invalid_argument,
                 who + "verification needs the toy SRS's secret (a toy SRS and its seed)"};
  // A toy SRS holds 2^k - 1 points; its k goes into the expected point.
  const std::size_t srs_n = o.srs.points() + 1;
  if (o.verify && (srs_n & (srs_n - 1)) != 0)
    return Error{Errc::invalid_argument,
                 who + "verification needs a toy SRS (2^k - 1 points); SRS '" + o.srs.label() +
                     "' has " + std::to_string(o.srs.points())};
  const auto srs_log_n = static_cast<unsigned>(std::countr_zero(srs_n));

  Partition shape;
  for (int k = 0; k < 3; ++k) shape.inputs.push_back(Input::produced(bytes));
  shape.outputs.push_back(Output{nullptr, sizeof(G1Xyzz), false});
  if (o.keep_h) shape.outputs.push_back(Output{nullptr, bytes, false});
  BuildNeeds needs;
  needs.workload = "ntt_msm_h";
  needs.partitions = o.partitions;
  needs.caller_bytes =
      sizeof(G1Xyzz) + sizeof(NttMsmHCheck) + kPartitionBookkeepingBytes + (o.keep_h ? bytes : 0);
  needs.job_bytes = o.verify ? bytes : 0;  // the checks' shared weights
  needs.pinned_bytes = Engine::pinned_bytes(shape);
  if (auto e = check_build(needs, o.limits)) return e;

  run = std::make_shared<NttMsmHRun>();
  run->options = o;
  run->n = n;
  run->sums.assign(o.partitions, G1Xyzz::infinity());
  run->checks.assign(o.partitions, NttMsmHCheck{});
  if (o.keep_h) {
    run->h.reserve(o.partitions);
    for (std::size_t p = 0; p < o.partitions; ++p) {
      auto* mem = static_cast<Fr*>(allocate_pages(bytes));
      if (mem == nullptr)
        return Error{Errc::out_of_host_memory, who + "no memory for h of partition " +
                                                   std::to_string(p) + " (" +
                                                   std::to_string(bytes) + " bytes)"};
      std::memset(mem, 0, bytes);  // first-touch faults here, not in the job
      run->h.emplace_back(mem);
    }
  }
  // One MSM plan per engine device (the window may differ where memory does).
  auto plans = std::make_shared<std::vector<kernels::gpu::MsmPlan>>();
  std::size_t scratch = n * sizeof(Fr);  // h, on the host backend
  if (o.devices->backend() == devices::Backend::cuda) {
    scratch = 0;
    for (std::size_t d = 0; d < o.devices->size(); ++d) {
      kernels::gpu::MsmPlan plan;
      if (auto ec = ntt_msm_h_plan((*o.devices)[d].info().ordinal, log_n, o.srs.bytes(),
                                   o.device_budget_bytes, plan))
        return Error{ec, who + "planning the MSM of 2^" + std::to_string(log_n) + " on device " +
                             std::to_string(d) + ": " + ec.message()};
      scratch = std::max(scratch, plan.scratch_bytes);
      plans->push_back(plan);
    }
  }

  // The sums' weights now, so that producers can take their shares' sums
  // (see the header); partitions before summed_from, the first on each
  // device, are summed by their checks instead.
  std::size_t summed_from = o.partitions;
  if (o.verify && !o.keep_h && !run->weights.get(o.secret->tau, log_n, o.verify_threads).empty()) {
    run->produced_sums = std::make_unique<NttMsmHProducedSums[]>(o.partitions);
    summed_from = std::min(o.partitions, o.devices->size());
  }

  Job job;
  job.name = o.name;
  job.priority = o.priority;
  job.srs = o.srs;
  job.kernel_steps = {"hpoly", "msm"};
  const bool keep_h = o.keep_h;
  const unsigned cpu_threads = o.cpu_threads;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    Partition part;
    for (int k = 0; k < 3; ++k) part.inputs.push_back(Input::produced(bytes));
    part.split_producer = hpoly_producer(o.seed, p, log_n);
    if (p >= summed_from)
      part.split_producer = [fill = std::move(part.split_producer), run, seed = o.seed, p, log_n, n,
                             tau = o.secret->tau](std::span<const std::span<std::byte>> produced,
                                                  ProducerTask task) -> std::error_code {
        if (auto ec = fill(produced, task)) return ec;
        const auto [begin, end] = task.range(n, kHpolyShareAlign / sizeof(Fr));
        const auto weights = run->weights.get(tau, log_n, 0);  // computed by the builder
        run->produced_sums[p].add(hpoly_sums_range(seed, p, log_n, tau, weights, begin, end),
                                  end - begin);
        return {};
      };
    part.share_align = kHpolyShareAlign;
    part.outputs.push_back(
        Output::to(std::span(reinterpret_cast<std::byte*>(&run->sums[p]), sizeof(G1Xyzz))));
    if (keep_h)
      part.outputs.push_back(
          Output::to(std::span(reinterpret_cast<std::byte*>(run->h[p].get()), bytes)));
    part.scratch_bytes = scratch;
    part.work.gpu = [log_n, keep_h, plans, srs = o.srs](const KernelContext& c) -> std::error_code {
      const G1Affine* points = srs.points_on(c.device);
      if (points == nullptr) return make_error_code(Errc::invalid_argument);
      const auto stream = static_cast<cudaStream_t>(c.stream.native());
      // h overwrites a unless it goes back to the caller.
      Fr* h = reinterpret_cast<Fr*>(keep_h ? c.outputs[1] : c.inputs[0]);
      if (auto ec = kernels::gpu::hpoly(h, reinterpret_cast<Fr*>(c.inputs[0]),
                                        reinterpret_cast<Fr*>(c.inputs[1]),
                                        reinterpret_cast<Fr*>(c.inputs[2]), log_n, stream))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      const auto d = static_cast<std::size_t>(c.device.index());
      if (d >= plans->size()) return make_error_code(Errc::invalid_argument);
      return kernels::gpu::msm((*plans)[d], reinterpret_cast<G1Xyzz*>(c.outputs[0]), points, h,
                               c.scratch, c.scratch_bytes, stream);
    };
    part.work.cpu = [log_n, n, keep_h, cpu_threads,
                     srs = o.srs](const KernelContext& c) -> std::error_code {
      const G1Affine* points = srs.points_on(c.device);
      if (points == nullptr) return make_error_code(Errc::invalid_argument);
      Fr* h = reinterpret_cast<Fr*>(keep_h ? c.outputs[1] : c.scratch);
      if (h == nullptr) return make_error_code(Errc::invalid_argument);
      kernels::cpu::hpoly(h, reinterpret_cast<const Fr*>(c.inputs[0]),
                          reinterpret_cast<const Fr*>(c.inputs[1]),
                          reinterpret_cast<const Fr*>(c.inputs[2]), log_n, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      const G1Xyzz sum = kernels::cpu::msm(points, h, n - 1, cpu_threads);
      std::memcpy(c.outputs[0], &sum, sizeof(sum));
      return {};
    };
    part.label = o.name + "#" + std::to_string(p);
    job.partitions.push_back(std::move(part));
  }
  const std::size_t outputs = keep_h ? 2 : 1;
  job.validate = [bytes, log_n, outputs](const Partition& part, std::size_t) -> Error {
    if (part.inputs.size() != 3 || part.outputs.size() != outputs)
      return {Errc::invalid_argument, "ntt_msm_h needs inputs a, b, c and " +
                                          std::to_string(outputs) + " outputs, not " +
                                          std::to_string(part.inputs.size()) + " inputs and " +
                                          std::to_string(part.outputs.size()) + " outputs"};
    for (std::size_t k = 0; k < 3; ++k)
      if (part.inputs[k].bytes != bytes)
        return {Errc::invalid_argument, "ntt_msm_h input " + std::string(1, "abc"[k]) + " has " +
                                            std::to_string(part.inputs[k].bytes) +
                                            " bytes; log_n " + std::to_string(log_n) + " needs " +
                                            std::to_string(bytes)};
    if (part.outputs[0].bytes != sizeof(G1Xyzz) || (outputs == 2 && part.outputs[1].bytes != bytes))
      return {Errc::invalid_argument, "ntt_msm_h outputs have the wrong sizes"};
    return {};
  };
  if (o.verify)
    job.verify = [run_ptr = run, seed = o.seed, log_n, srs_log_n, secret = *o.secret,
                  threads = o.verify_threads, n](const Partition&, std::size_t p) {
      if (run_ptr->produced_sums) {
        // Taken out under the lock; the check (a multiplication of the
        // generator) runs without it.
        auto& produced = run_ptr->produced_sums[p];
        HpolySums sums{};
        bool complete = false;
        {
          std::lock_guard lock(produced.mutex);
          sums = produced.sums;
          complete = produced.elements == n;
        }
        if (complete) {
          auto& check = run_ptr->checks[p];
          const auto ec =
              ntt_msm_h_verify_sums(sums, log_n, srs_log_n, secret, run_ptr->point(p), &check);
          check.sums_from_producer = true;
          return ec;
        }
      }
      const auto weights = run_ptr->weights.get(secret.tau, log_n, threads);
      return ntt_msm_h_verify(seed, p, log_n, srs_log_n, secret, run_ptr->point(p),
                              run_ptr->h_of(p), threads, &run_ptr->checks[p], weights);
    };
  return job;
}

}  // namespace

Result<Job> make_ntt_msm_h_job(const NttMsmHOptions& o, std::shared_ptr<NttMsmHRun>& run) {
  run.reset();
  auto job = guarded_build<Job>("ntt_msm_h", [&] { return build_ntt_msm_h_job(o, run); });
  if (!job) run.reset();
  return job;
}

}  // namespace stoker::engine::workloads
