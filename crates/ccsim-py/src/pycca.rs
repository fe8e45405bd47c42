//! User CCAs written in Python: [`PyCca`] implements the engine's
//! `CongestionControl` trait by calling the hooks of a `ccbench.Cca` subclass.
//!
//! Each hook call copies the connection state into one [`TcpView`] per flow (a
//! Python object the hook reads and writes), calls the method, and copies the
//! writable fields back after checking them. Only the hooks the class overrides are
//! called, so a Python Reno costs one call per ACK (`cong_avoid`) plus one per loss.
//!
//! A hook that raises, or returns or sets a bad value, does not unwind through the
//! engine: the error (CCA, flow, hook, simulated time, the user's traceback) goes into
//! the run's shared [`Failure`] slot, every later hook of every Python CCA is a no-op,
//! and the binding's control callback stops the run at its next check.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::PyTypeInfo;
use rand::Rng;

use ccsim::cc::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, RateSample, TcpState};
use ccsim::sim::SimRng;

pyo3::create_exception!(
    ccbench._core,
    CcaError,
    pyo3::exceptions::PyRuntimeError,
    "A Python CCA raised, or returned or set a bad value, during a run."
);

/// The first error of any Python CCA in a run, shared by the run's CCAs and its
/// control callback.
pub type Failure = Arc<Mutex<Option<PyErr>>>;

/// `&'static str` for a name the engine keeps as such (CCA names, trace states):
/// each distinct string is leaked once per process, so the cost is bounded by the
/// number of distinct names, not by the number of runs or samples.
fn intern_static(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().expect("name table");
    if let Some(known) = names.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The largest window a Python CCA may set (Linux keeps `snd_cwnd` in a u32 but
/// `TCP_INFINITE_SSTHRESH` = 2^31 − 1 is the largest meaningful value).
const MAX_WINDOW: i64 = ccsim::cc::INFINITE_SSTHRESH as i64;

fn window_value(field: &str, v: &Bound<'_, PyAny>, min: i64) -> PyResult<u32> {
    let n: i64 = int_value(field, v)?;
    if !(min..=MAX_WINDOW).contains(&n) {
        return Err(PyValueError::new_err(format!("tp.{field} must be an int in [{min}, {MAX_WINDOW}] packets, got {n}")));
    }
    Ok(n as u32)
}

fn int_value(field: &str, v: &Bound<'_, PyAny>) -> PyResult<i64> {
    if !v.is_instance_of::<pyo3::types::PyInt>() || v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{field} must be an int, got {} ({})",
            v.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
            v.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
        )));
    }
    v.extract::<i64>().map_err(|_| PyValueError::new_err(format!("{field} is out of range: {v}")))
}

/// The connection state a Python hook sees as `tp`: a copy of the engine's `TcpState`
/// taken before the hook, whose writable fields (checked by their setters) and random
/// stream are copied back after it. Windows are in packets, times in integer
/// nanoseconds, rates in bytes per second.
#[pyclass(module = "ccbench._core", name = "TcpState")]
pub struct TcpView(TcpState);

impl TcpView {
    fn new() -> Self {
        use rand::SeedableRng;
        TcpView(TcpState::new(1, 1, 1, false, SimRng::seed_from_u64(0)))
    }

    fn load(&mut self, tp: &TcpState) {
        self.0.clone_from(tp);
    }

    /// Copy the writable fields and the random stream back.
    fn store(&self, tp: &mut TcpState) {
        tp.cwnd = self.0.cwnd;
        tp.ssthresh = self.0.ssthresh;
        tp.cwnd_cnt = self.0.cwnd_cnt;
        tp.pacing_rate = self.0.pacing_rate;
        tp.rng.clone_from(&self.0.rng);
    }
}

