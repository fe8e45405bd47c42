//! A vector of a few `Copy` items kept inline, in its owner's cache lines, that moves
//! to the heap only when it outgrows them. The receiver's out-of-order ranges are
//! almost always one or two: with thousands of flows, a `Vec` there was a heap block
//! of its own that every segment of a flow with a hole read after the receiver itself,
//! a dependent cache miss the receiver's prefetch could not cover.

use std::ops::{Deref, DerefMut};

#[derive(Debug, Clone)]
pub(crate) enum InlineVec<T, const N: usize> {
    /// The first `len` items are the vector.
    Inline { len: u8, items: [T; N] },
    /// More than `N` items at some point since the vector was last empty.
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    const FITS: () = assert!(N > 0 && N < u8::MAX as usize);

    pub(crate) fn new() -> Self {
        let () = Self::FITS;
        Self::Inline { len: 0, items: [T::default(); N] }
    }

    /// `Vec::insert`.
    pub(crate) fn insert(&mut self, index: usize, item: T) {
        match self {
            Self::Inline { len, items } if (*len as usize) < N => {
                let n = *len as usize;
                assert!(index <= n, "insertion index {index} past the length {n}");
                items.copy_within(index..n, index + 1);
                items[index] = item;
                *len += 1;
            }
            Self::Inline { .. } => {
                let mut v = Vec::with_capacity(2 * N);
                v.extend_from_slice(self);
                v.insert(index, item);
                *self = Self::Heap(v);
            }
            Self::Heap(v) => v.insert(index, item),
        }
    }

    /// `Vec::remove`.
    pub(crate) fn remove(&mut self, index: usize) -> T {
        let item = match self {
            Self::Inline { len, items } => {
                let n = *len as usize;
                assert!(index < n, "removal index {index} past the length {n}");
                let item = items[index];
                items.copy_within(index + 1..n, index);
                *len -= 1;
                item
            }
            Self::Heap(v) => v.remove(index),
        };
        self.inline_when_empty();
        item
    }

    /// `Vec::retain`.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        match self {
            Self::Inline { len, items } => {
                let mut kept = 0;
                for i in 0..*len as usize {
                    if keep(&items[i]) {
                        items[kept] = items[i];
                        kept += 1;
                    }
                }
                *len = kept as u8;
            }
            Self::Heap(v) => v.retain(keep),
        }
        self.inline_when_empty();
    }

    /// Back inline once empty (the heap block is freed).
    fn inline_when_empty(&mut self) {
        if matches!(self, Self::Heap(v) if v.is_empty()) {
            *self = Self::new();
        }
    }
}

impl<T, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Self::Inline { len, items } => &items[..*len as usize],
            Self::Heap(v) => v,
        }
    }
}

impl<T, const N: usize> DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Self::Inline { len, items } => &mut items[..*len as usize],
            Self::Heap(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InlineVec;
    use crate::sim::SimRng;
    use rand::{Rng, SeedableRng};

    /// Random inserts, removals and retains give the same contents as a `Vec`, across
    /// the move to the heap and back.
    #[test]
    fn behaves_as_a_vec() {
        let mut rng = SimRng::seed_from_u64(7);
        let (mut v, mut w) = (InlineVec::<u64, 2>::new(), Vec::new());
        let mut spilled = 0;
        for step in 0..20_000u64 {
            match rng.gen_range(0..10) {
                0..=4 => {
                    let i = rng.gen_range(0..=w.len());
                    v.insert(i, step);
                    w.insert(i, step);
                }
                5..=7 if !w.is_empty() => {
                    let i = rng.gen_range(0..w.len());
                    assert_eq!(v.remove(i), w.remove(i));
                }
                8 => {
                    let m = rng.gen_range(1..4);
                    v.retain(|x| x % m != 0);
                    w.retain(|x| x % m != 0);
                }
                _ => {}
            }
            assert_eq!(&v[..], &w[..], "step {step}");
            spilled += matches!(v, InlineVec::Heap(_)) as u32;
            assert!(!(matches!(v, InlineVec::Heap(_)) && w.is_empty()), "an empty vector is inline");
        }
        assert!(spilled > 0, "the test never moved the vector to the heap");
    }
}
