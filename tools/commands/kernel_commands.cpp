// `stoker ntt` and `stoker hpoly`; see kernel_commands.hpp.
#include "tools/commands/kernel_commands.hpp"

#include <algorithm>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "kernels/cpu_host_bytes.hpp"
#include "kernels/field.cuh"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/commands/kernel_args.hpp"
#include "tools/commands/kernel_element_file.hpp"
#include "tools/commands/kernel_gpu.hpp"

namespace stoker::tools {

using kernel_cli::allocate_elements;
using kernel_cli::Args;
using kernel_cli::check_device_room;
using kernel_cli::download;
using kernel_cli::element_count;
using kernel_cli::kWriteBytesPerElement;
using kernel_cli::open_gpu;
using kernel_cli::parse;
using kernel_cli::parse_log_n;
using kernel_cli::read_elements;
using kernel_cli::upload;
using kernel_cli::usage;
using kernel_cli::use_gpu;
using kernel_cli::write_elements;
using kernels::Fr;
using kernels::NttKind;

namespace {

int fail(const char* command, const std::string& problem) {
  std::cerr << "stoker " << command << ": " << problem << "\n";
  return 1;
}

// `n` elements for `what`; where the system refuses them, the error names
// their size and the host's limit.
Error allocate(std::vector<Fr>& v, std::size_t n, const std::string& what) {
  try {
    v.resize(n);
    return {};
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(what, n * sizeof(Fr));
  }
}

int ntt(int argc, char** argv) {
  const char* synopsis =
      "stoker ntt --log-n K --in FILE --out FILE [--inverse] [--coset] [--cpu | --device N]";
  const std::string help =
      std::string("usage: ") + synopsis +
      "\nThe NTT of a file of 2^K BLS12-381 scalars (32 bytes each, little-endian, canonical).\n"
      "  --log-n K    the size, K in 1.." +
      std::to_string(kernels::kMaxLogN) +
      "\n"
      "  --in FILE    the scalars\n"
      "  --out FILE   where the result goes (written whole or not at all; through a symlink);\n"
      "               it may be --in: the transform in place\n"
      "  --inverse    the inverse NTT\n"
      "  --coset      on the coset (the multiplicative generator times the roots)\n"
      "  --cpu        the CPU version instead of the GPU\n"
      "  --device N   the GPU (default 0)\n";
  Args a;
  if (auto rc = parse("ntt", help, argc, argv, a, {"--log-n", "--in", "--out"},
                      {"--inverse", "--coset", "--cpu"}))
    return *rc;
  for (const char* req : {"--log-n", "--in", "--out"})
    if (!a.values.count(req)) return usage("ntt", std::string("missing ") + req, synopsis);
  // An input that is missing or not a regular file is a usage error, as in
  // `stoker msm` and `stoker prove`, found before any work.
  if (const auto sized = input_size(a.values["--in"]); !sized)
    return usage("ntt", sized.error().what(), synopsis);
  auto out = OutputFile::check(a.values["--out"]);
  if (!out) return usage("ntt", "--out: " + out.error().what(), synopsis);
  std::optional<unsigned> log_n = parse_log_n(a.values["--log-n"]);
  if (!log_n)
    return usage("ntt",
                 "--log-n must be an integer in 1.." + std::to_string(kernels::kMaxLogN) +
                     ", not '" + a.values["--log-n"] + "'",
                 synopsis);
  const bool inverse = a.flags.count("--inverse") > 0, coset = a.flags.count("--coset") > 0;
  const NttKind kind = coset ? (inverse ? NttKind::coset_inverse : NttKind::coset_forward)
                             : (inverse ? NttKind::inverse : NttKind::forward);
  std::string error;
  const auto n = element_count(a.values["--in"], log_n, error);
  if (!n) return fail("ntt", error);
  const bool on_gpu = use_gpu(a);
  const std::string what = "the NTT of 2^" + std::to_string(*log_n) + " elements";
  // The elements, and beside them the file's bytes to write them or, on
  // the CPU, the transform's twiddles, whichever is larger.
  const std::size_t need =
      *n * sizeof(Fr) +
      std::max(*n * kWriteBytesPerElement, on_gpu ? 0 : kernels::cpu::transform_host_bytes(*log_n));
  if (Error e = common::check_host_memory(what, need)) return fail("ntt", e.what());
  std::vector<Fr> x;
  if (Error e = allocate(x, *n, "the NTT's 2^" + std::to_string(*log_n) + " elements"))
    return fail("ntt", e.what());
  if (!read_elements(a.values["--in"], x, error)) return fail("ntt", error);
  if (on_gpu) {
    auto gpu = open_gpu(a);
    if (!gpu) {
      std::cerr << "stoker ntt: " << gpu.error().what() << "\n";
      return 1;
    }
    if (!check_device_room(gpu->device(), *n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: 2^" << *log_n << " elements: " << error << "\n";
      return 1;
    }
    auto data = allocate_elements(gpu->device(), *n);
    if (!data) {
      std::cerr << "stoker ntt: " << data.error().what() << "\n";
      return 1;
    }
    Fr* d = data->as<Fr>();
    if (upload(*gpu, d, x.data(), *n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: " << error << "\n";
      return 1;
    }
    if (auto ec = kernels::gpu::transform(kind, d, d, *log_n, 1, gpu->native())) {
      std::cerr << "stoker ntt: " << ec.message() << "\n";
      return 1;
    }
    if (download(*gpu, x.data(), d, *n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: " << error << "\n";
      return 1;
    }
  } else {
    try {
      kernels::cpu::transform(kind, x.data(), x.data(), *log_n);
    } catch (const std::bad_alloc&) {
      return fail("ntt", common::host_memory_refused("the NTT's twiddles",
                                                     kernels::cpu::transform_host_bytes(*log_n))
                             .what());
    }
  }
  if (!write_elements(*out, x, error)) {
    std::cerr << "stoker ntt: " << error << "\n";
    return 1;
  }
  return 0;
}

int hpoly(int argc, char** argv) {
  const char* synopsis = "stoker hpoly --a FILE --b FILE --c FILE --out FILE [--cpu | --device N]";
  const std::string help =
      std::string("usage: ") + synopsis +
      "\nThe Groth16 H polynomial of files a, b, c of 2^K BLS12-381 scalars each (32 bytes,\n"
      "little-endian, canonical): h = (AB - C) / Z on the coset, back in coefficients.\n"
      "  --a FILE, --b FILE, --c FILE   the evaluations, all of one size\n"
      "  --out FILE   where h goes (written whole or not at all; through a symlink); not\n"
      "               one of the inputs\n"
      "  --cpu        the CPU version instead of the GPU\n"
      "  --device N   the GPU (default 0)\n";
  Args a;
  if (auto rc = parse("hpoly", help, argc, argv, a, {"--a", "--b", "--c", "--out"}, {"--cpu"}))
    return *rc;
  for (const char* req : {"--a", "--b", "--c", "--out"})
    if (!a.values.count(req)) return usage("hpoly", std::string("missing ") + req, synopsis);
  for (const char* input : {"--a", "--b", "--c"})
    if (const auto sized = input_size(a.values[input]); !sized)
      return usage("hpoly", sized.error().what(), synopsis);
  auto out = OutputFile::check(a.values["--out"]);
  if (!out) return usage("hpoly", "--out: " + out.error().what(), synopsis);
  for (const char* input : {"--a", "--b", "--c"})
    if (Error e = out->not_input("--out", input, a.values[input]))
      return usage("hpoly", e.what(), synopsis);
  // Sizes first: nothing is allocated or read when they do not match.
  std::string error;
  std::optional<unsigned> log_n;
  const auto count = element_count(a.values["--a"], log_n, error);
  if (!count) return fail("hpoly", error);
  const std::size_t n = *count;
  for (const char* flag : {"--b", "--c"}) {
    const auto size = input_size(a.values[flag]);
    if (size && *size != n * 32) {
      std::cerr << "stoker hpoly: size mismatch: " << a.values["--a"] << " has " << n * 32
                << " bytes, " << a.values[flag] << " has " << *size << "\n";
      return 1;
    }
    if (!element_count(a.values[flag], log_n, error)) return fail("hpoly", error);
  }
  const bool on_gpu = use_gpu(a);
  const std::string what = "the H polynomial of 2^" + std::to_string(*log_n) + " elements";
  // a, b, c and h, and on the CPU the kernel's own transforms; the inputs
  // are gone before h's file bytes are made.
  const std::size_t need =
      4 * n * sizeof(Fr) + (on_gpu ? 0 : kernels::cpu::hpoly_host_bytes(*log_n));
  if (Error e = common::check_host_memory(what, need)) return fail("hpoly", e.what());
  std::vector<Fr> va, vb, vc, h;
  for (auto [flag, vec] : {std::pair{"--a", &va}, std::pair{"--b", &vb}, std::pair{"--c", &vc}}) {
    if (Error e = allocate(*vec, n, "the H polynomial's input " + std::string(flag + 2)))
      return fail("hpoly", e.what());
    if (!read_elements(a.values[flag], *vec, error)) return fail("hpoly", error);
  }
  if (Error e = allocate(h, n, "the H polynomial's output h")) return fail("hpoly", e.what());
  if (on_gpu) {
    auto gpu = open_gpu(a);
    if (!gpu) {
      std::cerr << "stoker hpoly: " << gpu.error().what() << "\n";
      return 1;
    }
    if (!check_device_room(gpu->device(), 3 * n * sizeof(Fr), error)) {
      std::cerr << "stoker hpoly: 2^" << *log_n << " elements: " << error << "\n";
      return 1;
    }
    auto data = allocate_elements(gpu->device(), 3 * n);
    if (!data) {
      std::cerr << "stoker hpoly: " << data.error().what() << "\n";
      return 1;
    }
    Fr* d = data->as<Fr>();
    for (auto [v, off] : {std::pair{&va, 0}, std::pair{&vb, 1}, std::pair{&vc, 2}})
      if (upload(*gpu, d + off * n, v->data(), n * sizeof(Fr), error)) {
        std::cerr << "stoker hpoly: " << error << "\n";
        return 1;
      }
    if (auto ec = kernels::gpu::hpoly(d + 2 * n, d, d + n, d + 2 * n, *log_n, gpu->native())) {
      std::cerr << "stoker hpoly: " << ec.message() << "\n";
      return 1;
    }
    if (download(*gpu, h.data(), d + 2 * n, n * sizeof(Fr), error)) {
      std::cerr << "stoker hpoly: " << error << "\n";
      return 1;
    }
  } else {
    try {
      kernels::cpu::hpoly(h.data(), va.data(), vb.data(), vc.data(), *log_n);
    } catch (const std::bad_alloc&) {
      return fail("hpoly", common::host_memory_refused("the H polynomial's transforms",
                                                       kernels::cpu::hpoly_host_bytes(*log_n))
                               .what());
    }
  }
  for (auto* v : {&va, &vb, &vc}) std::vector<Fr>().swap(*v);
  if (!write_elements(*out, h, error)) {
    std::cerr << "stoker hpoly: " << error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int ntt_command(int argc, char** argv) {
  return with_memory_guard("ntt", [&] { return ntt(argc, argv); });
}

int hpoly_command(int argc, char** argv) {
  return with_memory_guard("hpoly", [&] { return hpoly(argc, argv); });
}

}  // namespace stoker::tools
