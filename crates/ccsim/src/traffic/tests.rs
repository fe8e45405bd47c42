use super::*;
use crate::units::secs;

fn group(arrival: Arrival, count: u64) -> FlowConfig {
    let mut f: FlowConfig = serde_json::from_value(serde_json::json!({
        "sender": 0, "cca": "reno", "start_ns": secs(1), "mss": 1448, "rwnd_bytes": 1 << 20
    }))
    .unwrap();
    f.arrival = arrival;
    f.count = count;
    f
}

fn starts(f: &FlowConfig, seed: u64) -> Vec<Time> {
    let mut src = GroupSource::new(seed, 0, f);
    std::iter::from_fn(|| src.next_start()).collect()
}

#[test]
fn interval_arrivals_are_evenly_spaced_from_the_start() {
    let s = starts(&group(Arrival::Interval { every_ns: secs(25) }, 4), 1);
    assert_eq!(s, vec![secs(1), secs(26), secs(51), secs(76)]);
}

#[test]
fn uniform_arrivals_are_sorted_inside_the_window_and_uniform() {
    let n = 20_000;
    let s = starts(&group(Arrival::Uniform { window_ns: secs(120) }, n), 3);
    assert_eq!(s.len(), n as usize);
    assert!(s.windows(2).all(|w| w[0] <= w[1]));
    assert!(s[0] >= secs(1) && *s.last().unwrap() < secs(121));
    // KS against U[1 s, 121 s).
    let ks = s
        .iter()
        .enumerate()
        .map(|(i, &t)| ((t - secs(1)) as f64 / secs(120) as f64 - (i + 1) as f64 / n as f64).abs())
        .fold(0.0, f64::max);
    assert!(ks < 1.628 / (n as f64).sqrt(), "KS {ks}");
    assert_ne!(s, starts(&group(Arrival::Uniform { window_ns: secs(120) }, n), 4), "seeds differ");
}

#[test]
fn poisson_load_offers_its_target_on_the_wire_within_five_percent() {
    // Small flows opening with a handshake: headers and handshake are ~12 % of the wire.
    let mut f = group(Arrival::PoissonLoad { load_bps: 50e6 }, u64::MAX);
    f.size_dist = Some(EmpiricalDist { points: vec![(100.0, 0.5), (2e3, 0.9), (2e4, 1.0)], interpolation: Interpolation::Linear });
    f.handshake = true;
    let horizon = secs(60);
    let mut src = GroupSource::new(11, 0, &f);
    let (mut wire, mut payload, mut n) = (0u64, 0u64, 0u64);
    let mut gaps = Vec::new();
    let mut prev = f.start_ns;
    while let Some(t) = src.next_start() {
        if t >= f.start_ns + horizon {
            break;
        }
        let size = src.draw(&f).size_bytes.unwrap();
        wire += wire_bytes(&f, size);
        payload += size;
        gaps.push((t - prev) as f64);
        prev = t;
        n += 1;
    }
    let load = wire as f64 * 8.0 / 60.0;
    assert!((load / 50e6 - 1.0).abs() < 0.05, "offered {load} bit/s on the wire over {n} flows");
    // Counting payload only (the old definition) would offer ~12 % more on the wire.
    assert!((payload as f64 / wire as f64) < 0.92, "payload {payload} of {wire} wire bytes");
    assert!((mean_wire_bytes(&f) * n as f64 / wire as f64 - 1.0).abs() < 0.02, "the mean matches the draws");
    // Exponential gaps: the coefficient of variation is 1.
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / mean - 1.0).abs() < 0.05, "cv {}", sd / mean);
}

#[test]
fn wire_bytes_count_each_segments_headers_and_the_handshake() {
    let mut f = group(Arrival::PoissonLoad { load_bps: 1e6 }, 1);
    f.size_bytes = Some(400);
    assert_eq!(wire_bytes(&f, 400), 452, "one segment, no handshake");
    f.handshake = true;
    // The recipe's hping mouse: SYN 60 + ACK 52 + one 452-byte data segment.
    assert_eq!(wire_bytes(&f, 400), 564);
    assert_eq!(mean_wire_bytes(&f), 564.0);
    assert_eq!(wire_bytes(&f, 1449), 1449 + 2 * 52 + 112, "two segments");
}

