//! `ccbench._core`: the thin PyO3 binding of the ccsim engine. Only conversions
//! live here: a JSON config in, columnar tables out as NumPy arrays (strings as
//! dictionary codes + values), so no per-row Python objects are created.

mod pycca;

use numpy::IntoPyArray;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use ccsim::trace::{Column, Table};
use ccsim::{Control, Progress};

/// The engine's version string.
#[pyfunction]
fn engine_version() -> &'static str {
    ccsim::VERSION
}

/// JSON list of the registered CCAs: name, family (and what it means), summary,
/// reference, params.
#[pyfunction]
fn list_ccas() -> PyResult<String> {
    let list: Vec<serde_json::Value> = ccsim::cc::list()
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name,
                "family": c.family,
                "family_doc": ccsim::cc::registry::FAMILIES
                    .iter()
                    .find(|(f, _)| *f == c.family)
                    .map_or("", |(_, d)| *d),
                "summary": c.summary,
                "reference": c.reference,
                "params": (c.params)(),
            })
        })
        .collect();
    serde_json::to_string(&list).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Raise ValueError if `name` is not a CCA or `params_json` is not valid for it.
#[pyfunction]
fn check_cca(name: &str, params_json: &str) -> PyResult<()> {
    let params: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("CCA parameters are not JSON: {e}")))?;
    ccsim::cc::build(name, &params).map(|_| ()).map_err(PyValueError::new_err)
}

fn column_to_py<'py>(py: Python<'py>, c: Column) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Column::U64(v) => v.into_pyarray(py).into_any(),
        Column::I64(v) => v.into_pyarray(py).into_any(),
        Column::F64(v) => v.into_pyarray(py).into_any(),
        Column::Bool(v) => v.into_pyarray(py).into_any(),
        Column::Dict { codes, values } => {
            let codes = codes.into_pyarray(py).into_any();
            let values = PyList::new(py, values)?.into_any();
            PyTuple::new(py, [codes, values])?.into_any()
        }
    })
}

/// Streamed chunks that may wait for the writer thread besides the one it is writing.
/// None: the engine hands a full chunk over directly and waits only if the writer is
/// still on the previous one, so at most two chunks of a table are in memory at once
/// (one being written, one growing in the engine).
const SINK_QUEUE: usize = 0;

/// Hand one streamed chunk to the Python `sink`, unless an earlier chunk failed (the
/// run is stopping then, and the first error is the one raised).
fn call_sink(sink: &PyObject, name: &'static str, table: Table, error: &Mutex<Option<PyErr>>) {
    if error.lock().map_or(true, |e| e.is_some()) {
        return;
    }
    let outcome = Python::with_gil(|py| sink.call1(py, (name, table_to_py(py, table)?)).map(|_| ()));
    if let (Err(e), Ok(mut slot)) = (outcome, error.lock()) {
        *slot = Some(e);
    }
}

fn table_to_py<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        d.set_item(name, column_to_py(py, col)?)?;
    }
    Ok(d)
}

