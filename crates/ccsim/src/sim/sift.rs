//! The sifts of the two binary min-heaps on unique `u128` keys: the event queue's
//! ([`super::min_heap`]) and the timer slots' indexed heap ([`super::timers`]), one
//! implementation for both.
//!
//! They move a hole rather than swapping entries: each entry passed moves one level,
//! once, and the entry being placed stays in registers and is written once, at its
//! final place. Keys are unique, so any correct min-heap pops the same sequence.

/// A binary min-heap's storage as the sifts see it: the keys by index, and how an
/// entry moves into a hole (the timer heap also records where each slot's entry is).
pub(super) trait HeapStore {
    type Item: Copy;
    fn heap_len(&self) -> usize;
    fn key_at(&self, i: usize) -> u128;
    fn key_of(e: &Self::Item) -> u128;
    /// Move the entry at `from` into the hole at `to`.
    fn move_entry(&mut self, from: usize, to: usize);
    /// Write `e` into the hole at `i`.
    fn put(&mut self, i: usize, e: Self::Item);
}

/// Place `e` at or above the hole `i`.
#[inline(always)]
pub(super) fn sift_up<H: HeapStore>(h: &mut H, mut i: usize, e: H::Item) {
    let key = H::key_of(&e);
    while i > 0 {
        let parent = (i - 1) / 2;
        if h.key_at(parent) <= key {
            break;
        }
        h.move_entry(parent, i);
        i = parent;
    }
    h.put(i, e);
}

/// Place `e` at or below the hole `i`.
#[inline(always)]
pub(super) fn sift_down<H: HeapStore>(h: &mut H, mut i: usize, e: H::Item) {
    let key = H::key_of(&e);
    let n = h.heap_len();
    loop {
        let left = 2 * i + 1;
        if left >= n {
            break;
        }
        let right = left + 1;
        let child = if right < n && h.key_at(right) < h.key_at(left) { right } else { left };
        if key <= h.key_at(child) {
            break;
        }
        h.move_entry(child, i);
        i = child;
    }
    h.put(i, e);
}