#[test]
fn the_mix_draws_do_not_move_sizes_or_senders() {
    let mut f = group(Arrival::Poisson { rate_per_s: 100.0 }, 500);
    f.size_dist = Some(EmpiricalDist { points: vec![(1e3, 0.5), (1e6, 1.0)], interpolation: Interpolation::Linear });
    f.sender_mix = vec![SenderShare { sender: 0, fraction: 0.3 }, SenderShare { sender: 1, fraction: 0.7 }];
    let draws = |f: &FlowConfig| {
        let mut src = GroupSource::new(5, 0, f);
        (0..500).map(|_| (src.next_start().unwrap(), src.draw(f))).collect::<Vec<_>>()
    };
    let a = draws(&f);
    f.cca_mix = vec![
        CcaShare { cca: "cubic".into(), cca_params: serde_json::Value::Null, fraction: 0.5 },
        CcaShare { cca: "reno".into(), cca_params: serde_json::Value::Null, fraction: 0.5 },
    ];
    let b = draws(&f);
    for ((ta, da), (tb, db)) in a.iter().zip(&b) {
        assert_eq!((ta, da.size_bytes, da.sender), (tb, db.size_bytes, db.sender));
    }
    let cubic = b.iter().filter(|(_, d)| d.cca == 1).count();
    assert!((200..300).contains(&cubic), "{cubic} of 500 drew the first CCA");
    let s1 = a.iter().filter(|(_, d)| d.sender == 1).count();
    assert!((310..390).contains(&s1), "{s1} of 500 on sender 1");
    assert!(a.iter().all(|(t, _)| *t >= secs(1)) && a.windows(2).all(|w| w[0].0 <= w[1].0));
}

/// The shipped distribution files (python/ccbench/data/distributions): `value p` lines,
/// `#` comments, probabilities in percent when the last is 100.
fn shipped() -> Vec<(String, Vec<(f64, f64)>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccbench/data/distributions");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the distributions folder") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "cdf") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut points: Vec<(f64, f64)> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|l| {
                let mut it = l.split_whitespace().map(|x| x.parse::<f64>().unwrap());
                (it.next().unwrap(), it.next().unwrap())
            })
            .collect();
        if points.last().unwrap().1 == 100.0 {
            points.iter_mut().for_each(|p| p.1 /= 100.0);
        }
        out.push((path.file_stem().unwrap().to_string_lossy().into_owned(), points));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_shipped_distribution_samples_to_its_cdf_by_kolmogorov_smirnov() {
    let all = shipped();
    assert!(all.len() >= 7, "{:?}", all.iter().map(|d| &d.0).collect::<Vec<_>>());
    for (k, (name, points)) in all.into_iter().enumerate() {
        // RTT files are bins (a value per point); flow sizes interpolate linearly.
        let interpolation = if name.contains("rtt") { Interpolation::Step } else { Interpolation::Linear };
        let d = EmpiricalDist { points, interpolation };
        d.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rng = crate::sim::stream(13, crate::sim::rng::Component::FlowSize, k as u64);
        let n = 20_000;
        let mut xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
        xs.sort_by(f64::total_cmp);
        // D_n over the distinct sampled values, from both sides of each (so atoms and
        // steps compare at their jumps); critical value at alpha = 0.01: 1.628/sqrt(n).
        let mut ks: f64 = 0.0;
        let mut i = 0;
        while i < xs.len() {
            let x = xs[i];
            let j = xs.partition_point(|&y| y <= x);
            let below = d.cdf(x - x.abs() * 1e-12 - 1e-12);
            ks = ks.max((below - i as f64 / n as f64).abs()).max((d.cdf(x) - j as f64 / n as f64).abs());
            i = j;
        }
        assert!(ks < 1.628 / (n as f64).sqrt(), "{name}: KS statistic {ks}");
        let mean = xs.iter().sum::<f64>() / n as f64;
        assert!(mean > 0.0 && d.mean() > 0.0, "{name}");
    }
}
