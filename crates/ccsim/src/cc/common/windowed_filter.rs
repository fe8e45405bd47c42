//! Windowed min/max filters: Kathleen Nichols' algorithm as in Linux `lib/minmax.c`,
//! keeping the best, 2nd-best and 3rd-best samples of the window so the extreme can
//! be tracked in O(1) memory. The window is measured in whatever monotone unit the
//! caller uses for `t` (nanoseconds for BBR's min RTT, round-trip counts for its
//! max bandwidth).

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sample {
    t: u64,
    v: u64,
}

#[derive(Debug, Clone, Default)]
struct Minmax {
    s: [Sample; 3],
}

impl Minmax {
    fn reset(&mut self, t: u64, v: u64) -> u64 {
        let s = Sample { t, v };
        self.s = [s, s, s];
        v
    }

    /// As `minmax_subwin_update`: age out samples older than the window.
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // Passed the entire window without a new extreme: promote 2nd and 3rd.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed without a 2nd choice: take one.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed without a 3rd choice: take one.
            self.s[2] = val;
        }
        self.s[0].v
    }

    fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// Windowed maximum over the last `window` units of `t`.
#[derive(Debug, Clone)]
pub struct MaxFilter {
    window: u64,
    mm: Minmax,
}

impl MaxFilter {
    pub fn new(window: u64) -> Self {
        Self { window, mm: Minmax::default() }
    }
    /// Add sample `v` at time `t` (monotone) and return the windowed maximum.
    pub fn update(&mut self, t: u64, v: u64) -> u64 {
        self.mm.running_max(self.window, t, v)
    }
    /// Current maximum (0 before any sample).
    pub fn get(&self) -> u64 {
        self.mm.s[0].v
    }
    /// Forget everything and start from `v` at `t`.
    pub fn reset(&mut self, t: u64, v: u64) {
        self.mm.reset(t, v);
    }
}

/// Windowed minimum over the last `window` units of `t`.
#[derive(Debug, Clone)]
pub struct MinFilter {
    window: u64,
    mm: Minmax,
}

impl MinFilter {
    /// A min filter starts "empty" at `u64::MAX`.
    pub fn new(window: u64) -> Self {
        let mut mm = Minmax::default();
        mm.reset(0, u64::MAX);
        Self { window, mm }
    }
    pub fn update(&mut self, t: u64, v: u64) -> u64 {
        self.mm.running_min(self.window, t, v)
    }
    pub fn get(&self) -> u64 {
        self.mm.s[0].v
    }
    pub fn reset(&mut self, t: u64, v: u64) {
        self.mm.reset(t, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_tracks_max_and_expires_it() {
        let mut f = MaxFilter::new(10);
        assert_eq!(f.update(0, 5), 5);
        assert_eq!(f.update(1, 3), 5);
        assert_eq!(f.update(5, 4), 5);
        // The 5 from t=0 is older than the window at t=11: the best remaining wins.
        let v = f.update(11, 1);
        assert!(v == 4 || v == 3, "expired max should fall back to a later sample, got {v}");
        assert_eq!(f.update(12, 9), 9);
    }

    #[test]
    fn min_filter_tracks_min_and_expires_it() {
        let mut f = MinFilter::new(100);
        assert_eq!(f.get(), u64::MAX);
        assert_eq!(f.update(0, 50), 50);
        assert_eq!(f.update(10, 70), 50);
        assert_eq!(f.update(20, 40), 40);
        assert_eq!(f.update(200, 90), 90);
    }
}
