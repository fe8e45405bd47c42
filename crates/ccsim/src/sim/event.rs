//! Event queue ordered by (time, insertion sequence), so ties break deterministically
//! in the order events were scheduled. Events are small `Copy` values naming a
//! component; components keep their own packet FIFOs and schedule only their next
//! event, so the queue holds O(components) entries, not O(packets).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::units::Time;

#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(Time, u64, Entry<E>)>>,
    next_seq: u64,
    now: Time,
}

/// Wrapper that excludes the payload from ordering: (time, seq) is already unique.
#[derive(Debug, Clone, Copy)]
struct Entry<E>(E);
impl<E> PartialEq for Entry<E> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self { heap: BinaryHeap::new(), next_seq: 0, now: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Current simulated time: the time of the last event popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `event` at `at`. Scheduling in the past is a logic error; in release
    /// builds the event fires "now" so time still never goes backwards.
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        let at = at.max(self.now);
        self.heap.push(Reverse((at, self.next_seq, Entry(event))));
        self.next_seq += 1;
    }

    /// Pop the next event, advancing `now`. Time is monotone by construction.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let Reverse((t, _, Entry(e))) = self.heap.pop()?;
        assert!(t >= self.now, "time went backwards: {} < {}", t, self.now);
        self.now = t;
        Some((t, e))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_in_scheduling_order_and_time_is_monotone() {
        let mut q = EventQueue::new();
        q.schedule(10, 'b');
        q.schedule(5, 'a');
        q.schedule(10, 'c');
        q.schedule(7, 'x');
        let mut last = 0;
        let mut order = vec![];
        while let Some((t, e)) = q.pop() {
            assert!(t >= last);
            last = t;
            order.push(e);
        }
        assert_eq!(order, vec!['a', 'x', 'b', 'c']);
    }
}
