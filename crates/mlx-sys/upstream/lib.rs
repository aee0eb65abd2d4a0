// Intentionally empty: this package exists only so cargo fetches mlx-sys 0.7.0.
