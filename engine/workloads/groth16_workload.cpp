#include "engine/workloads/groth16_workload.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <tuple>

#include "common/host_memory_limit.hpp"
#include "common/uninitialized_vector.hpp"
#include "engine/groth16/cpu_prover.hpp"
#include "engine/groth16/proof_assembly.hpp"
#include "kernels/constraint_rows.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/detail/parallel.hpp"
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

namespace {

// What stays on the host of a key loaded on the devices.
g16::ProvingKey without_queries(const g16::ProvingKey& k) {
  g16::ProvingKey out;
  out.format = k.format;
  out.log_n = k.log_n;
  out.num_vars = k.num_vars;
  out.num_public = k.num_public;
  out.vk = k.vk;
  out.beta_1 = k.beta_1;
  out.delta_1 = k.delta_1;
  return out;
}

// Where a load takes a key's points from: a range of one G1 query's points,
// or of B_G2's.
struct QuerySource {
  std::function<Error(g16::Query, std::size_t first, std::span<G1Affine> out)> g1;
  std::function<Error(std::size_t first, std::span<G2Affine> out)> b_g2;
};

// The queries of a key of shape `head` and sizes `n` onto every device,
// chunk by chunk into the pinned blocks, read from `source`; a snarkjs
// key's H from `snarkjs_h` (all of it, in the file's order) through the
// permutation into NTT order on the way (a permuted copy first took 6.4 GB
// more and a pass over it at 2^26), and its `matrices` after the points.
Result<Groth16Key> load_queries(Engine& engine, const g16::ProvingKey& head,
                                const g16::QueryCounts& n, std::span<const G1Affine> snarkjs_h,
                                const g16::ConstraintMatrices* matrices,
                                const QuerySource& source, std::string label, bool check_points,
                                std::size_t chunk_points,
                                g16::PointForm form = g16::PointForm::montgomery) {
  const bool snarkjs = head.format == g16::KeyFormat::snarkjs;
  if (snarkjs && (n.h != head.domain_size() || snarkjs_h.size() != n.h))
    return Error{Errc::invalid_argument, label + ": H holds " + std::to_string(n.h) +
                                             " points for a domain of " +
                                             std::to_string(head.domain_size())};
  if (snarkjs != (matrices != nullptr))
    return Error{Errc::invalid_argument,
                 label + ": a snarkjs key, and only one, comes with its constraint matrices"};
  if (n.b_g2 != n.b_g1)
    return Error{Errc::invalid_argument, label + ": B_G1 holds " + std::to_string(n.b_g1) +
                                             " points and B_G2 " + std::to_string(n.b_g2)};
  Groth16Key out;
  out.l_at = n.h;
  out.a_at = out.l_at + n.l;
  out.b1_at = out.a_at + n.a;
  out.b2_at = out.b1_at + n.b_g1;
  out.rows_at = out.b2_at + 2 * n.b_g2;
  if (matrices) out.rows = matrices->image();
  constexpr std::size_t kSlot = sizeof(G1Affine);
  const std::size_t slots = out.rows_at + (out.rows.bytes + kSlot - 1) / kSlot;
  const std::size_t starts[] = {out.h_at, out.l_at, out.a_at, out.b1_at, out.b2_at};
  const g16::Query g1_queries[] = {g16::Query::h, g16::Query::l, g16::Query::a, g16::Query::b_g1};
  const kernels::NttToSnarkjsIndex to_snarkjs(head.log_n);
  const SrsFill fill = [&](std::size_t first, std::span<G1Affine> to) -> Error {
    for (std::size_t done = 0; done < to.size();) {
      const std::size_t slot = first + done;
      if (slot < out.b2_at) {
        // The G1 query holding `slot`: the last that starts at or before it
        // (an empty query starts where the next does).
        std::size_t q = 3;
        while (starts[q] > slot) --q;
        const std::size_t at = slot - starts[q];
        const std::span<G1Affine> dst =
            to.subspan(done, std::min(starts[q + 1] - slot, to.size() - done));
        if (q == 0 && snarkjs) {
          kernels::detail::parallel_for(
              dst.size(), 0,
              [&](std::size_t b, std::size_t e) {
                for (std::size_t i = b; i < e; ++i) dst[i] = snarkjs_h[to_snarkjs(at + i)];
              },
              std::size_t{1} << 16);
        } else if (Error e = source.g1(g1_queries[q], at, dst)) {
          return e;
        }
        done += dst.size();
        continue;
      }
      if (slot >= out.rows_at) {
        // The rows, bytes in slots of their own (zero past their end).
        const std::span<std::byte> dst = std::as_writable_bytes(to.subspan(done));
        matrices->copy_image((slot - out.rows_at) * kSlot, dst);
        done = to.size();
        continue;
      }
      // B_G2, two slots a point: a point split by the chunk's edges is read
      // whole and the half in this chunk copied.
      const std::size_t rel = slot - out.b2_at,
                        left = std::min(to.size(), out.rows_at - first) - done;
      if (rel % 2 == 1 || left == 1) {
        G2Affine p;
        if (Error e = source.b_g2(rel / 2, std::span<G2Affine>(&p, 1))) return e;
        std::memcpy(&to[done], reinterpret_cast<const G1Affine*>(&p) + rel % 2, sizeof(G1Affine));
        done += 1;
        continue;
      }
      const std::size_t whole = left / 2;
      if (Error e = source.b_g2(
              rel / 2, std::span<G2Affine>(reinterpret_cast<G2Affine*>(to.data() + done), whole)))
        return e;
      done += 2 * whole;
    }
    return Error{};
  };
  SrsLoadOptions o;
  o.trust_points = !check_points;
  o.canonical = form == g16::PointForm::canonical;
  o.g2_from = out.b2_at;
  o.raw_from = out.rows_at;
  o.chunk_points = chunk_points;
  // The fill fails only reading a KeyFile, whose errors name the file, the
  // section and the byte (a copy from memory cannot fail).
  o.fill_errors_named = true;
  // A bad point named by its query and its index there, as the key's
  // readers name them (H by its index in the key, not in NTT order).
  o.name_point = [&out, &to_snarkjs, snarkjs](std::size_t slot) {
    const auto named = [](const char* query, std::size_t i) {
      return std::string(query) + " point " + std::to_string(i);
    };
    if (slot < out.l_at) return named("H", snarkjs ? to_snarkjs(slot) : slot);
    if (slot < out.a_at) return named("L", slot - out.l_at);
    if (slot < out.b1_at) return named("A", slot - out.a_at);
    if (slot < out.b2_at) return named("B_G1", slot - out.b1_at);
    if (slot >= out.rows_at) return std::string("constraint rows");
    return named("B_G2", (slot - out.b2_at) / 2);
  };
  o.label = std::move(label);
  auto points = engine.load_srs(slots, fill, o);
  if (!points) return points.error();
  out.points = std::move(*points);
  out.key = std::make_shared<const g16::ProvingKey>(without_queries(head));
  return out;
}

// A's, B's and L's points copied out of the key's vectors on every thread.
template <typename Point>
void copy_range(std::span<const Point> from, std::size_t first, std::span<Point> to) {
  kernels::detail::parallel_for(
      to.size(), 0,
      [&](std::size_t b, std::size_t e) {
        std::copy(from.begin() + static_cast<std::ptrdiff_t>(first + b),
                  from.begin() + static_cast<std::ptrdiff_t>(first + e),
                  to.begin() + static_cast<std::ptrdiff_t>(b));
      },
      std::size_t{1} << 16);
}

}  // namespace

