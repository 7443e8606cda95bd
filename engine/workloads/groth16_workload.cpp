#include "engine/workloads/groth16_workload.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/proof_assembly.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/hpoly_odd_coset.hpp"
#include "kernels/msm.hpp"

namespace stoker::engine::workloads {

namespace g16 = groth16;
using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;
using kernels::G2Affine;
using kernels::G2Xyzz;

// B_G2's points ride in the resident Srs as two G1-sized slots each.
static_assert(sizeof(G2Affine) == 2 * sizeof(G1Affine) && alignof(G2Affine) <= alignof(G1Affine));

Result<Groth16Key> load_groth16_key(Engine& engine, std::shared_ptr<const g16::ProvingKey> key,
                                    std::string label) {
  if (!key) return Error{Errc::invalid_argument, "load_groth16_key: no key"};
  const g16::ProvingKey& k = *key;
  Groth16Key out;
  if (k.format == g16::KeyFormat::snarkjs) {
    auto m = g16::ConstraintMatrices::from(k);
    if (!m) return m.error();
    out.matrices = std::make_shared<const g16::ConstraintMatrices>(std::move(*m));
  }
  std::vector<G1Affine> all;
  all.reserve(k.h.size() + k.l.size() + k.a.size() + k.b_g1.size() + 2 * k.b_g2.size());
  all.resize(k.h.size());
  if (k.format == g16::KeyFormat::snarkjs) {
    if (k.h.size() != k.domain_size())
      return Error{Errc::invalid_argument, label + ": H holds " + std::to_string(k.h.size()) +
                                               " points for a domain of " +
                                               std::to_string(k.domain_size())};
    const kernels::SnarkjsToNttIndex to_ntt(k.log_n);
    for (std::size_t i = 0; i < k.h.size(); ++i) all[to_ntt(i)] = k.h[i];
  } else {
    std::copy(k.h.begin(), k.h.end(), all.begin());
  }
  out.l_at = all.size();
  all.insert(all.end(), k.l.begin(), k.l.end());
  out.a_at = all.size();
  all.insert(all.end(), k.a.begin(), k.a.end());
  out.b1_at = all.size();
  all.insert(all.end(), k.b_g1.begin(), k.b_g1.end());
  out.b2_at = all.size();
  all.resize(all.size() + 2 * k.b_g2.size());
  if (!k.b_g2.empty())
    std::memcpy(all.data() + out.b2_at, k.b_g2.data(), k.b_g2.size() * sizeof(G2Affine));
  SrsLoadOptions o;
  o.trust_points = true;  // the key's reader checked them
  o.label = std::move(label);
  auto points = engine.load_srs(std::span<const G1Affine>(all), o);
  if (!points) return points.error();
  out.points = std::move(*points);
  out.key = std::move(key);
  return out;
}

namespace {

// Where a partition's MSM scalars sit in its scalar input, and how many
// each query takes.
struct ScalarLayout {
  std::size_t a_at = 0, a_count = 0, b_at = 0, b_count = 0, l_at = 0, l_count = 0, total = 0;
};

// A partition's proof inputs on the host: the witness, or a bellman
// witness with its query scalars gathered (A's, then B's, then the aux).
struct ProofInputs {
  std::shared_ptr<const std::vector<Fr>> witness;
  std::shared_ptr<const g16::BellmanWitness> bellman;
  std::vector<Fr> gathered;
  std::span<const Fr> scalars() const {
    return witness ? std::span<const Fr>(*witness) : std::span<const Fr>(gathered);
  }
  std::span<const Fr> public_inputs(std::size_t num_public) const {
    return witness ? std::span<const Fr>(*witness).subspan(1, num_public)
                   : std::span<const Fr>(bellman->inputs).subspan(1);
  }
};

// One MSM plan per device for each of the five queries.
struct Plans {
  std::vector<kernels::gpu::MsmPlan> h, l, a, b, b2;
};

// G1 or G2 points; the sum lands in the output as XYZZ.
template <typename Affine>
std::error_code gpu_msm(const kernels::gpu::MsmPlan& plan, std::byte* out, const Affine* points,
                        const Fr* scalars, std::size_t count, const KernelContext& c,
                        cudaStream_t s) {
  using Xyzz = kernels::detail::XyzzOf<Affine>;
  auto* result = reinterpret_cast<Xyzz*>(out);
  if (count == 0)  // the sum of nothing: infinity is all zeros
    return make_cuda_error(cudaMemsetAsync(result, 0, sizeof(Xyzz), s));
  return kernels::gpu::msm(plan, result, points, scalars, c.scratch, c.scratch_bytes, s);
}

template <typename Affine>
void cpu_msm(std::byte* out, const Affine* points, const Fr* scalars, std::size_t count,
             unsigned threads) {
  using Xyzz = kernels::detail::XyzzOf<Affine>;
  const Xyzz sum =
      count == 0 ? Xyzz::infinity() : kernels::cpu::msm(points, scalars, count, threads);
  std::memcpy(out, &sum, sizeof(sum));
}

const G2Affine* g2_points(const G1Affine* resident, std::size_t b2_at) {
  return reinterpret_cast<const G2Affine*>(resident + b2_at);
}

Result<Job> build_groth16_job(const Groth16Options& o, std::shared_ptr<Groth16Run>& run) {
  const std::string who = o.name + ": ";
  const Groth16Key& gk = o.key;
  if (!gk.key || !gk.points)
    return Error{Errc::invalid_argument,
                 who + "needs a key loaded on the engine (load_groth16_key)"};
  if (o.devices == nullptr)
    return Error{Errc::invalid_argument, who + "needs the engine's devices (options.devices)"};
  const g16::ProvingKey& key = *gk.key;
  const bool snarkjs = key.format == g16::KeyFormat::snarkjs;
  const std::size_t partitions = snarkjs ? o.witnesses.size() : o.bellman_witnesses.size();
  if (partitions == 0)
    return Error{Errc::invalid_argument, who + (snarkjs ? "needs a witness per proof"
                                                        : "needs a bellman witness per proof")};
  if ((snarkjs && !o.bellman_witnesses.empty()) || (!snarkjs && !o.witnesses.empty()))
    return Error{Errc::invalid_argument,
                 who + "a snarkjs key takes witnesses, a bellman key bellman witnesses"};
  if (!o.randomness.empty() && o.randomness.size() != partitions)
    return Error{Errc::invalid_argument, who + std::to_string(o.randomness.size()) +
                                             " blinding pairs for " + std::to_string(partitions) +
                                             " proofs"};
  const unsigned log_n = key.log_n;
  const std::size_t n = key.domain_size(), bytes = n * sizeof(Fr);
  const std::size_t h_count = snarkjs ? n : n - 1;

  ScalarLayout lay;
  std::vector<ProofInputs> proof_inputs(partitions);
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::string which = "proof " + std::to_string(p) + ": ";
    if (snarkjs) {
      const auto& w = o.witnesses[p];
      if (!w) return Error{Errc::invalid_argument, who + which + "no witness"};
      if (auto e = g16::check_witness(key, *w)) return Error{e.code, who + which + e.what()};
      proof_inputs[p].witness = w;
      lay = {0, key.num_vars, 0, key.num_vars, key.num_public + 1, key.num_private(), w->size()};
    } else {
      const auto& bw = o.bellman_witnesses[p];
      if (!bw) return Error{Errc::invalid_argument, who + which + "no bellman witness"};
      const auto view = bw->view();
      if (auto e = g16::check_assignment(key, view)) return Error{e.code, who + which + e.what()};
      auto scalars = g16::query_scalars(view);
      ScalarLayout l;
      l.a_count = scalars.a.size();
      l.b_at = l.a_count;
      l.b_count = scalars.b.size();
      l.l_at = l.b_at + l.b_count;
      l.l_count = bw->aux.size();
      l.total = l.l_at + l.l_count;
      auto& g = proof_inputs[p].gathered;
      g = std::move(scalars.a);
      g.reserve(l.total);
      g.insert(g.end(), scalars.b.begin(), scalars.b.end());
      g.insert(g.end(), bw->aux.begin(), bw->aux.end());
      proof_inputs[p].bellman = bw;
      lay = l;
    }
  }

