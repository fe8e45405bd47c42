//! The binary min-heap behind the event queue while it is small: entries with unique
//! `u128` keys, sifted with a hole. The entry being placed stays in registers and is
//! written once, at its final place, while the entries it passes move one level.
//!
//! `std::collections::BinaryHeap` (the heap used before) replaces its top through
//! `PeekMut`: it stores the new entry at the top, then reads it back as one 16-byte
//! load to start the sift. The load spans two narrower stores that have not reached
//! the cache yet, which the CPU cannot forward: a third of `EventQueue::schedule`'s
//! samples sat on it (`perf annotate`, scenario (c)). Keys are unique, so any correct
//! min-heap pops the same sequence and results do not change. The sifts are
//! [`super::sift`]'s, shared with the timer heap.

use super::sift::{self, HeapStore};

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
        let i = self.v.len();
        self.v.push(e);
        sift::sift_up(self, i, e);
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
    fn sift_down_from(&mut self, i: usize, e: Entry<E>) {
        sift::sift_down(self, i, e);
    }
}

impl<E: Copy> HeapStore for MinHeap<E> {
    type Item = Entry<E>;

    #[inline(always)]
    fn heap_len(&self) -> usize {
        self.v.len()
    }

    #[inline(always)]
    fn key_at(&self, i: usize) -> u128 {
        self.v[i].key
    }

    #[inline(always)]
    fn key_of(e: &Entry<E>) -> u128 {
        e.key
    }

    #[inline(always)]
    fn move_entry(&mut self, from: usize, to: usize) {
        self.v[to] = self.v[from];
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