Result<Groth16Key> load_groth16_key(Engine& engine, std::shared_ptr<const g16::ProvingKey> key,
                                    std::string label, bool check_points,
                                    std::size_t chunk_points) {
  if (!key) return Error{Errc::invalid_argument, "load_groth16_key: no key"};
  const g16::ProvingKey& k = *key;
  std::shared_ptr<const g16::ConstraintMatrices> matrices;
  if (k.format == g16::KeyFormat::snarkjs) {
    auto m = g16::ConstraintMatrices::from(k);
    if (!m) return m.error();
    matrices = std::make_shared<const g16::ConstraintMatrices>(std::move(*m));
  }
  QuerySource source;
  source.g1 = [&k](g16::Query q, std::size_t first, std::span<G1Affine> out) -> Error {
    const auto& v = q == g16::Query::h   ? k.h
                    : q == g16::Query::l ? k.l
                    : q == g16::Query::a ? k.a
                                         : k.b_g1;
    copy_range(std::span<const G1Affine>(v), first, out);
    return {};
  };
  source.b_g2 = [&k](std::size_t first, std::span<G2Affine> out) -> Error {
    copy_range(std::span<const G2Affine>(k.b_g2), first, out);
    return {};
  };
  return load_queries(engine, k, k.counts(), k.h, matrices.get(), source, std::move(label),
                      check_points, chunk_points);
}

