//! A small deterministic PRNG (SplitMix64). Our own rather than `rand`: the sequence for a seed
//! must never change (a seed in a report must reproduce its kernel in any later build, and the
//! build script and the test must draw the same kernels), and `rand` documents that its
//! generators' outputs may change between versions; it also keeps the build script free of
//! dependencies. proptest's shrinking works on its own value trees, not on a kernel AST that
//! must stay well typed, so the shrinker is our own too.

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    /// The seed of item `index` of a run with seed `seed` (kernel `index` is reproducible alone).
    pub fn derive(seed: u64, index: u64) -> u64 {
        let mut r = Rng(seed.wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        r.next_u64() ^ index
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: bias below 2^-32 for the small n used here.
        ((self.next_u64() >> 32) * n) >> 32
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u32) -> bool {
        self.below(100) < p as u64
    }
    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    /// An index chosen with the given weights (not all zero).
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < w as u64 {
                return i;
            }
            x -= w as u64;
        }
        weights.len() - 1
    }
}
