//! `ccbench._core`: the thin PyO3 binding of the ccsim engine. Only conversions
//! live here: a JSON config in, columnar tables out as NumPy arrays (strings as
//! dictionary codes + values), so no per-row Python objects are created.

use numpy::IntoPyArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use ccsim::trace::{Column, Table};

/// The engine's version string.
#[pyfunction]
fn engine_version() -> &'static str {
    ccsim::VERSION
}

/// JSON list of the registered CCAs: name, summary, reference, params.
#[pyfunction]
fn list_ccas() -> PyResult<String> {
    let list: Vec<serde_json::Value> = ccsim::cc::list()
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name,
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

fn table_to_py<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        d.set_item(name, column_to_py(py, col)?)?;
    }
    Ok(d)
}

/// Run a resolved experiment config (JSON). Returns {"tables": {...}, "stats": {...}}.
/// Raises ValueError for an invalid config and RuntimeError if the engine fails.
#[pyfunction]
fn run<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let text = config_json.to_owned();
    let result = py.allow_threads(move || std::panic::catch_unwind(|| ccsim::run_json(&text)));
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
    let tables = PyDict::new(py);
    tables.set_item("flows", table_to_py(py, out.flows)?)?;
    tables.set_item("flow_ts", table_to_py(py, out.flow_ts)?)?;
    tables.set_item("queue_ts", table_to_py(py, out.queue_ts)?)?;
    tables.set_item("events", table_to_py(py, out.events)?)?;
    let s = out.stats;
    let stats = PyDict::new(py);
    for (k, v) in [
        ("events_processed", s.events_processed),
        ("data_pkts_sent", s.data_pkts_sent),
        ("data_pkts_delivered", s.data_pkts_delivered),
        ("data_pkts_dropped", s.data_pkts_dropped),
        ("data_pkts_in_network", s.data_pkts_in_network),
        ("ack_pkts_sent", s.ack_pkts_sent),
        ("ack_pkts_delivered", s.ack_pkts_delivered),
        ("ack_pkts_dropped", s.ack_pkts_dropped),
        ("sim_time_ns", s.sim_time_ns),
        ("max_pending_events", s.max_pending_events),
    ] {
        stats.set_item(k, v)?;
    }
    let d = PyDict::new(py);
    d.set_item("tables", tables)?;
    d.set_item("stats", stats)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(engine_version, m)?)?;
    m.add_function(wrap_pyfunction!(list_ccas, m)?)?;
    m.add_function(wrap_pyfunction!(check_cca, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
