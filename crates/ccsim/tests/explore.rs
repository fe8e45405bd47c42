mod common;
use common::*;
use ccsim::units::secs;

#[test]
#[ignore]
fn explore() {
    let cca = std::env::var("CCA").unwrap_or("reno".into());
    let n: usize = std::env::var("N").map(|v| v.parse().unwrap()).unwrap_or(1);
    let buf: f64 = std::env::var("BUF").map(|v| v.parse().unwrap()).unwrap_or(1.0);
    let loss: f64 = std::env::var("LOSS").map(|v| v.parse().unwrap()).unwrap_or(0.0);
    let rate: u64 = std::env::var("RATE").map(|v| v.parse().unwrap()).unwrap_or(100);
    let rtt: u64 = std::env::var("RTT").map(|v| v.parse().unwrap()).unwrap_or(100);
    let dur: u64 = std::env::var("DUR").map(|v| v.parse().unwrap()).unwrap_or(30);
    let mut cfg = dumbbell(rate, &[rtt], buf);
    cfg.duration_ns = secs(dur);
    // Refutable once the topology grows more shapes than the dumbbell.
    #[allow(irrefutable_let_patterns)]
    if let ccsim::config::TopologyConfig::Dumbbell(d) = &mut cfg.topology { d.bottleneck.loss = loss; }
    for _ in 0..n { cfg.flows.push(flow(0, &cca, 0)); }
    // An exploration tool reports its own wall time; the engine never reads the clock.
    #[allow(clippy::disallowed_methods)]
    let t = std::time::Instant::now();
    let out = ccsim::run(&cfg).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let g = goodputs(&cfg, &out);
    println!("wall {wall:.2}s stats {:?}", out.stats);
    println!("goodput Mbps {:?} sum {:.1} jain {:.3}", g.iter().map(|v| (v/1e6*10.0).round()/10.0).collect::<Vec<_>>(), g.iter().sum::<f64>()/1e6, jain(&g));
    let f = &out.flows;
    println!("retrans {:?} lost {:?} reductions {:?} rtos {:?} undos {:?}", f.u64s("segs_retrans"), f.u64s("segs_lost"), f.u64s("cwnd_reductions"), f.u64s("rtos"), f.u64s("undos"));
    let ts = &out.flow_ts;
    let cw = ts.u64s("cwnd_pkts"); let tm = ts.u64s("time_ns");
    let step = (cw.len() / 30).max(1);
    let s: Vec<String> = (0..cw.len()).step_by(step).map(|i| format!("{:.1}:{}", tm[i] as f64/1e9, cw[i])).collect();
    println!("cwnd {}", s.join(" "));
    let q = out.queue_ts.u64s("backlog_pkts");
    let s: Vec<String> = (0..q.len()).step_by((q.len()/30).max(1)).map(|i| format!("{}", q[i])).collect();
    println!("queue {}", s.join(" "));
    assert_conservation(&out);
}

#[test]
#[ignore]
fn explore_bbr_model() {
    let cca = std::env::var("CCA").unwrap_or("bbr1".into());
    let buf: f64 = std::env::var("BUF").map(|v| v.parse().unwrap()).unwrap_or(4.0);
    let mut cfg = dumbbell(100, &[100], buf);
    cfg.duration_ns = secs(12);
    cfg.flows.push(flow(0, &cca, 0));
    let out = ccsim::run(&cfg).unwrap();
    let ts = &out.flow_ts;
    let (t, bw, pr, cw, inf, mr) = (ts.u64s("time_ns"), ts.f64s("cc_bw_bps"), ts.u64s("pacing_rate_bps"), ts.u64s("cwnd_pkts"), ts.u64s("inflight_pkts"), ts.f64s("cc_min_rtt_ns"));
    let g = ts.f64s("cc_pacing_gain");
    let q = out.queue_ts.u64s("backlog_pkts");
    let st = match ts.column("cc_state").unwrap() { ccsim::trace::Column::Dict{codes, values} => codes.iter().map(|&c| values[c as usize].clone()).collect::<Vec<_>>(), _ => panic!() };
    for i in (0..t.len()).step_by(4) {
        println!("t={:.1} {} bw={:.1} pacing={:.1} gain={:.2} cwnd={} inflight={} minrtt={:.1} q={}", t[i] as f64/1e9, st[i], bw[i]/1e6, pr[i] as f64/1e6, g[i], cw[i], inf[i], mr[i]/1e6, q[2*i]);
    }
    println!("max pending events {}", out.stats.max_pending_events);
}