Result<Groth16Key> load_groth16_key(Engine& engine, g16::KeyFile& file, std::string label,
                                    bool check_points, std::size_t chunk_points) {
  const g16::ProvingKey& head = file.head();
  const g16::QueryCounts n = file.counts();
  std::shared_ptr<const g16::ConstraintMatrices> matrices;
  g16::PointVector<G1Affine> h;  // a snarkjs key's, for its permutation
  if (head.format == g16::KeyFormat::snarkjs) {
    if (file.coefficients_freed())
      return Error{Errc::invalid_argument,
                   label + ": " + file.path() +
                       ": its coefficients went into an earlier load's matrices; open it again"};
    auto m = g16::ConstraintMatrices::from(head);
    if (!m) return m.error();
    matrices = std::make_shared<const g16::ConstraintMatrices>(std::move(*m));
    file.free_coefficients();  // 64 bytes a term: 9 GB at 2^26, in the matrices now
    try {
      h.resize(n.h);
    } catch (const std::bad_alloc&) {
      return common::host_memory_refused(label + ": H's " + std::to_string(n.h) + " points",
                                         n.h * sizeof(G1Affine));
    }
    if (Error e = file.read(g16::Query::h, 0, std::span<G1Affine>(h))) return e;
  }
  // The points as the file stores them: a bellman key's canonical
  // coordinates are converted on the devices. Decoding on one core of the
  // development machine: 33 ns a G1 point and 68 a G2 one so, against 93
  // and 521 converted (with G2's curve equation), about 10 core-seconds
  // of a 2^26 key's reading instead of 43.
  const g16::PointForm form = file.stored_form();
  QuerySource source;
  source.g1 = [&file, form](g16::Query q, std::size_t first, std::span<G1Affine> out) {
    return file.read(q, first, out, 0, form);
  };
  source.b_g2 = [&file, form](std::size_t first, std::span<G2Affine> out) {
    return file.read_b_g2(first, out, 0, form);
  };
  return load_queries(engine, head, n, h, matrices.get(), source, std::move(label), check_points,
                      chunk_points, form);
}

Groth16Options groth16_options_on(const Engine& engine, Groth16Key key) {
  Groth16Options o;
  o.key = std::move(key);
  o.devices = &engine.devices();
  const auto limits = engine.stats().device_budget_limit;
  if (!limits.empty()) o.device_budget_bytes = *std::min_element(limits.begin(), limits.end());
  o.limits.pinned_budget_bytes = engine.config().host_budget_bytes;
  return o;
}

