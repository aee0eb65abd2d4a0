// An MLX array whose buffer is allocated and not written: the prefix cache's disk tier reads
// a file's bytes straight into it (src/cache/tensors.rs), so that memory is written once, by
// the read, instead of zeroed first and then overwritten.

#include <cstdio>
#include <exception>

#include "mlx/allocator.h"
#include "mlx/array.h"

namespace mx = mlx::core;

// A new array of `shape` (`ndim` dimensions) in the dtype of `like`, its bytes unwritten:
// *out is an owned mlx::core::array*. 0, or 1 with a message in `err`.
extern "C" int confab_host_array(void** out, const void* like, const int* shape, int ndim, char* err, size_t err_len) {
  try {
    const auto& dtype_of = *static_cast<const mx::array*>(like);
    mx::Shape dims(shape, shape + ndim);
    size_t bytes = dtype_of.itemsize();
    for (int i = 0; i < ndim; i++) {
      bytes *= static_cast<size_t>(shape[i]);
    }
    *out = new mx::array(mx::allocator::malloc(bytes), std::move(dims), dtype_of.dtype());
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(err, err_len, "%s", e.what());
    return 1;
  }
}
