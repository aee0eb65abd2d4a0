// Which instruction set the CPU kernels' tiles use (cpu_linear.cpp, cpu_attention.cpp): the
// widest this CPU runs, capped by CONFAB_CPU_ISA (`avx2` or `portable`), read once.
//
// Why a cap: most CPUs have no AVX-512 (AMD before Zen 4, Intel's desktop parts), and Apple
// silicon's CPU runs the portable loops; the cap lets an AVX-512 machine measure and test those
// paths too (the kernel tests run every path). Every kernel picks its tiles through `isa()`,
// so one value holds for the whole process.
#pragma once

#include <cstdlib>
#include <cstring>

namespace confab_cpu {

enum class Isa { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

// The widest instruction set this CPU runs (AVX2 and AVX-512 with FMA), uncapped.
inline Isa isa_of_this_cpu() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("fma")) return Isa::kPortable;
  if (__builtin_cpu_supports("avx512f")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2")) return Isa::kAvx2;
#endif
  return Isa::kPortable;
}

// The cap CONFAB_CPU_ISA names (none when unset or not understood: the Rust side warns).
inline Isa isa_cap() {
  const char* value = std::getenv("CONFAB_CPU_ISA");
  if (value == nullptr) return Isa::kAvx512;
  if (std::strcmp(value, "portable") == 0) return Isa::kPortable;
  if (std::strcmp(value, "avx2") == 0) return Isa::kAvx2;
  return Isa::kAvx512;
}

// The instruction set the kernels use, chosen once per process (an inline function's static
// is one object across both kernel files).
inline Isa isa() {
  static const Isa chosen = [] {
    const Isa cpu = isa_of_this_cpu(), cap = isa_cap();
    return static_cast<int>(cpu) < static_cast<int>(cap) ? cpu : cap;
  }();
  return chosen;
}

}  // namespace confab_cpu