namespace {

// One query's witness scalars split by value (kernels::gpu::sparse_msm),
// as byte offsets into the partition's packed scalar input: the rest's
// values, the ones' indices, the rest's indices.
struct SplitQuery {
  std::size_t ones = 0, rest = 0;
  std::size_t rest_scalars_at = 0, ones_at = 0, rest_at = 0;
};

// A proof's packed query arrays in one buffer, allocated once and not
// zeroed: at 2^24 it is about 300 MB, which a zeroing pass and a grown
// vector's copies cost tens of ms a proof to write again.
using PackedBytes = common::UninitializedVector<std::byte>;

// The L, A and B queries' splits, packed. A snarkjs key's A and B take the
// same scalars (every wire), so B shares A's arrays.
struct PackedScalars {
  PackedBytes bytes;
  SplitQuery l, a, b;
};

// A query to pack: its scalars split by value, or (tail_of set) the same
// split as an earlier query's from index `from` on, shifted down by
// `from`: a snarkjs key's L takes the wires after the public ones, which
// are A's from there, so its lists are A's tails, copied, where counting
// and splitting them again would read the witness twice more (1.3 GB at
// 2^24). `scalars` are the earlier query's then, for the head's counts.
struct QueryToPack {
  SplitQuery* q = nullptr;
  std::span<const Fr> scalars;
  const SplitQuery* tail_of = nullptr;
  std::size_t from = 0;
};

// Packs the queries straight into `packed`'s buffer, every array at a
// multiple of alignof(Fr) (32) from the start of the input, whose blocks
// are page-aligned on either backend. Counting and writing run on
// `threads` threads (0: the hardware's): on one, the split of a 2^24
// witness took a few hundred ms of each proof's build.
void pack_queries(PackedScalars& packed, std::initializer_list<QueryToPack> queries,
                  unsigned threads) {
  constexpr std::size_t kAlign = alignof(Fr);
  const auto align = [](std::size_t at) { return (at + kAlign - 1) / kAlign * kAlign; };
  // Per query, its counts; for a tail, those of the earlier query's head
  // (the scalars before `from`), which its lists skip.
  std::vector<kernels::cpu::ScalarSplitCounts> counts;
  std::size_t size = 0;
  for (const QueryToPack& in : queries) {
    SplitQuery* q = in.q;
    if (in.tail_of) {
      counts.push_back(
          kernels::cpu::count_split(in.scalars.data(), std::min(in.from, in.scalars.size()), 1));
      q->ones = in.tail_of->ones - counts.back().ones;
      q->rest = in.tail_of->rest - counts.back().rest;
    } else {
      counts.push_back(kernels::cpu::count_split(in.scalars.data(), in.scalars.size(), threads));
      q->ones = counts.back().ones;
      q->rest = counts.back().rest;
    }
    q->rest_scalars_at = align(size);
    size = q->rest_scalars_at + q->rest * sizeof(Fr);
    q->ones_at = align(size);
    size = q->ones_at + q->ones * sizeof(std::uint32_t);
    q->rest_at = align(size);
    size = q->rest_at + q->rest * sizeof(std::uint32_t);
  }
  packed.bytes.resize(size);
  if (size == 0) return;  // every scalar zero
  std::byte* out = packed.bytes.data();
  const auto indices = [out](std::size_t at) { return reinterpret_cast<std::uint32_t*>(out + at); };
  // dst[k] = src[k] - shift for k < n, on the threads.
  const auto shifted = [threads](std::uint32_t* dst, const std::uint32_t* src, std::size_t n,
                                 std::uint32_t shift) {
    kernels::detail::parallel_for(
        n, threads,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t k = b; k < e; ++k) dst[k] = src[k] - shift;
        },
        std::size_t{1} << 16);
  };
  std::size_t i = 0, written = 0;
  for (const QueryToPack& in : queries) {
    const SplitQuery* q = in.q;
    // The padding before each array, so that every byte uploaded is defined.
    std::memset(out + written, 0, q->rest_scalars_at - written);
    std::memset(out + q->rest_scalars_at + q->rest * sizeof(Fr), 0,
                q->ones_at - (q->rest_scalars_at + q->rest * sizeof(Fr)));
    std::memset(out + q->ones_at + q->ones * sizeof(std::uint32_t), 0,
                q->rest_at - (q->ones_at + q->ones * sizeof(std::uint32_t)));
    if (in.tail_of) {
      const SplitQuery& t = *in.tail_of;
      const kernels::cpu::ScalarSplitCounts& head = counts[i];
      const auto shift = static_cast<std::uint32_t>(in.from);
      shifted(indices(q->ones_at), indices(t.ones_at) + head.ones, q->ones, shift);
      shifted(indices(q->rest_at), indices(t.rest_at) + head.rest, q->rest, shift);
      std::memcpy(out + q->rest_scalars_at, out + t.rest_scalars_at + head.rest * sizeof(Fr),
                  q->rest * sizeof(Fr));
    } else {
      kernels::cpu::split_scalars_into(counts[i], in.scalars.data(), in.scalars.size(),
                                       indices(q->ones_at), indices(q->rest_at),
                                       reinterpret_cast<Fr*>(out + q->rest_scalars_at), threads);
    }
    ++i;
    written = q->rest_at + q->rest * sizeof(std::uint32_t);
  }
}

// A partition's proof inputs on the host: the witness (or a bellman
// witness) and its query scalars split and packed.
struct ProofInputs {
  std::shared_ptr<const g16::WitnessValues> witness;
  std::shared_ptr<const g16::BellmanWitness> bellman;
  PackedScalars packed;
  std::span<const Fr> public_inputs(std::size_t num_public) const {
    return witness ? std::span<const Fr>(*witness).subspan(1, num_public)
                   : std::span<const Fr>(bellman->inputs).subspan(1);
  }
};

// H's MSM plan per device, and per partition and device the sparse plans
// of L, A, B_G1 and B_G2.
struct Plans {
  std::vector<kernels::gpu::MsmPlan> h;
  struct Witness {
    kernels::gpu::SparseMsmPlan l, a, b, b2;
  };
  std::vector<std::vector<Witness>> witness;  // [partition][device]
};

