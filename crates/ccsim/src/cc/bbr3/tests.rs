//! BBRv3 registry and defaults. The behavioural v3-vs-v2 tests drive the shared
//! state directly and live next to it, in `cc/bbr2/tests.rs` (`mod v3_vs_v2`).

use super::*;
use crate::cc::bbr2::Mode;

#[test]
fn bbr3_builds_with_v3_defaults() {
    let p = Params::default();
    assert_eq!(p.full_loss_cnt, 6);
    assert_eq!(p.startup_pacing_gain, 710.0 / 256.0);
    assert_eq!(p.startup_cwnd_gain, 2.0);
    assert_eq!(p.probe_down_pacing_gain, 232.0 / 256.0);
    assert_eq!(p.probe_up_cwnd_gain_add, 0.25);
    assert_eq!(p.ecn_reprobe_gain, 0.5);
    // Shared defaults are v2's.
    assert_eq!(p.loss_thresh, 5.0 / 256.0);
    assert_eq!(p.beta, 76.0 / 256.0);
    assert_eq!(p.headroom, 38.0 / 256.0);
    let cca = Bbr2::new(&p).unwrap();
    assert_eq!(cca.version(), Version::V3);
    assert_eq!(cca.mode(), Mode::Startup);

    let built = crate::cc::build("bbr3", &serde_json::json!({"full_loss_cnt": 8})).unwrap();
    assert_eq!(built.name(), "bbr3");
    assert!(crate::cc::build("bbr3", &serde_json::json!({"nope": 1})).is_err());
    let params = (INFO.params)();
    let find = |n: &str| params.iter().find(|p| p.name == n).unwrap().default.clone();
    assert_eq!(find("full_loss_cnt"), "6");
    assert_eq!(find("startup_cwnd_gain"), "2.0");
}
