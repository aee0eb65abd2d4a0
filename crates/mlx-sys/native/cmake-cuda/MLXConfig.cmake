# find_package(MLX) for mlx-c against the mlx-cuda-12 wheel (build.rs points MLX_DIR here).
#
# The wheel's own MLXConfig.cmake first requires the CUDA toolkit and cuDNN (find_dependency),
# which only code that compiles CUDA, or links libmlx through CMake, needs. mlx-c is plain C++
# against MLX's headers, built as a static library that cargo links, so this takes the wheel's
# imported target alone: a machine with the wheel and no toolkit builds (the CI check does).
include("${CONFAB_MLX_WHEEL_CMAKE_DIR}/MLXTargets.cmake")
get_filename_component(_confab_mlx_prefix "${CONFAB_MLX_WHEEL_CMAKE_DIR}/../../.." ABSOLUTE)
set(MLX_INCLUDE_DIRS "${_confab_mlx_prefix}/include")
set(MLX_LIBRARY_DIRS "${_confab_mlx_prefix}/lib")
set(MLX_LIBRARIES mlx)
set(MLX_FOUND TRUE)
