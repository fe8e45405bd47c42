//! The one list of congestion control algorithms. Adding a CCA = one file under
//! `cc/` plus one line in [`REGISTRY`]; the CLI's `ccbench list ccas`, the spec
//! validation and the generic property tests all read this list.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::BoxedCca;

/// One tunable parameter of a CCA, for `ccbench list ccas`.
#[derive(Debug, Clone, Serialize)]
pub struct ParamInfo {
    pub name: String,
    /// The default, as JSON text.
    pub default: String,
    pub doc: &'static str,
}

/// A registered CCA.
#[derive(Clone, Copy)]
pub struct CcaInfo {
    /// Registry name used in specs ("cubic").
    pub name: &'static str,
    /// Family, for `ccbench list ccas` (one of [`FAMILIES`]).
    pub family: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where it is specified / which implementation it follows.
    pub reference: &'static str,
    /// Its parameters with defaults and docs.
    pub params: fn() -> Vec<ParamInfo>,
    /// Build an instance from a JSON object of parameter overrides (may be empty).
    pub build: fn(&serde_json::Value) -> Result<BoxedCca, String>,
}

impl std::fmt::Debug for CcaInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcaInfo").field("name", &self.name).finish()
    }
}

/// The families `CcaInfo::family` may name, with what they mean (shown by
/// `ccbench describe`): the signal each family reacts to.
pub const FAMILIES: &[(&str, &str)] = &[
    ("loss", "loss-based AIMD: grows until a packet is lost"),
    ("loss/high-speed", "loss-based with faster growth and gentler decrease on large windows"),
    ("delay", "delay-based: holds a small queue, backs off as the RTT grows"),
    ("loss+delay", "hybrid: loss-based with growth or decrease shaped by queueing delay"),
    ("ecn", "reacts to the fraction of ECN-marked packets"),
    ("model", "model-based: paces at an estimate of the bottleneck bandwidth"),
    ("scavenger", "less-than-best-effort: yields to competing traffic"),
    ("rate/learning", "rate-based, online-learning: maximizes a utility of measured rate, loss, delay"),
    ("network", "network-assisted: sets its window from feedback a network element sends it"),
];

/// Every CCA the engine knows, in the order `ccbench list ccas` shows them.
pub static REGISTRY: &[CcaInfo] = &[
    super::reno::INFO,
    super::cubic::INFO,
    super::bbr1::INFO,
    super::bbr2::INFO,
    super::bbr3::INFO,
    super::scalable::INFO,
    super::highspeed::INFO,
    super::bic::INFO,
    super::htcp::INFO,
    super::vegas::INFO,
    super::nv::INFO,
    super::westwood::INFO,
    super::illinois::INFO,
    super::veno::INFO,
    super::yeah::INFO,
    super::cdg::INFO,
    super::hybla::INFO,
    super::dctcp::INFO,
    super::compound::INFO,
    super::ledbat::INFO,
    super::lp::INFO,
    super::copa::INFO,
    super::vivace::INFO,
    super::ncf::INFO,
];

/// The prefix of CCA names the registry does not build: user CCAs written in Python
/// (`python:mypkg.mymod:MyCca`), which the Python binding builds through an
/// [`ExternalCcas`] builder. Spec validation in Rust accepts them unchecked.
pub const EXTERNAL_PREFIX: &str = "python:";

/// Builds the CCAs named with [`EXTERNAL_PREFIX`]: `(flow index, name, params)`.
pub type ExternalCcas<'f> = dyn FnMut(usize, &str, &serde_json::Value) -> Result<BoxedCca, String> + 'f;

/// Whether `name` is left to an [`ExternalCcas`] builder.
pub fn is_external(name: &str) -> bool {
    name.starts_with(EXTERNAL_PREFIX)
}

/// Build flow `flow`'s CCA: from the registry, or through `external` for a
/// `python:` name (an error when there is none, i.e. outside the Python front end).
pub fn build_for_flow(
    flow: usize,
    name: &str,
    params: &serde_json::Value,
    external: Option<&mut ExternalCcas<'_>>,
) -> Result<BoxedCca, String> {
    if !is_external(name) {
        return build(name, params);
    }
    match external {
        Some(builder) => builder(flow, name, params),
        None => Err(format!("'{name}' is a Python CCA: only the Python front end (ccbench) can run it")),
    }
}

/// Look up a CCA by name and build it with `params` (a JSON object, or null).
pub fn build(name: &str, params: &serde_json::Value) -> Result<BoxedCca, String> {
    match REGISTRY.iter().find(|c| c.name == name) {
        Some(info) => (info.build)(params),
        None => Err(format!(
            "unknown CCA '{}'; known: {}",
            name,
            REGISTRY.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// All registered CCAs.
pub fn list() -> &'static [CcaInfo] {
    REGISTRY
}

/// Parse a parameter object into a CCA's `Params` (which must use
/// `#[serde(default, deny_unknown_fields)]`), with an error naming the CCA and field.
pub fn parse_params<P: DeserializeOwned + Default>(
    cca: &str,
    params: &serde_json::Value,
) -> Result<P, String> {
    if params.is_null() {
        return Ok(P::default());
    }
    serde_json::from_value(params.clone()).map_err(|e| format!("parameters of CCA '{cca}': {e}"))
}

/// Describe `P::default()` as a list of parameters, attaching the given docs
/// (`(field, doc)`); fields without a doc get an empty one.
pub fn describe_params<P: Serialize + Default>(docs: &[(&'static str, &'static str)]) -> Vec<ParamInfo> {
    let value = serde_json::to_value(P::default()).expect("params serialize");
    let map = value.as_object().cloned().unwrap_or_default();
    map.into_iter()
        .map(|(name, default)| {
            let doc = docs.iter().find(|(n, _)| *n == name).map(|(_, d)| *d).unwrap_or("");
            ParamInfo { name, default: default.to_string(), doc }
        })
        .collect()
}