/// Run a resolved experiment config (JSON). Returns {"tables": {...}, "stats": {...},
/// "interrupted": bool}. Raises ValueError for an invalid config and RuntimeError if
/// the engine fails.
///
/// The GIL is released while the engine runs. Every `progress_interval_s` of wall
/// time (checked every few thousand events) it is taken back briefly to run Python's
/// signal handlers, so Ctrl-C raises KeyboardInterrupt within a fraction of a second,
/// and to call `progress(sim_time_ns, duration_ns, events_processed)`. An exception
/// from either stops the run and is raised, unless `keep_partial` is set and it is a
/// KeyboardInterrupt: then the tables so far are returned with "interrupted": True.
/// When the recorded samples and events exceed `max_recorded_bytes`, the run stops
/// with MemoryError naming the budget (instead of an allocation failure later).
///
/// With `sink`, the tables that grow with simulated time (`flow_ts`, `queue_ts`,
/// `sojourn`, `events`) are handed over while the run goes: whenever one holds
/// `chunk_rows` rows or more after a sample, `sink(name, columns)` receives them (the
/// columns as in "tables") and the engine lets them go; the returned tables hold the
/// rows after the last chunk. An exception from `sink` stops the run and is raised.
/// `sink` runs on a writer thread of its own (unless the run has Python CCAs), so the
/// conversion and Parquet writes it does are not in `engine_cpu_s` and the engine goes
/// on simulating meanwhile; the run returns only once the sink has had every chunk,
/// in order.
///
/// `python_ccas` maps each `python:` CCA name of the config to a factory
/// `factory(params_json) -> ccbench.Cca`. A run with Python CCAs keeps the GIL (their
/// hooks need it on every ACK); the first hook that fails stops the run with
/// `CcaError` naming the CCA, flow, hook and simulated time, caused by the user's
/// exception.
// Wall-clock reads are forbidden in the engine (clippy.toml) so results cannot depend
// on them; the binding paces Python callbacks by wall time, which only decides *when*
// the engine is asked to go on, never what it computes.
#[allow(clippy::disallowed_methods)]
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, keep_partial=false, max_recorded_bytes=None, progress_interval_s=0.1, python_ccas=None, sink=None, chunk_rows=262_144))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<PyObject>,
    keep_partial: bool,
    max_recorded_bytes: Option<u64>,
    progress_interval_s: f64,
    python_ccas: Option<Bound<'py, PyDict>>,
    sink: Option<PyObject>,
    chunk_rows: usize,
) -> PyResult<Bound<'py, PyDict>> {
    load_numpy_api(py)?;
    let text = config_json.to_owned();
    let interval = Duration::from_secs_f64(progress_interval_s.clamp(0.0, 3600.0));
    let mut pending: Option<PyErr> = None;
    let mut over_budget: Option<Progress> = None;
    let factories: Vec<(String, PyObject)> = match &python_ccas {
        Some(d) => d.iter().map(|(k, v)| Ok((k.extract::<String>()?, v.unbind()))).collect::<PyResult<_>>()?,
        None => Vec::new(),
    };
    let failure: pycca::Failure = Arc::new(Mutex::new(None));
    let sink_error: Mutex<Option<PyErr>> = Mutex::new(None);
    let mut work = || std::thread::scope(|scope| {
        // The chunks go to a writer thread, which takes the GIL to call `sink`; the
        // engine waits only when the writer is a chunk behind. A run with Python CCAs
        // holds the GIL on the engine thread, so there the engine calls `sink` itself
        // (a full queue would otherwise wait for a writer waiting for the GIL).
        let (sink_ref, error) = (&sink, &sink_error);
        let (queue, writer) = match sink_ref {
            Some(sink) if factories.is_empty() => {
                let (tx, rx) = std::sync::mpsc::sync_channel::<(&'static str, Table)>(SINK_QUEUE);
                (Some(tx), Some(scope.spawn(move || rx.into_iter().for_each(|(n, t)| call_sink(sink, n, t, error)))))
            }
            _ => (None, None),
        };
        let mut deliver = move |name: &'static str, table: Table| match (&queue, sink_ref) {
            // A send fails only if the writer thread is gone (it panicked): its join reports it.
            (Some(queue), _) => drop(queue.send((name, table))),
            (None, Some(sink)) => call_sink(sink, name, table, error),
            (None, None) => {}
        };
        let mut external = |flow: usize, name: &str, params: &serde_json::Value| {
            let Some((_, factory)) = factories.iter().find(|(n, _)| n == name) else {
                return Err(format!("no Python class was given for '{name}'"));
            };
            Python::with_gil(|py| pycca::PyCca::build(py, factory.bind(py), name, flow, params, failure.clone()))
        };
        let mut last = Instant::now();
        let mut control = |p: &Progress| -> Control {
            if failure.lock().map_or(true, |f| f.is_some()) || sink_error.lock().map_or(true, |e| e.is_some()) {
                return Control::Stop;
            }
            if max_recorded_bytes.is_some_and(|limit| p.recorded_bytes > limit) {
                over_budget = Some(*p);
                return Control::Stop;
            }
            if last.elapsed() < interval {
                return Control::Continue;
            }
            last = Instant::now();
            Python::with_gil(|py| {
                let outcome = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb.call1(py, (p.sim_time_ns, p.duration_ns, p.events_processed)).map(|_| ()),
                    None => Ok(()),
                });
                match outcome {
                    Ok(()) => Control::Continue,
                    Err(e) => {
                        pending = Some(e);
                        Control::Stop
                    }
                }
            })
        };
        let cpu0 = thread_cpu_s();
        let out = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let spill = sink.as_ref().map(|_| ccsim::trace::spill::Spill { chunk_rows, sink: &mut deliver });
            ccsim::run_json_streaming(&text, &mut control, Some(&mut external), spill)
        }));
        let cpu = thread_cpu_s() - cpu0;
        drop(deliver); // closes the queue: the writer ends after the last chunk
        if writer.is_some_and(|w| w.join().is_err()) {
            if let Ok(mut slot) = sink_error.lock() {
                slot.get_or_insert_with(|| PyRuntimeError::new_err("the thread writing streamed tables panicked"));
            }
        }
        (out, cpu)
    });
    let (result, engine_cpu_s) = if factories.is_empty() { py.allow_threads(work) } else { work() };
    if let Some(err) = failure.lock().ok().and_then(|mut f| f.take()) {
        return Err(err);
    }
    if let Some(err) = sink_error.lock().ok().and_then(|mut e| e.take()) {
        return Err(err);
    }
    let out = match result {
        Ok(Ok(out)) => out,
        Ok(Err(msg)) => return Err(PyValueError::new_err(msg)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            return Err(PyRuntimeError::new_err(format!("engine internal error (please report): {msg}")));
        }
    };
    if let Some(p) = over_budget {
        return Err(PyMemoryError::new_err(format!(
            "the recorded samples and events reached {} MB at simulated time {:.3} s, over the budget of {} MB",
            p.recorded_bytes / 1_000_000,
            p.sim_time_ns as f64 / 1e9,
            max_recorded_bytes.unwrap_or(0) / 1_000_000
        )));
    }
    if let Some(err) = pending {
        if !(keep_partial && err.is_instance_of::<PyKeyboardInterrupt>(py)) {
            return Err(err);
        }
    }
    let tables = PyDict::new(py);
    let named = ccsim::trace::schema::named_tables(out.flows, out.flow_ts, out.queue_ts, out.events, out.links, out.sojourn);
    for (name, table) in named {
        tables.set_item(name, table_to_py(py, table)?)?;
    }
    let stats = PyDict::new(py);
    for (k, v) in out.stats.entries() {
        stats.set_item(k, v)?;
    }
    let d = PyDict::new(py);
    d.set_item("tables", tables)?;
    d.set_item("stats", stats)?;
    d.set_item("engine_cpu_s", engine_cpu_s)?;
    d.set_item("interrupted", out.interrupted)?;
    Ok(d)
}