  Partition shape;
  for (int k = 0; k < 3; ++k) shape.inputs.push_back(Input::produced(bytes));
  shape.inputs.push_back(Input::produced(std::max<std::size_t>(1, lay.total) * sizeof(Fr)));
  for (int k = 0; k < 4; ++k) shape.outputs.push_back(Output{nullptr, sizeof(G1Xyzz), false});
  shape.outputs.push_back(Output{nullptr, sizeof(G2Xyzz), false});
  BuildNeeds needs;
  needs.workload = "groth16";
  needs.partitions = partitions;
  needs.caller_bytes = 4 * sizeof(G1Xyzz) + sizeof(G2Xyzz) + sizeof(g16::Proof) +
                       kPartitionBookkeepingBytes + (snarkjs ? 0 : lay.total * sizeof(Fr));
  needs.pinned_bytes = Engine::pinned_bytes(shape);
  if (auto e = check_build(needs, o.limits)) return e;

  auto plans = std::make_shared<Plans>();
  std::size_t scratch = bytes;  // h, on the host backend
  if (o.devices->backend() == devices::Backend::cuda) {
    scratch = 0;
    using kernels::MsmGroup;
    const std::tuple<std::size_t, std::vector<kernels::gpu::MsmPlan>*, MsmGroup> queries[] = {
        {h_count, &plans->h, MsmGroup::g1},
        {lay.l_count, &plans->l, MsmGroup::g1},
        {lay.a_count, &plans->a, MsmGroup::g1},
        {lay.b_count, &plans->b, MsmGroup::g1},
        {lay.b_count, &plans->b2, MsmGroup::g2}};
    for (std::size_t d = 0; d < o.devices->size(); ++d)
      for (auto [count, list, group] : queries) {
        kernels::gpu::MsmPlan plan;
        if (count > 0)
          if (auto ec = kernels::gpu::plan_msm(group, count, (*o.devices)[d].info().ordinal, plan))
            return Error{ec, who + "planning an MSM of " + std::to_string(count) +
                                 " points on device " + std::to_string(d) + ": " + ec.message()};
        scratch = std::max(scratch, plan.scratch_bytes);
        list->push_back(plan);
      }
  }

