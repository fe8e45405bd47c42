//! The binary min-heap behind the event queue while it is small: entries with unique
//! `u128` keys, sifted with a hole. The entry being placed stays in registers and is
//! written once, at its final place, while the entries it passes move one level.
//!
//! `std::collections::BinaryHeap` (the heap used before) replaces its top through
//! `PeekMut`: it stores the new entry at the top, then reads it back as one 16-byte
//! load to start the sift. The load spans two narrower stores that have not reached
//! the cache yet, which the CPU cannot forward: a third of `EventQueue::schedule`'s
//! samples sat on it (`perf annotate`, scenario (c)). Keys are unique, so any correct
//! min-heap pops the same sequence and results do not change.

#[derive(Debug, Clone, Copy)]
pub(super) struct Entry<E> {
    /// `(time << 64) | seq`: unique, and ordered as (time, seq).
    pub key: u128,
    pub event: E,
}

#[derive(Debug)]
pub(super) struct MinHeap<E> {
    v: Vec<Entry<E>>,
}

impl<E> Default for MinHeap<E> {
    fn default() -> Self {
        Self { v: Vec::new() }
    }
}

impl<E: Copy> MinHeap<E> {
    /// A heap of `v`'s entries, in any order.
    pub fn from_vec(v: Vec<Entry<E>>) -> Self {
        let mut h = Self { v };
        for i in (0..h.v.len() / 2).rev() {
            let e = h.v[i];
            h.sift_down_from(i, e);
        }
        h
    }

    pub fn peek(&self) -> Option<&Entry<E>> {
        self.v.first()
    }

    pub fn push(&mut self, e: Entry<E>) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.v[parent].key <= e.key {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.put(i, e);
    }

    /// Replace the minimum by `e` (the heap must not be empty).
    pub fn replace_top(&mut self, e: Entry<E>) {
        self.sift_down_from(0, e);
    }

    pub fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.v.pop()?;
        let Some(&top) = self.v.first() else { return Some(last) };
        self.sift_down_from(0, last);
        Some(top)
    }

    pub fn drain(&mut self) -> std::vec::Drain<'_, Entry<E>> {
        self.v.drain(..)
    }

    /// Put `e` in the hole at `i`, moving smaller children up until it fits.
    fn sift_down_from(&mut self, mut i: usize, e: Entry<E>) {
        let n = self.v.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.v[right].key < self.v[left].key { right } else { left };
            if e.key <= self.v[child].key {
                break;
            }
            self.v[i] = self.v[child];
            i = child;
        }
        self.put(i, e);
    }

    /// `self.v[i] = e`, field by field: a whole-entry copy went through the stack and
    /// read the event back with a load wider than the store that wrote it.
    #[inline(always)]
    fn put(&mut self, i: usize, e: Entry<E>) {
        let slot = &mut self.v[i];
        slot.key = e.key;
        slot.event = e.event;
    }
}
