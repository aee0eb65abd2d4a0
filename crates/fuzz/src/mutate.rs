//! Deterministic mutations for the smoke run on the stable toolchain: the byte-level moves
//! libFuzzer makes (flip, set, insert, erase, copy, splice, boundary integers), without its
//! coverage feedback. Seeded, so a failure names an input that reproduces.

/// xorshift64*: small, fast and good enough to pick mutations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Integers at the edges, where length and count fields go wrong.
const INTERESTING: [u64; 12] = [0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 0x7fff_ffff, 0xffff_ffff, 1 << 32, i64::MAX as u64, u64::MAX];

/// Up to four random mutations of `input`, sometimes spliced with `other` (another seed); the
/// result is at most `max_len` bytes.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], max_len: usize) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(8) {
            // Flip a bit.
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            // Set a byte.
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.next_u64() as u8;
            }
            // Insert random bytes.
            2 => {
                let at = rng.below(data.len() + 1);
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                data.splice(at..at, bytes);
            }
            // Erase a run.
            3 if !data.is_empty() => {
                let at = rng.below(data.len());
                let n = 1 + rng.below((data.len() - at).min(64));
                data.drain(at..at + n);
            }
            // Copy a run elsewhere (repeated structures: boxes, chunks, XML elements).
            4 if !data.is_empty() => {
                let from = rng.below(data.len());
                let n = 1 + rng.below((data.len() - from).min(256));
                let run = data[from..from + n].to_vec();
                let at = rng.below(data.len() + 1);
                data.splice(at..at, run);
            }
            // An interesting integer, little or big endian, 1 to 8 bytes wide.
            5 if !data.is_empty() => {
                let value = INTERESTING[rng.below(INTERESTING.len())];
                let width = [1, 2, 4, 8][rng.below(4)];
                let at = rng.below(data.len());
                let bytes = if rng.below(2) == 0 { value.to_le_bytes() } else { value.to_be_bytes() };
                let bytes = if rng.below(2) == 0 { &bytes[..width] } else { &bytes[8 - width..] };
                for (i, b) in bytes.iter().enumerate() {
                    if let Some(slot) = data.get_mut(at + i) {
                        *slot = *b;
                    }
                }
            }
            // Cut the end off.
            6 if !data.is_empty() => data.truncate(rng.below(data.len())),
            // Splice: our head, the other seed's tail.
            _ if !other.is_empty() => {
                let head = rng.below(data.len() + 1);
                let tail = rng.below(other.len());
                data.truncate(head);
                data.extend_from_slice(&other[tail..]);
            }
            _ => {}
        }
    }
    data.truncate(max_len);
    data
}