  run = std::make_shared<Groth16Run>();
  run->options = o;
  run->partitions = partitions;
  run->sums.assign(4 * partitions, G1Xyzz::infinity());
  run->sums_g2.assign(partitions, G2Xyzz::infinity());
  run->proofs.assign(partitions, g16::Proof{});
  run->proved.assign(partitions, 0);
  run->failures.assign(partitions, std::string{});
  if (run->options.randomness.empty())
    for (std::size_t p = 0; p < partitions; ++p) {
      auto r = g16::ProofRandomness::from_os();
      if (!r) return Error{r.error().code, who + r.error().what()};
      run->options.randomness.push_back(*r);
    }

  Job job;
  job.name = o.name;
  job.priority = o.priority;
  job.srs = gk.points;
  job.kernel_steps = {"h", "msm_h", "msm_witness", "msm_b_g2"};
  const unsigned cpu_threads = o.cpu_threads;
  for (std::size_t p = 0; p < partitions; ++p) {
    auto in = std::make_shared<ProofInputs>(std::move(proof_inputs[p]));
    Partition part;
    for (int k = 0; k < 3; ++k) part.inputs.push_back(Input::produced(bytes));
    part.inputs.push_back(Input::produced(std::max<std::size_t>(1, lay.total) * sizeof(Fr)));
    part.split_producer = [in, matrices = gk.matrices, n, lay](
                              std::span<const std::span<std::byte>> produced,
                              ProducerTask task) -> std::error_code {
      auto* a = reinterpret_cast<Fr*>(produced[0].data());
      auto* b = reinterpret_cast<Fr*>(produced[1].data());
      auto* c = reinterpret_cast<Fr*>(produced[2].data());
      const auto [begin, end] = task.range(n);
      if (matrices) {
        matrices->evaluate_rows(*in->witness, begin, end, a, b, c,
                                g16::ConstraintMatrices::Order::ntt);
      } else {
        const auto& bw = *in->bellman;
        std::copy(bw.a.begin() + begin, bw.a.begin() + end, a + begin);
        std::copy(bw.b.begin() + begin, bw.b.begin() + end, b + begin);
        std::copy(bw.c.begin() + begin, bw.c.begin() + end, c + begin);
      }
      const auto scalars = in->scalars();
      const auto [s_begin, s_end] = task.range(lay.total);
      std::copy(scalars.begin() + s_begin, scalars.begin() + s_end,
                reinterpret_cast<Fr*>(produced[3].data()) + s_begin);
      return {};
    };
    for (int k = 0; k < 4; ++k)
      part.outputs.push_back(Output::to(
          std::span(reinterpret_cast<std::byte*>(&run->sums[4 * p + k]), sizeof(G1Xyzz))));
    part.outputs.push_back(
        Output::to(std::span(reinterpret_cast<std::byte*>(&run->sums_g2[p]), sizeof(G2Xyzz))));
    part.scratch_bytes = scratch;
    part.work.gpu = [gk, plans, log_n, snarkjs, h_count,
                     lay](const KernelContext& c) -> std::error_code {
      const G1Affine* points = gk.points.points_on(c.device);
      const auto d = static_cast<std::size_t>(c.device.index());
      if (points == nullptr || d >= plans->h.size()) return make_error_code(Errc::invalid_argument);
      const auto s = static_cast<cudaStream_t>(c.stream.native());
      auto* a = reinterpret_cast<Fr*>(c.inputs[0]);
      auto* b = reinterpret_cast<Fr*>(c.inputs[1]);
      auto* cc = reinterpret_cast<Fr*>(c.inputs[2]);
      const auto* w = reinterpret_cast<const Fr*>(c.inputs[3]);
      Fr* h = a;
      if (auto ec = snarkjs ? kernels::gpu::hpoly_odd_coset(h, a, b, cc, log_n, s)
                            : kernels::gpu::hpoly(h, a, b, cc, log_n, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      if (auto ec = gpu_msm(plans->h[d], c.outputs[0], points + gk.h_at, h, h_count, c, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      if (auto ec =
              gpu_msm(plans->l[d], c.outputs[1], points + gk.l_at, w + lay.l_at, lay.l_count, c, s))
        return ec;
      if (auto ec =
              gpu_msm(plans->a[d], c.outputs[2], points + gk.a_at, w + lay.a_at, lay.a_count, c, s))
        return ec;
      if (auto ec = gpu_msm(plans->b[d], c.outputs[3], points + gk.b1_at, w + lay.b_at, lay.b_count,
                            c, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      return gpu_msm(plans->b2[d], c.outputs[4], g2_points(points, gk.b2_at), w + lay.b_at,
                     lay.b_count, c, s);
    };
    part.work.cpu = [gk, log_n, snarkjs, h_count, lay,
                     cpu_threads](const KernelContext& c) -> std::error_code {
      const G1Affine* points = gk.points.points_on(c.device);
      auto* h = reinterpret_cast<Fr*>(c.scratch);
      if (points == nullptr || h == nullptr) return make_error_code(Errc::invalid_argument);
      const auto* a = reinterpret_cast<const Fr*>(c.inputs[0]);
      const auto* b = reinterpret_cast<const Fr*>(c.inputs[1]);
      const auto* cc = reinterpret_cast<const Fr*>(c.inputs[2]);
      const auto* w = reinterpret_cast<const Fr*>(c.inputs[3]);
      if (snarkjs)
        kernels::cpu::hpoly_odd_coset_in_ntt_order(h, a, b, cc, log_n, cpu_threads);
      else
        kernels::cpu::hpoly(h, a, b, cc, log_n, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_msm(c.outputs[0], points + gk.h_at, h, h_count, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_msm(c.outputs[1], points + gk.l_at, w + lay.l_at, lay.l_count, cpu_threads);
      cpu_msm(c.outputs[2], points + gk.a_at, w + lay.a_at, lay.a_count, cpu_threads);
      cpu_msm(c.outputs[3], points + gk.b1_at, w + lay.b_at, lay.b_count, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_msm(c.outputs[4], g2_points(points, gk.b2_at), w + lay.b_at, lay.b_count, cpu_threads);
      return {};
    };
    part.label = o.name + "#" + std::to_string(p);
    // The proof's last step, on a worker once the sums landed: the assembly
    // and the check. It keeps the partition's inputs alive.
    job.partitions.push_back(std::move(part));
    run->inputs_of.push_back(in);
  }
  job.verify = [run_ptr = run](const Partition&, std::size_t p) -> std::error_code {
    Groth16Run& r = *run_ptr;
    const g16::ProvingKey& key = *r.options.key.key;
    const auto& in = *std::static_pointer_cast<const ProofInputs>(r.inputs_of[p]);
    g16::QuerySums sums;
    sums.b2 = r.sums_g2[p];
    sums.c = r.sums[4 * p + 0];
    kernels::add(sums.c, r.sums[4 * p + 1]);
    sums.a = r.sums[4 * p + 2];
    sums.b1 = r.sums[4 * p + 3];
    const g16::Proof proof = g16::assemble_proof(key, sums, r.options.randomness[p]);
    // r and s reveal the witness to whoever holds the proof: they go as soon
    // as the proof has them.
    r.options.randomness[p] = g16::ProofRandomness::fixed_for_tests(Fr::zero(), Fr::zero());
    if (r.options.verify) {
      auto checked = g16::checked_proof(key, proof, in.public_inputs(key.num_public));
      if (!checked) {
        r.failures[p] = checked.error().what();
        return checked.error().code;
      }
    }
    r.proofs[p] = proof;
    r.proved[p] = 1;
    return {};
  };
  return job;
}

}  // namespace

Result<Job> make_groth16_job(const Groth16Options& o, std::shared_ptr<Groth16Run>& run) {
  run.reset();
  auto job = guarded_build<Job>("groth16", [&] { return build_groth16_job(o, run); });
  if (!job) run.reset();
  return job;
}

}  // namespace stoker::engine::workloads
