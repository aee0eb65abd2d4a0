/* Force-included into the mlx-c build (and bindgen) off aarch64. Two gaps in mlx-c there:
 *
 * 1. mlx-c declares its float16/bfloat16 accessors only where the compiler has native half
 *    types (arm64). mlx-rs needs them everywhere. They only move 16-bit patterns around, so
 *    16-bit storage types are enough; on the Rust side float16_t is a newtype over u16.
 * 2. GCC 12's libstdc++ has no std::format, which mlx-c uses only for error messages. */
#ifndef CONFAB_MLX_C_COMPAT_H
#define CONFAB_MLX_C_COMPAT_H

#include <stdint.h>

#if !defined(__aarch64__) && !defined(HAS_FLOAT16)
#define HAS_FLOAT16
#define HAS_BFLOAT16
typedef uint16_t float16_t;
typedef uint16_t bfloat16_t;
#endif

#ifdef __cplusplus
#include <version>
#ifndef __cpp_lib_format
#include <sstream>
#include <string>
#include <string_view>
namespace std {
/* Enough of std::format for "{}" placeholders, which is all mlx-c uses. */
template <class... Args>
inline string format(string_view pattern, const Args&... args) {
  ostringstream out;
  size_t at = 0;
  auto next = [&](const auto& value) {
    size_t hole = pattern.find("{}", at);
    if (hole == string_view::npos) return;
    out << pattern.substr(at, hole - at) << value;
    at = hole + 2;
  };
  (next(args), ...);
  out << pattern.substr(at);
  return out.str();
}
}  // namespace std
#endif
#endif

#endif
