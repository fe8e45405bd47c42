"""The report's inline CSS and JavaScript (no external assets: the file opens
offline and is safe to mail around)."""

CSS = """
:root { --fg:#1d2127; --muted:#5b6470; --line:#d9dde3; --bg:#fff; --accent:#2b6cb0; --bad:#b42318; --hl:#fff4ce; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; }
header { padding: 18px 28px; border-bottom: 1px solid var(--line); background: #f6f8fa; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header .meta { color: var(--muted); font-size: 12.5px; }
nav { padding: 8px 28px; border-bottom: 1px solid var(--line); font-size: 13px; position: sticky; top: 0;
      background: #fff; z-index: 2; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
main { padding: 8px 28px 40px; max-width: 1400px; }
h2 { margin-top: 28px; border-bottom: 1px solid var(--line); padding-bottom: 4px; font-size: 18px; }
h3 { font-size: 15px; margin-bottom: 6px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 14px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #f0f2f5; text-align: center; }
td.text, th.text { text-align: left; }
tr.failed td { color: var(--bad); }
td.diff { background: var(--hl); font-weight: 600; }
.blocks { display: flex; flex-wrap: wrap; gap: 0 28px; align-items: flex-start; }
.figs { display: flex; flex-wrap: wrap; gap: 14px; }
figure { margin: 0; border: 1px solid var(--line); padding: 6px; background: #fff; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: var(--muted); max-width: 640px; }
pre.spec { background: #f6f8fa; border: 1px solid var(--line); padding: 10px; font-size: 12px; overflow: auto;
           max-height: 420px; }
.note { color: var(--muted); font-size: 12.5px; }
.errors { color: var(--bad); }
.controls label { margin-right: 14px; font-size: 13px; }
.controls select { margin-left: 4px; }
#grid-view table td { min-width: 64px; text-align: center; }
details summary { cursor: pointer; color: var(--accent); }
"""

# The grid view: a heatmap table of one metric over two axes of a sweep, the other
# axes fixed at a chosen value or averaged. Data: one record per run (window.CCB).
GRID_JS = r"""
(function () {
  const D = JSON.parse(document.getElementById('ccb-data').textContent);
  const root = document.getElementById('grid-view');
  if (!root || !D.axes.length) return;
  const sel = (name, options, value) => {
    const s = document.createElement('select'); s.id = 'grid-' + name; s.name = name;
    options.forEach(o => { const e = document.createElement('option'); e.value = o; e.textContent = o; s.appendChild(e); });
    if (value !== undefined) s.value = value; return s;
  };
  const ctl = root.querySelector('.controls');
  const add = (label, s) => { const l = document.createElement('label'); l.textContent = label; l.appendChild(s); ctl.appendChild(l); return s; };
  const metric = add('metric', sel('metric', D.metrics, D.metrics[0]));
  const xs = add('x axis', sel('x', D.axes, D.axes[0]));
  const ys = add('y axis', sel('y', ['(none)'].concat(D.axes), D.axes[1] || '(none)'));
  const fixed = document.createElement('div'); fixed.className = 'controls fixed'; root.insertBefore(fixed, root.querySelector('.out'));
  const values = a => { const seen = []; D.runs.forEach(r => { const v = r[a]; if (v !== null && !seen.includes(v)) seen.push(v); });
    return seen.sort((p, q) => (typeof p === 'number' && typeof q === 'number') ? p - q : String(p).localeCompare(String(q), undefined, {numeric: true})); };
  const fmt = v => (v === null || v === undefined || Number.isNaN(v)) ? '' : (Math.abs(v) >= 1000 || Number.isInteger(v) ? String(Math.round(v * 1000) / 1000) : v.toPrecision(3));
  const color = t => { // viridis-like ramp
    const stops = [[68,1,84],[59,82,139],[33,145,140],[94,201,98],[253,231,37]];
    const x = Math.max(0, Math.min(1, t)) * (stops.length - 1), i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
    const c = stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
    return ['rgb(' + c.join(',') + ')', (c[0] * 0.3 + c[1] * 0.59 + c[2] * 0.11) < 120 ? '#fff' : '#000'];
  };
  function fixedControls() {
    fixed.innerHTML = '';
    D.axes.filter(a => a !== xs.value && a !== ys.value).forEach(a => {
      const l = document.createElement('label'); l.textContent = a;
      const s = sel('fix-' + a, ['(mean)'].concat(values(a).map(String)), '(mean)'); s.dataset.axis = a; s.onchange = draw;
      l.appendChild(s); fixed.appendChild(l);
    });
  }
  function draw() {
    const m = metric.value, x = xs.value, y = ys.value === '(none)' ? null : ys.value;
    const filters = Array.from(fixed.querySelectorAll('select')).filter(s => s.value !== '(mean)');
    const rows = D.runs.filter(r => filters.every(s => String(r[s.dataset.axis]) === s.value));
    const xv = values(x), yv = y ? values(y) : [null];
    const cell = {}, all = [];
    yv.forEach(b => xv.forEach(a => {
      const rs = rows.filter(r => r[x] === a && (y === null || r[y] === b));
      const ok = rs.map(r => r[m]).filter(v => v !== null && !Number.isNaN(v));
      const mean = ok.length ? ok.reduce((p, q) => p + q, 0) / ok.length : null;
      cell[a + '|' + b] = {mean, runs: rs.length, failed: rs.filter(r => r.status !== 'complete').length, n: ok.length};
      if (mean !== null) all.push(mean);
    }));
    const lo = Math.min(...all), hi = Math.max(...all);
    let h = '<table class="grid"><tr><th>' + (y || '') + ' \\ ' + x + '</th>' + xv.map(a => '<th>' + a + '</th>').join('') + '</tr>';
    yv.slice().reverse().forEach(b => {
      h += '<tr><th>' + (b === null ? m : b) + '</th>';
      xv.forEach(a => {
        const c = cell[a + '|' + b];
        if (c.mean === null) { h += '<td class="empty" title="' + c.runs + ' runs, ' + c.failed + ' failed">' + (c.failed ? 'failed' : '—') + '</td>'; return; }
        const [bg, fg] = color(hi > lo ? (c.mean - lo) / (hi - lo) : 0.5);
        h += '<td style="background:' + bg + ';color:' + fg + '" title="mean of ' + c.n + ' of ' + c.runs + ' runs">' + fmt(c.mean) + '</td>';
      });
      h += '</tr>';
    });
    root.querySelector('.out').innerHTML = h + '</table><p class="note">' + rows.length + ' runs; cells average the runs that match; color from ' + fmt(lo) + ' to ' + fmt(hi) + '.</p>';
  }
  [xs, ys].forEach(s => s.onchange = () => { fixedControls(); draw(); });
  metric.onchange = draw;
  fixedControls(); draw();
})();
"""
