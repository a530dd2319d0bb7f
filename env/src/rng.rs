//! A tiny deterministic random generator for random play, seeding and tests.

/// SplitMix64 (Steele, Lea and Flood, 2014): 64 bits of state, fast, reproducible everywhere, and
/// good enough to pick moves and seed games. Not for cryptography.
///
/// ```
/// use zertz_env::SplitMix64;
/// let mut rng = SplitMix64(7);
/// let k = rng.below(10);
/// assert!(k < 10);
/// assert_eq!(SplitMix64(7).below(10), k);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`, uniform up to a bias below 2⁻³² (multiply-shift); 0 when `n` is 0.
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}