// A sum computed whole (the host backend), in the window sums' form: no
// window, the sum as the extra.
template <typename Xyzz>
void write_as_window_sums(std::byte* out, const Xyzz& sum) {
  constexpr auto group = kernels::detail::MsmGroupTraits<decltype(kernels::to_affine(sum))>::kGroup;
  const kernels::gpu::MsmWindowSumsHeader h{static_cast<std::uint32_t>(group), 0, 0, 0};
  std::memcpy(out, &h, sizeof h);
  std::memcpy(out + sizeof h, &sum, sizeof sum);
}

template <typename Affine>
void cpu_msm(std::byte* out, const Affine* points, const Fr* scalars, std::size_t count,
             unsigned threads) {
  using Xyzz = kernels::detail::XyzzOf<Affine>;
  write_as_window_sums(
      out, count == 0 ? Xyzz::infinity() : kernels::cpu::msm(points, scalars, count, threads));
}

const G2Affine* g2_points(const G1Affine* resident, std::size_t b2_at) {
  return reinterpret_cast<const G2Affine*>(resident + b2_at);
}

// A witness query's sum on the device from the packed split.
template <typename Affine>
std::error_code gpu_sparse_msm(const kernels::gpu::SparseMsmPlan& plan, std::byte* out,
                               const Affine* points, const std::byte* packed, const SplitQuery& q,
                               std::byte* scratch, std::size_t scratch_bytes, cudaStream_t s) {
  return kernels::gpu::sparse_msm_window_sums(
      plan, out, points, reinterpret_cast<const std::uint32_t*>(packed + q.ones_at),
      reinterpret_cast<const std::uint32_t*>(packed + q.rest_at),
      reinterpret_cast<const Fr*>(packed + q.rest_scalars_at), scratch, scratch_bytes, s);
}

