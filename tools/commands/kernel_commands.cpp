// `stoker ntt` and `stoker hpoly`; see kernel_commands.hpp.
#include "tools/commands/kernel_commands.hpp"

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "kernels/field.cuh"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/commands/kernel_args.hpp"
#include "tools/commands/kernel_element_file.hpp"
#include "tools/commands/kernel_gpu.hpp"

namespace stoker::tools {

using kernel_cli::allocate_elements;
using kernel_cli::Args;
using kernel_cli::check_device_room;
using kernel_cli::download;
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

int ntt_command(int argc, char** argv) {
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
  std::vector<Fr> x;
  std::string error;
  if (!read_elements(a.values["--in"], log_n, x, error)) {
    std::cerr << "stoker ntt: " << error << "\n";
    return 1;
  }
  const std::size_t n = x.size();
  if (use_gpu(a)) {
    auto gpu = open_gpu(a);
    if (!gpu) {
      std::cerr << "stoker ntt: " << gpu.error().what() << "\n";
      return 1;
    }
    if (!check_device_room(gpu->device(), n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: 2^" << *log_n << " elements: " << error << "\n";
      return 1;
    }
    auto data = allocate_elements(gpu->device(), n);
    if (!data) {
      std::cerr << "stoker ntt: " << data.error().what() << "\n";
      return 1;
    }
    Fr* d = data->as<Fr>();
    if (upload(*gpu, d, x.data(), n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: " << error << "\n";
      return 1;
    }
    if (auto ec = kernels::gpu::transform(kind, d, d, *log_n, 1, gpu->native())) {
      std::cerr << "stoker ntt: " << ec.message() << "\n";
      return 1;
    }
    if (download(*gpu, x.data(), d, n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: " << error << "\n";
      return 1;
    }
  } else {
    kernels::cpu::transform(kind, x.data(), x.data(), *log_n);
  }
  if (!write_elements(*out, x, error)) {
    std::cerr << "stoker ntt: " << error << "\n";
    return 1;
  }
  return 0;
}

int hpoly_command(int argc, char** argv) {
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
  auto out = OutputFile::check(a.values["--out"]);
  if (!out) return usage("hpoly", "--out: " + out.error().what(), synopsis);
  for (const char* input : {"--a", "--b", "--c"})
    if (Error e = out->not_input("--out", input, a.values[input]))
      return usage("hpoly", e.what(), synopsis);
  std::vector<Fr> va, vb, vc;
  std::string error;
  std::optional<unsigned> log_n;
  if (!read_elements(a.values["--a"], log_n, va, error)) {
    std::cerr << "stoker hpoly: " << error << "\n";
    return 1;
  }
  for (auto [flag, vec] : {std::pair{"--b", &vb}, std::pair{"--c", &vc}}) {
    const auto size = input_size(a.values[flag]);
    if (size && *size != va.size() * 32) {
      std::cerr << "stoker hpoly: size mismatch: " << a.values["--a"] << " has " << va.size() * 32
                << " bytes, " << a.values[flag] << " has " << *size << "\n";
      return 1;
    }
    if (!read_elements(a.values[flag], log_n, *vec, error)) {
      std::cerr << "stoker hpoly: " << error << "\n";
      return 1;
    }
  }
  const std::size_t n = va.size();
  std::vector<Fr> h(n);
  if (use_gpu(a)) {
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
    kernels::cpu::hpoly(h.data(), va.data(), vb.data(), vc.data(), *log_n);
  }
  if (!write_elements(*out, h, error)) {
    std::cerr << "stoker hpoly: " << error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace stoker::tools
