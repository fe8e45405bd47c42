//! Timer slots: at most one pending event per slot (a flow's sender timer, its
//! receiver timer, a shaping link's poll), kept in an indexed binary heap so that
//! re-arming a slot moves its one entry instead of leaving a stale one behind.
//!
//! Keys are the same `(time << 64) | seq` as the main event queue's and take their
//! sequence numbers from the same counter, so the queue pops timers and ordinary
//! events interleaved in exactly (time, seq) order.

use super::sift::{self, HeapStore};

/// A slot's position in the heap when it has no pending timer.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub(super) struct Armed<E> {
    key: u128,
    slot: u32,
    event: E,
}

#[derive(Debug)]
pub(super) struct TimerHeap<E> {
    heap: Vec<Armed<E>>,
    /// Index in `heap` of each slot's entry, or [`NONE`].
    pos: Vec<u32>,
}

impl<E> Default for TimerHeap<E> {
    fn default() -> Self {
        Self { heap: Vec::new(), pos: Vec::new() }
    }
}

impl<E: Copy> TimerHeap<E> {
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(super) fn min_key(&self) -> Option<u128> {
        self.heap.first().map(|a| a.key)
    }

    /// The key of `slot`'s pending timer, if it has one.
    pub(super) fn key_of(&self, slot: u32) -> Option<u128> {
        match self.pos.get(slot as usize) {
            Some(&i) if i != NONE => Some(self.heap[i as usize].key),
            _ => None,
        }
    }

    /// The event of the earliest timer (a look-ahead: the run loop prefetches the
    /// state it will touch).
    pub(super) fn min_event(&self) -> Option<E> {
        self.heap.first().map(|a| a.event)
    }

    /// Arm `slot` at `key`, replacing its pending timer if it has one.
    pub(super) fn set(&mut self, slot: u32, key: u128, event: E) {
        if self.pos.len() <= slot as usize {
            self.pos.resize(slot as usize + 1, NONE);
        }
        let armed = Armed { key, slot, event };
        match self.pos[slot as usize] {
            NONE => {
                let i = self.heap.len();
                self.heap.push(armed);
                self.sift_up(i, armed);
            }
            i => {
                let i = i as usize;
                if key < self.heap[i].key {
                    self.sift_up(i, armed);
                } else {
                    self.sift_down(i, armed);
                }
            }
        }
    }

    /// Disarm `slot`; returns whether it had a pending timer.
    pub(super) fn cancel(&mut self, slot: u32) -> bool {
        match self.pos.get(slot as usize) {
            Some(&i) if i != NONE => {
                self.remove_at(i as usize);
                true
            }
            _ => false,
        }
    }

    /// Take the earliest timer.
    pub(super) fn pop(&mut self) -> Option<(u128, E)> {
        if self.heap.is_empty() {
            return None;
        }
        let top = self.remove_at(0);
        Some((top.key, top.event))
    }

    fn remove_at(&mut self, i: usize) -> Armed<E> {
        let gone = self.heap[i];
        let last = self.heap.pop().expect("non-empty");
        self.pos[gone.slot as usize] = NONE;
        if i < self.heap.len() {
            // The last entry fills the hole; it may belong above or below `i`.
            if i > 0 && last.key < self.heap[(i - 1) / 2].key {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
        gone
    }

    /// Place `e` at or above the hole `i`.
    fn sift_up(&mut self, i: usize, e: Armed<E>) {
        sift::sift_up(self, i, e);
    }

    /// Place `e` at or below the hole `i`.
    fn sift_down(&mut self, i: usize, e: Armed<E>) {
        sift::sift_down(self, i, e);
    }
}

/// The sifts ([`super::sift`]) keep `pos` up to date: each entry passed has its
/// slot's position written once, and so has `e`, at its final place.
impl<E: Copy> HeapStore for TimerHeap<E> {
    type Item = Armed<E>;

    #[inline(always)]
    fn heap_len(&self) -> usize {
        self.heap.len()
    }

    #[inline(always)]
    fn key_at(&self, i: usize) -> u128 {
        self.heap[i].key
    }

    #[inline(always)]
    fn key_of(e: &Armed<E>) -> u128 {
        e.key
    }

    #[inline(always)]
    fn move_entry(&mut self, from: usize, to: usize) {
        let a = self.heap[from];
        self.pos[a.slot as usize] = to as u32;
        self.heap[to] = a;
    }

    #[inline(always)]
    fn put(&mut self, i: usize, e: Armed<E>) {
        self.pos[e.slot as usize] = i as u32;
        self.heap[i] = e;
    }
}