#[pymethods]
impl TcpView {
    /// Congestion window (packets); settable, an int in [1, 2^31 − 1].
    #[getter]
    fn cwnd(&self) -> u32 {
        self.0.cwnd
    }
    #[setter]
    fn set_cwnd(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.cwnd = window_value("cwnd", v, 1)?;
        Ok(())
    }
    /// Slow-start threshold (packets); 2^31 − 1 until the first congestion event.
    #[getter]
    fn ssthresh(&self) -> u32 {
        self.0.ssthresh
    }
    #[setter]
    fn set_ssthresh(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.ssthresh = window_value("ssthresh", v, 1)?;
        Ok(())
    }
    /// Sub-packet additive-increase counter (Linux `snd_cwnd_cnt`).
    #[getter]
    fn cwnd_cnt(&self) -> u32 {
        self.0.cwnd_cnt
    }
    #[setter]
    fn set_cwnd_cnt(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.cwnd_cnt = window_value("cwnd_cnt", v, 0)?;
        Ok(())
    }
    /// Pacing rate in bytes per second (used when the flow paces).
    #[getter]
    fn pacing_rate(&self) -> u64 {
        self.0.pacing_rate
    }
    #[setter]
    fn set_pacing_rate(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = int_value("tp.pacing_rate", v)?;
        if n < 0 {
            return Err(PyValueError::new_err(format!("tp.pacing_rate must be >= 0 bytes/s, got {n}")));
        }
        self.0.pacing_rate = n as u64;
        Ok(())
    }
    /// Congestion state: "open", "disorder", "cwr", "recovery" or "loss".
    #[getter]
    fn ca_state(&self) -> &'static str {
        self.0.ca_state.name()
    }
    /// Windowed minimum RTT (ns), or None before the first RTT sample.
    #[getter]
    fn min_rtt(&self) -> Option<u64> {
        (self.0.min_rtt != u64::MAX).then_some(self.0.min_rtt)
    }
    /// Whether the flow is application-limited now.
    #[getter]
    fn app_limited(&self) -> bool {
        self.0.app_limited != 0
    }
    /// `cwnd < ssthresh` (Linux `tcp_in_slow_start`).
    fn in_slow_start(&self) -> bool {
        self.0.in_slow_start()
    }
    /// A uniform draw in [0, 1) from this flow's seeded random stream: the only
    /// randomness a CCA may use if runs are to be reproducible.
    fn random(&mut self) -> f64 {
        self.0.rng.gen::<f64>()
    }
    #[getter]
    fn cwnd_clamp(&self) -> u32 {
        self.0.cwnd_clamp
    }
    #[getter]
    fn now(&self) -> u64 {
        self.0.now
    }
    #[getter]
    fn mss(&self) -> u32 {
        self.0.mss
    }
    #[getter]
    fn prior_cwnd(&self) -> u32 {
        self.0.prior_cwnd
    }
    #[getter]
    fn packets_out(&self) -> u32 {
        self.0.packets_out
    }
    #[getter]
    fn in_flight(&self) -> u32 {
        self.0.in_flight
    }
    #[getter]
    fn retrans_out(&self) -> u32 {
        self.0.retrans_out
    }
    #[getter]
    fn delivered(&self) -> u64 {
        self.0.delivered
    }
    #[getter]
    fn delivered_ce(&self) -> u64 {
        self.0.delivered_ce
    }
    #[getter]
    fn lost(&self) -> u64 {
        self.0.lost
    }
    #[getter]
    fn delivered_time(&self) -> u64 {
        self.0.delivered_time
    }
    /// Smoothed RTT (ns); 0 before the first sample.
    #[getter]
    fn srtt(&self) -> u64 {
        self.0.srtt
    }
    #[getter]
    fn is_cwnd_limited(&self) -> bool {
        self.0.is_cwnd_limited
    }
    #[getter]
    fn pacing_enabled(&self) -> bool {
        self.0.pacing_enabled
    }
}

/// The delivery-rate sample of one ACK (the engine's `RateSample`); counts in
/// packets, times in ns.
#[pyclass(module = "ccbench._core", frozen, name = "RateSample")]
pub struct PyRateSample(RateSample);

