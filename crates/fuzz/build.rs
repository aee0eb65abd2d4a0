fn main() {
    mlx_rpath::link_libmlx()
}