/// Makes rust-numpy look up NumPy's C API now, before the engine starts. It does so on
/// first use, importing NumPy's C-API module, and panics if that import raises. Left to
/// the first table conversion (in the streaming sink, or at the end of the run), a
/// Ctrl-C arriving then raised KeyboardInterrupt inside that import and the user saw
/// "engine internal error" instead of an interruption. (Not at module import: importing
/// the engine must not load NumPy; see tests/test_startup.py.)
fn load_numpy_api(py: Python<'_>) -> PyResult<()> {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        let _ = Vec::<u8>::new().into_pyarray(py);
    }))
    .map_err(|panic| {
        let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        if msg.contains("KeyboardInterrupt") {
            PyKeyboardInterrupt::new_err(())
        } else {
            PyRuntimeError::new_err(format!("NumPy's C API could not be loaded: {msg}"))
        }
    })
}

/// CPU seconds used so far by the calling thread (`CLOCK_THREAD_CPUTIME_ID`): the
/// engine runs on the caller's thread, so the difference around a run is that run's
/// own CPU time, not inflated by other threads of the process (parallel runs, the
/// Python side).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux and
    // macOS both provide.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The engine's reading of one qdisc configuration (JSON in, JSON out): every field it
/// leaves out filled with the engine's default, so tests can check that the spec's
/// defaults are the engine's.
#[pyfunction]
fn qdisc_config(config_json: &str) -> PyResult<String> {
    let q: ccsim::config::QdiscConfig =
        serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("not a qdisc configuration: {e}")))?;
    serde_json::to_string(&q).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// JSON description of a run's results, from the engine's own recorder: `{"tables":
/// [{name, columns: [{name, type}]}], "stats": [key], "header_bytes": n,
/// "udp_header_bytes": n}`, tables and columns in the order a run writes them.
#[pyfunction]
fn result_schema() -> String {
    ccsim::trace::schema::result_schema_json().to_string()
}

/// JSON Schema of the resolved configuration `run` accepts (`ccsim::config::json_schema`):
/// every field with its type, whether it is required and the engine's default.
#[pyfunction]
fn config_schema() -> String {
    ccsim::config::json_schema().to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(engine_version, m)?)?;
    m.add_function(wrap_pyfunction!(list_ccas, m)?)?;
    m.add_function(wrap_pyfunction!(check_cca, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_config, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    pycca::register(m)?;
    Ok(())
}