#[pymethods]
impl PyRateSample {
    #[getter]
    fn delivered(&self) -> i64 {
        self.0.delivered
    }
    #[getter]
    fn delivered_ce(&self) -> i64 {
        self.0.delivered_ce
    }
    /// Sampling interval (ns); 0 = no valid sample.
    #[getter]
    fn interval(&self) -> u64 {
        self.0.interval
    }
    #[getter]
    fn rtt(&self) -> Option<u64> {
        self.0.rtt
    }
    #[getter]
    fn losses(&self) -> u32 {
        self.0.losses
    }
    #[getter]
    fn acked_sacked(&self) -> u32 {
        self.0.acked_sacked
    }
    #[getter]
    fn prior_in_flight(&self) -> u32 {
        self.0.prior_in_flight
    }
    #[getter]
    fn tx_in_flight(&self) -> u32 {
        self.0.tx_in_flight
    }
    #[getter]
    fn lost(&self) -> u32 {
        self.0.lost
    }
    #[getter]
    fn is_app_limited(&self) -> bool {
        self.0.is_app_limited
    }
    #[getter]
    fn is_retrans(&self) -> bool {
        self.0.is_retrans
    }
    /// Delivery rate in packets per second, or None for an invalid sample.
    #[getter]
    fn delivery_rate(&self) -> Option<f64> {
        self.0.delivery_rate_pps()
    }
}

/// What one ACK did (the engine's `AckSample`): counts in packets, RTT in ns.
#[pyclass(module = "ccbench._core", frozen, name = "AckSample")]
pub struct PyAckSample(AckSample);

#[pymethods]
impl PyAckSample {
    #[getter]
    fn pkts_acked(&self) -> u32 {
        self.0.pkts_acked
    }
    /// Newly delivered packets (cum-acked or SACKed): Linux's `acked` of `cong_avoid`.
    #[getter]
    fn acked_sacked(&self) -> u32 {
        self.0.acked_sacked
    }
    /// RTT sample (ns), or None when only retransmitted data was acked (Karn).
    #[getter]
    fn rtt(&self) -> Option<u64> {
        self.0.rtt
    }
    #[getter]
    fn prior_in_flight(&self) -> u32 {
        self.0.prior_in_flight
    }
    #[getter]
    fn ece(&self) -> bool {
        self.0.ece
    }
    #[getter]
    fn advanced_una(&self) -> bool {
        self.0.advanced_una
    }
    #[getter]
    fn rs(&self) -> PyRateSample {
        PyRateSample(self.0.rs)
    }
}

/// The bound methods of the hooks a Python class overrides (the others are not
/// called: the base class's defaults are the engine's). Bound once per flow, so a
/// call costs no attribute lookup.
#[derive(Default)]
struct Hooks {
    init: Option<Py<PyAny>>,
    ssthresh: Option<Py<PyAny>>,
    cong_avoid: Option<Py<PyAny>>,
    pkts_acked: Option<Py<PyAny>>,
    cong_control: Option<Py<PyAny>>,
    set_state: Option<Py<PyAny>>,
    cwnd_event: Option<Py<PyAny>>,
    undo_cwnd: Option<Py<PyAny>>,
    state: Option<Py<PyAny>>,
}

/// One flow's Python CCA.
pub struct PyCca {
    view: Py<TcpView>,
    name: &'static str,
    flow: usize,
    hooks: Hooks,
    needs_ecn: bool,
    failure: Failure,
}

impl std::fmt::Debug for PyCca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyCca").field("name", &self.name).field("flow", &self.flow).finish()
    }
}

fn ca_event_name(e: CaEvent) -> &'static str {
    match e {
        CaEvent::TxStart => "tx_start",
        CaEvent::CwndRestart => "cwnd_restart",
        CaEvent::CompleteCwr => "complete_cwr",
        CaEvent::Loss => "loss",
        CaEvent::EcnIsCe => "ecn_is_ce",
        CaEvent::EcnNoCe => "ecn_no_ce",
    }
}

