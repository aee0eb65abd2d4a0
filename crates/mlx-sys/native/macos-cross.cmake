# Included after project() when mlx-c is compiled for macOS on another OS (the CI cross check).
# CMake learns the macOS version from `sw_vers`, which only a Mac has; without it, it leaves the
# run-time path flag unset and then refuses the wheel's imported `@rpath/libmlx.dylib`.
set(CMAKE_SHARED_LIBRARY_RUNTIME_C_FLAG "-Wl,-rpath,")
set(CMAKE_SHARED_LIBRARY_RUNTIME_CXX_FLAG "-Wl,-rpath,")
