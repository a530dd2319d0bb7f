//! Zobrist keys, fixed at compile time so that hashes are stable across runs and machines.

/// Largest count of one colour that a pool or a capture rack can hold (10 black marbles).
pub(crate) const MAX_COUNT: usize = 16;

pub(crate) struct Keys {
    /// XORed in for every ring that has been *removed*, so the start position hashes the same on
    /// every board shape apart from the other fields.
    pub removed: [u64; 64],
    pub marble: [[u64; 64]; 3],
    pub pool: [[u64; MAX_COUNT]; 3],
    pub captures: [[[u64; MAX_COUNT]; 3]; 2],
    pub turn: u64,
    pub chain: [u64; 64],
}

const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn build() -> Keys {
    let mut s = 0x5A45_5254_5A5A_4B45u64;
    let mut k = Keys {
        removed: [0; 64],
        marble: [[0; 64]; 3],
        pool: [[0; MAX_COUNT]; 3],
        captures: [[[0; MAX_COUNT]; 3]; 2],
        turn: 0,
        chain: [0; 64],
    };
    let mut i = 0;
    while i < 64 {
        k.removed[i] = splitmix(&mut s);
        k.chain[i] = splitmix(&mut s);
        let mut c = 0;
        while c < 3 {
            k.marble[c][i] = splitmix(&mut s);
            c += 1;
        }
        i += 1;
    }
    let mut c = 0;
    while c < 3 {
        let mut n = 0;
        while n < MAX_COUNT {
            k.pool[c][n] = splitmix(&mut s);
            k.captures[0][c][n] = splitmix(&mut s);
            k.captures[1][c][n] = splitmix(&mut s);
            n += 1;
        }
        c += 1;
    }
    k.turn = splitmix(&mut s);
    k
}

pub(crate) static KEYS: Keys = build();