impl PyCca {
    /// Instantiate `factory(params_json)` (the front end's constructor of the user's
    /// class) for flow `flow` of CCA `name`.
    pub fn build(
        py: Python<'_>,
        factory: &Bound<'_, PyAny>,
        name: &str,
        flow: usize,
        params: &serde_json::Value,
        failure: Failure,
    ) -> Result<BoxedCca, String> {
        let describe = |e: PyErr| format!("Python CCA '{name}' could not be built: {}", format_error(py, &e));
        let obj = factory.call1((params.to_string(),)).map_err(describe)?;
        let overridden: Vec<String> = obj.call_method0("_ccbench_hooks").and_then(|h| h.extract()).map_err(describe)?;
        let method = |h: &str| -> Result<Option<Py<PyAny>>, String> {
            if !overridden.iter().any(|o| o == h) {
                return Ok(None);
            }
            obj.getattr(h).map(|m| Some(m.unbind())).map_err(describe)
        };
        let hooks = Hooks {
            init: method("init")?,
            ssthresh: method("ssthresh")?,
            cong_avoid: method("cong_avoid")?,
            pkts_acked: method("pkts_acked")?,
            cong_control: method("cong_control")?,
            set_state: method("set_state")?,
            cwnd_event: method("cwnd_event")?,
            undo_cwnd: method("undo_cwnd")?,
            state: method("state")?,
        };
        if hooks.ssthresh.is_none() && hooks.cong_control.is_none() {
            return Err(format!("Python CCA '{name}' must define ssthresh() (or cong_control() for a model-based CCA)"));
        }
        let needs_ecn = obj.getattr("needs_ecn").and_then(|v| v.is_truthy()).map_err(describe)?;
        let view = Py::new(py, TcpView::new()).map_err(describe)?;
        Ok(Box::new(PyCca { view, name: intern_static(name), flow, hooks, needs_ecn, failure }))
    }

    fn failed(&self) -> bool {
        self.failure.lock().map(|f| f.is_some()).unwrap_or(true)
    }

    /// Call `hook(tp, *args)` with `tp` loaded from `tp`, then `result` on its return
    /// value, then copy `tp`'s writable fields back. Returns `None` (and records the
    /// error) if the hook or `result` fails, or if an earlier hook already failed.
    fn call<T>(
        &self,
        hook: &'static str,
        method: &Py<PyAny>,
        tp: &mut TcpState,
        args: impl FnOnce(Python<'_>) -> PyResult<Vec<PyObject>>,
        result: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>,
    ) -> Option<T> {
        if self.failed() {
            return None;
        }
        Python::with_gil(|py| {
            let view = self.view.bind(py);
            view.borrow_mut().load(tp);
            let outcome = (|| {
                let mut call_args: Vec<PyObject> = vec![view.clone().into_any().unbind()];
                call_args.extend(args(py)?);
                let tuple = pyo3::types::PyTuple::new(py, call_args)?;
                let ret = method.bind(py).call1(tuple)?;
                result(&ret)
            })();
            match outcome {
                Ok(value) => {
                    view.borrow().store(tp);
                    Some(value)
                }
                Err(e) => {
                    self.fail(py, hook, tp.now, &e);
                    None
                }
            }
        })
    }

    fn fail(&self, py: Python<'_>, hook: &str, now: u64, err: &PyErr) {
        let message = format!(
            "Python CCA '{}' (flow {}) failed in {}() at simulated time {:.6} s:\n{}",
            self.name,
            self.flow,
            hook,
            now as f64 / 1e9,
            format_error(py, err)
        );
        let wrapped = CcaError::new_err(message);
        wrapped.set_cause(py, Some(err.clone_ref(py)));
        if let Ok(mut slot) = self.failure.lock() {
            slot.get_or_insert(wrapped);
        }
    }

    fn sample_arg(py: Python<'_>, sample: &AckSample) -> PyResult<Vec<PyObject>> {
        Ok(vec![Py::new(py, PyAckSample(*sample))?.into_any()])
    }
}

/// The user's traceback as text (`traceback.format_exception`).
pub fn format_error(py: Python<'_>, err: &PyErr) -> String {
    let formatted = py
        .import("traceback")
        // `into_value` attaches the traceback to the exception object.
        .and_then(|tb| tb.call_method1("format_exception", (err.clone_ref(py).into_value(py),)))
        .and_then(|lines| lines.extract::<Vec<String>>());
    match formatted {
        Ok(lines) => lines.concat().trim_end().to_owned(),
        Err(_) => err.to_string(),
    }
}

fn window_result(hook: &str, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    let n = int_value(&format!("{hook}() return value"), v)?;
    if !(1..=MAX_WINDOW).contains(&n) {
        return Err(PyValueError::new_err(format!("{hook}() must return a window in [1, {MAX_WINDOW}] packets, got {n}")));
    }
    Ok(n as u32)
}

impl CongestionControl for PyCca {
    fn name(&self) -> &'static str {
        self.name
    }

