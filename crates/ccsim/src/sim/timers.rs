//! Timer slots: at most one pending event per slot (a flow's sender timer, its
//! receiver timer, a shaping link's poll), kept in an indexed binary heap so that
//! re-arming a slot moves its one entry instead of leaving a stale one behind.
//!
//! Keys are the same `(time << 64) | seq` as the main event queue's and take their
//! sequence numbers from the same counter, so the queue pops timers and ordinary
//! events interleaved in exactly (time, seq) order.

/// A slot's position in the heap when it has no pending timer.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Armed<E> {
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

    /// Arm `slot` at `key`, replacing its pending timer if it has one.
    pub(super) fn set(&mut self, slot: u32, key: u128, event: E) {
        if self.pos.len() <= slot as usize {
            self.pos.resize(slot as usize + 1, NONE);
        }
        let armed = Armed { key, slot, event };
        match self.pos[slot as usize] {
            NONE => {
                self.heap.push(armed);
                self.sift_up(self.heap.len() - 1);
            }
            i => {
                let old = self.heap[i as usize].key;
                self.heap[i as usize] = armed;
                if key < old {
                    self.sift_up(i as usize);
                } else {
                    self.sift_down(i as usize);
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
        let last = self.heap.len() - 1;
        self.heap.swap(i, last);
        let gone = self.heap.pop().expect("non-empty");
        self.pos[gone.slot as usize] = NONE;
        if i < self.heap.len() {
            // The entry moved in from the end may belong above or below `i`.
            let moved = self.heap[i].slot as usize;
            self.pos[moved] = i as u32;
            self.sift_up(i);
            if self.pos[moved] == i as u32 {
                self.sift_down(i);
            }
        }
        gone
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].key <= self.heap[i].key {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
        self.pos[self.heap[i].slot as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < n && self.heap[l].key < self.heap[least].key {
                least = l;
            }
            if r < n && self.heap[r].key < self.heap[least].key {
                least = r;
            }
            if least == i {
                break;
            }
            self.swap(i, least);
            i = least;
        }
        self.pos[self.heap[i].slot as usize] = i as u32;
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].slot as usize] = a as u32;
        self.pos[self.heap[b].slot as usize] = b as u32;
    }
}