// The same on the CPU (the host backend): the ones' points summed, the
// rest's by the CPU's MSM.
template <typename Affine>
void cpu_sparse_msm(std::byte* out, const Affine* points, const std::byte* packed,
                    const SplitQuery& q, unsigned threads) {
  using Xyzz = decltype(kernels::to_xyzz(Affine{}));
  const auto* ones = reinterpret_cast<const std::uint32_t*>(packed + q.ones_at);
  const auto* rest = reinterpret_cast<const std::uint32_t*>(packed + q.rest_at);
  const auto* rest_scalars = reinterpret_cast<const Fr*>(packed + q.rest_scalars_at);
  std::vector<Affine> gathered(q.ones);
  for (std::size_t i = 0; i < q.ones; ++i) gathered[i] = points[ones[i]];
  Xyzz sum = q.ones ? kernels::cpu::sum_points(gathered.data(), q.ones, threads) : Xyzz::infinity();
  gathered.resize(q.rest);
  for (std::size_t i = 0; i < q.rest; ++i) gathered[i] = points[rest[i]];
  if (q.rest) kernels::add(sum, kernels::cpu::msm(gathered.data(), rest_scalars, q.rest, threads));
  write_as_window_sums(out, sum);
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

  std::vector<ProofInputs> proof_inputs(partitions);
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::string which = "proof " + std::to_string(p) + ": ";
    if (snarkjs) {
      const auto& w = o.witnesses[p];
      if (!w) return Error{Errc::invalid_argument, who + which + "no witness"};
      if (auto e = g16::check_witness(key, gk.counts(), *w))
        return Error{e.code, who + which + e.what()};
      proof_inputs[p].witness = w;
      // A and B over every wire, L over the private ones.
      auto& packed = proof_inputs[p].packed;
      const std::span<const Fr> all(*w);
      // L's wires are A's after the public ones.
      const auto wires = all.first(key.num_vars);
      pack_queries(packed, {{&packed.a, wires}, {&packed.l, wires, &packed.a, key.num_public + 1}},
                   o.cpu_threads);
      packed.b = packed.a;
    } else {
      const auto& bw = o.bellman_witnesses[p];
      if (!bw) return Error{Errc::invalid_argument, who + which + "no bellman witness"};
      const auto view = bw->view();
      if (auto e = g16::check_assignment(key, gk.counts(), view))
        return Error{e.code, who + which + e.what()};
      const auto scalars = g16::query_scalars(view);
      auto& packed = proof_inputs[p].packed;
      pack_queries(packed, {{&packed.a, scalars.a}, {&packed.b, scalars.b}, {&packed.l, bw->aux}},
                   o.cpu_threads);
      proof_inputs[p].bellman = bw;
    }
  }

  std::size_t packed_bytes = 1, packed_total = 0;
  for (const auto& in : proof_inputs) {
    packed_bytes = std::max(packed_bytes, in.packed.bytes.size());
    packed_total += in.packed.bytes.size();
  }
  // A snarkjs proof uploads its witness and has its rows evaluated on the
  // device into a, b, c (scratch); a bellman proof uploads a, b, c.
  if (snarkjs && (!gk.rows.bytes || gk.rows_at >= gk.points.points()))
    return Error{Errc::invalid_argument, who + "the snarkjs key has no resident constraint rows"};
  const std::size_t witness_bytes = key.num_vars * sizeof(Fr);
  std::vector<std::size_t> input_bytes;
  if (snarkjs)
    input_bytes = {witness_bytes};
  else
    input_bytes = {bytes, bytes, bytes};
  auto plans = std::make_shared<Plans>();
  // The MSMs' scratch (on the host backend: h), after a snarkjs proof's a,
  // b, c, where the MSMs' may take b's and c's place (h is a).
  std::size_t msm_scratch = bytes;
  // The MSMs' window sums: the most any plan leaves (no windows on the host).
  std::size_t g1_sums_bytes = kernels::gpu::window_sums_bytes(kernels::MsmGroup::g1, 0);
  std::size_t g2_sums_bytes = kernels::gpu::window_sums_bytes(kernels::MsmGroup::g2, 0);
  const bool gpu = o.devices->backend() == devices::Backend::cuda;
  if (gpu) {
    msm_scratch = 0;
    using kernels::MsmGroup;
    plans->witness.resize(partitions);
    for (std::size_t d = 0; d < o.devices->size(); ++d) {
      const int ordinal = (*o.devices)[d].info().ordinal;
      kernels::gpu::MsmPlan plan;
      if (auto ec = kernels::gpu::plan_msm(MsmGroup::g1, h_count, ordinal, plan))
        return Error{ec, who + "planning H's MSM of " + std::to_string(h_count) +
                             " points on device " + std::to_string(d) + ": " + ec.message()};
      msm_scratch = std::max(msm_scratch, plan.scratch_bytes);
      g1_sums_bytes = std::max(g1_sums_bytes, kernels::gpu::window_sums_bytes(plan));
      plans->h.push_back(plan);
      for (std::size_t p = 0; p < partitions; ++p) {
        const PackedScalars& packed = proof_inputs[p].packed;
        Plans::Witness w;
        const std::tuple<const SplitQuery*, kernels::gpu::SparseMsmPlan*, MsmGroup> queries[] = {
            {&packed.l, &w.l, MsmGroup::g1},
            {&packed.a, &w.a, MsmGroup::g1},
            {&packed.b, &w.b, MsmGroup::g1},
            {&packed.b, &w.b2, MsmGroup::g2}};
        for (auto [q, sparse, group] : queries) {
          if (auto ec = kernels::gpu::plan_sparse_msm(group, q->ones, q->rest, ordinal, *sparse))
            return Error{ec, who + "planning a witness MSM of " + std::to_string(q->ones) +
                                 " ones and " + std::to_string(q->rest) + " others on device " +
                                 std::to_string(d) + ": " + ec.message()};
          msm_scratch = std::max(msm_scratch, sparse->scratch_bytes);
          std::size_t& most = group == MsmGroup::g2 ? g2_sums_bytes : g1_sums_bytes;
          most = std::max(most, kernels::gpu::window_sums_bytes(*sparse));
        }
        plans->witness[p].push_back(w);
      }
    }
  }

  // A snarkjs proof's a, b, c first: on a GPU h is a and the MSMs' scratch
  // may overlay b and c; on the host backend h is apart.
  const std::size_t abc_at = snarkjs ? (gpu ? bytes : 3 * bytes) : 0;
  const std::size_t scratch =
      snarkjs ? (gpu ? bytes + std::max(2 * bytes, msm_scratch) : 3 * bytes + msm_scratch)
              : msm_scratch;
  Partition shape;
  for (std::size_t b : input_bytes) shape.inputs.push_back(Input::produced(b));
  shape.inputs.push_back(Input::produced(packed_bytes));
  for (int k = 0; k < 4; ++k) shape.outputs.push_back(Output{nullptr, g1_sums_bytes, false});
  shape.outputs.push_back(Output{nullptr, g2_sums_bytes, false});
  BuildNeeds needs;
  needs.workload = "groth16";
  needs.partitions = partitions;
  needs.caller_bytes = 4 * g1_sums_bytes + g2_sums_bytes + sizeof(g16::Proof) +
                       kPartitionBookkeepingBytes + packed_total / partitions;
  needs.pinned_bytes = Engine::pinned_bytes(shape);
  if (auto e = check_build(needs, o.limits)) return e;

  run = std::make_shared<Groth16Run>();
  run->options = o;
  run->partitions = partitions;
  run->g1_sums_bytes = g1_sums_bytes;
  run->g2_sums_bytes = g2_sums_bytes;
  run->sums.assign(partitions * run->sums_stride(), std::byte{0});
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
  job.kernel_steps = {"h", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2"};
  const unsigned cpu_threads = o.cpu_threads;
  for (std::size_t p = 0; p < partitions; ++p) {
    auto in = std::make_shared<ProofInputs>(std::move(proof_inputs[p]));
    Partition part;
    for (std::size_t b : input_bytes) part.inputs.push_back(Input::produced(b));
    part.inputs.push_back(Input::produced(std::max<std::size_t>(1, in->packed.bytes.size())));
    const std::size_t packed_input = input_bytes.size();
    part.split_producer = [in, n, packed_input, num_vars = key.num_vars](
                              std::span<const std::span<std::byte>> produced,
                              ProducerTask task) -> std::error_code {
      if (in->witness) {
        const auto [begin, end] = task.range(num_vars);
        auto* w = reinterpret_cast<Fr*>(produced[0].data());
        std::copy(in->witness->begin() + begin, in->witness->begin() + end, w + begin);
      } else {
        const auto [begin, end] = task.range(n);
        const auto& bw = *in->bellman;
        const g16::WitnessValues* from[] = {&bw.a, &bw.b, &bw.c};
        for (int k = 0; k < 3; ++k)
          std::copy(from[k]->begin() + begin, from[k]->begin() + end,
                    reinterpret_cast<Fr*>(produced[k].data()) + begin);
      }
      const auto& packed = in->packed.bytes;
      const auto [s_begin, s_end] = task.range(packed.size());
      std::copy(packed.begin() + s_begin, packed.begin() + s_end,
                produced[packed_input].data() + s_begin);
      return {};
    };
    std::byte* sums = run->sums.data() + p * run->sums_stride();
    for (int k = 0; k < 4; ++k)
      part.outputs.push_back(Output::to(std::span(sums + k * g1_sums_bytes, g1_sums_bytes)));
    part.outputs.push_back(Output::to(std::span(sums + 4 * g1_sums_bytes, g2_sums_bytes)));
    part.scratch_bytes = scratch;
    part.work.gpu = [gk, plans, log_n, snarkjs, bytes, abc_at, packed_input, in,
                     p](const KernelContext& c) -> std::error_code {
      const G1Affine* points = gk.points.points_on(c.device);
      const auto d = static_cast<std::size_t>(c.device.index());
      if (points == nullptr || d >= plans->h.size()) return make_error_code(Errc::invalid_argument);
      const auto s = static_cast<cudaStream_t>(c.stream.native());
      Fr *a, *b, *cc;
      if (snarkjs) {
        a = reinterpret_cast<Fr*>(c.scratch);
        b = reinterpret_cast<Fr*>(c.scratch + bytes);
        cc = reinterpret_cast<Fr*>(c.scratch + 2 * bytes);
        const auto* rows = reinterpret_cast<const std::byte*>(points + gk.rows_at);
        if (auto ec = kernels::gpu::evaluate_constraint_rows(
                gk.rows.a(rows), gk.rows.b(rows), reinterpret_cast<const Fr*>(c.inputs[0]), log_n,
                a, b, cc, s))
          return ec;
      } else {
        a = reinterpret_cast<Fr*>(c.inputs[0]);
        b = reinterpret_cast<Fr*>(c.inputs[1]);
        cc = reinterpret_cast<Fr*>(c.inputs[2]);
      }
      const std::byte* packed = c.inputs[packed_input];
      const PackedScalars& q = in->packed;
      const Plans::Witness& wp = plans->witness[p][d];
      // The MSMs' scratch: after h (a) for a snarkjs proof, over b and c.
      std::byte* const scratch = c.scratch + abc_at;
      const std::size_t scratch_bytes = c.scratch_bytes - abc_at;
      Fr* h = a;
      if (auto ec = snarkjs ? kernels::gpu::hpoly_odd_coset(h, a, b, cc, log_n, s)
                            : kernels::gpu::hpoly(h, a, b, cc, log_n, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      // The window sums, finished on the host when the proof is assembled.
      if (auto ec = kernels::gpu::msm_window_sums(plans->h[d], c.outputs[0], points + gk.h_at, h,
                                                  scratch, scratch_bytes, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      if (auto ec = gpu_sparse_msm(wp.l, c.outputs[1], points + gk.l_at, packed, q.l, scratch,
                                    scratch_bytes, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      if (auto ec = gpu_sparse_msm(wp.a, c.outputs[2], points + gk.a_at, packed, q.a, scratch,
                                    scratch_bytes, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      if (auto ec = gpu_sparse_msm(wp.b, c.outputs[3], points + gk.b1_at, packed, q.b, scratch,
                                    scratch_bytes, s))
        return ec;
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      return gpu_sparse_msm(wp.b2, c.outputs[4], g2_points(points, gk.b2_at), packed, q.b, scratch,
                            scratch_bytes, s);
    };
    part.work.cpu = [gk, log_n, snarkjs, bytes, abc_at, packed_input, h_count, in,
                     cpu_threads](const KernelContext& c) -> std::error_code {
      const G1Affine* points = gk.points.points_on(c.device);
      if (points == nullptr || c.scratch == nullptr) return make_error_code(Errc::invalid_argument);
      const Fr *a, *b, *cc;
      if (snarkjs) {
        auto* sa = reinterpret_cast<Fr*>(c.scratch);
        auto* sb = reinterpret_cast<Fr*>(c.scratch + bytes);
        auto* sc = reinterpret_cast<Fr*>(c.scratch + 2 * bytes);
        const auto* rows = reinterpret_cast<const std::byte*>(points + gk.rows_at);
        const auto* w = reinterpret_cast<const Fr*>(c.inputs[0]);
        const auto ra = gk.rows.a(rows), rb = gk.rows.b(rows);
        kernels::detail::parallel_for(
            std::size_t{1} << log_n, cpu_threads,
            [&](std::size_t lo, std::size_t hi) {
              kernels::cpu::evaluate_constraint_rows(ra, rb, w, log_n, lo, hi, sa, sb, sc,
                                                     kernels::RowOrder::ntt);
            },
            1024);
        a = sa;
        b = sb;
        cc = sc;
      } else {
        a = reinterpret_cast<const Fr*>(c.inputs[0]);
        b = reinterpret_cast<const Fr*>(c.inputs[1]);
        cc = reinterpret_cast<const Fr*>(c.inputs[2]);
      }
      auto* h = reinterpret_cast<Fr*>(c.scratch + abc_at);
      const std::byte* packed = c.inputs[packed_input];
      const PackedScalars& q = in->packed;
      if (snarkjs)
        kernels::cpu::hpoly_odd_coset_in_ntt_order(h, a, b, cc, log_n, cpu_threads);
      else
        kernels::cpu::hpoly(h, a, b, cc, log_n, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_msm(c.outputs[0], points + gk.h_at, h, h_count, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_sparse_msm(c.outputs[1], points + gk.l_at, packed, q.l, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_sparse_msm(c.outputs[2], points + gk.a_at, packed, q.a, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_sparse_msm(c.outputs[3], points + gk.b1_at, packed, q.b, cpu_threads);
      if (c.mark)
        if (auto ec = c.mark()) return ec;
      cpu_sparse_msm(c.outputs[4], g2_points(points, gk.b2_at), packed, q.b, cpu_threads);
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
    const std::byte* at = r.sums.data() + p * r.sums_stride();
    G1Xyzz g1[4];
    std::error_code ec;
    for (int k = 0; k < 4 && !ec; ++k)
      ec = kernels::cpu::finish_window_sums(at + k * r.g1_sums_bytes, r.g1_sums_bytes, g1[k]);
    g16::QuerySums sums;
    if (!ec)
      ec = kernels::cpu::finish_window_sums(at + 4 * r.g1_sums_bytes, r.g2_sums_bytes, sums.b2);
    if (ec) {
      r.failures[p] = "the device's MSM sums are malformed: " + ec.message();
      return ec;
    }
    sums.c = g1[0];
    kernels::add(sums.c, g1[1]);
    sums.a = g1[2];
    sums.b1 = g1[3];
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