    fn init(&mut self, tp: &mut TcpState) {
        if let Some(m) = &self.hooks.init {
            self.call("init", m, tp, |_| Ok(vec![]), |_| Ok(()));
        }
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        let current = tp.ssthresh;
        match &self.hooks.ssthresh {
            Some(m) => self.call("ssthresh", m, tp, |_| Ok(vec![]), |v| window_result("ssthresh", v)).unwrap_or(current),
            None => current,
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(m) = &self.hooks.cong_avoid {
            self.call("cong_avoid", m, tp, |py| Self::sample_arg(py, sample), |_| Ok(()));
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(m) = &self.hooks.pkts_acked {
            self.call("pkts_acked", m, tp, |py| Self::sample_arg(py, sample), |_| Ok(()));
        }
    }

    fn needs_ecn(&self) -> bool {
        self.needs_ecn
    }

    fn has_cong_control(&self) -> bool {
        self.hooks.cong_control.is_some()
    }

    fn cong_control(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(m) = &self.hooks.cong_control {
            self.call("cong_control", m, tp, |py| Self::sample_arg(py, sample), |_| Ok(()));
        }
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if let Some(m) = &self.hooks.set_state {
            let name = new_state.name();
            self.call("set_state", m, tp, |py| Ok(vec![name.into_pyobject(py)?.into_any().unbind()]), |_| Ok(()));
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if let Some(m) = &self.hooks.cwnd_event {
            let name = ca_event_name(event);
            self.call("cwnd_event", m, tp, |py| Ok(vec![name.into_pyobject(py)?.into_any().unbind()]), |_| Ok(()));
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        let default = tp.cwnd.max(tp.prior_cwnd);
        match &self.hooks.undo_cwnd {
            Some(m) => self.call("undo_cwnd", m, tp, |_| Ok(vec![]), |v| window_result("undo_cwnd", v)).unwrap_or(default),
            None => default,
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let default_state = if tp.in_slow_start() { "slow_start" } else { "cong_avoid" };
        let Some(m) = &self.hooks.state else {
            return CcMetrics { state: default_state, ..Default::default() };
        };
        // `state` only reads: run it on a copy so it cannot change the connection.
        let mut copy = tp.clone();
        let state = self.call("state", m, &mut copy, |_| Ok(vec![]), |v| {
            if !v.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!("state() must return a str, got {}", v.get_type().name()?)));
            }
            Ok(intern_static(&v.extract::<String>()?))
        });
        CcMetrics { state: state.unwrap_or(default_state), ..Default::default() }
    }
}

/// Add this module's classes and exception to `_core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CcaError", CcaError::type_object(m.py()))?;
    m.add_class::<TcpView>()?;
    m.add_class::<PyAckSample>()?;
    m.add_class::<PyRateSample>()?;
    Ok(())
}

