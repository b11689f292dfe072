/**
 * The status page: one HTML document, its style and script inline (no build step, no CDN),
 * that polls /status every second and draws it. Keys come from clients (an API key header is
 * anything a client writes), so the script puts them in the page as text nodes only, never as
 * markup.
 */
export const STATUS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hotcount proxy</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d1d1f; background: #fafafa; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; } h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
  .muted { color: #666; } .row { display: flex; gap: 1rem; flex-wrap: wrap; }
  .card { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .6rem .9rem; min-width: 9rem; }
  .card b { display: block; font-size: 1.4rem; }
  table { border-collapse: collapse; background: #fff; margin-right: 1.2rem; }
  td, th { border: 1px solid #ddd; padding: .2rem .6rem; text-align: left; font-variant-numeric: tabular-nums; }
  td.key { font-family: ui-monospace, monospace; max-width: 28rem; overflow-wrap: anywhere; }
  svg { background: #fff; border: 1px solid #ddd; border-radius: 6px; }
  .allowed { color: #2e7d32; } .rate_limited { color: #c62828; } .inflight_limited { color: #ef6c00; }
</style>
</head>
<body>
<h1>hotcount proxy</h1>
<div class="muted" id="summary">connecting...</div>
<div class="row" style="margin-top: .8rem">
  <div class="card"><span class="allowed">allowed /s</span><b id="allowed">-</b></div>
  <div class="card"><span class="rate_limited">rate limited (429) /s</span><b id="rate_limited">-</b></div>
  <div class="card"><span class="inflight_limited">inflight limited (503) /s</span><b id="inflight_limited">-</b></div>
  <div class="card"><span>in progress</span><b id="inflight">-</b></div>
  <div class="card"><span>p50 / p90 / p99, last minute, &plusmn;1%</span><b id="latency">-</b></div>
  <div class="card"><span>upstream p50 / p90 / p99</span><b id="upstream-latency">-</b></div>
  <div class="card"><span>sketch memory</span><b id="memory">-</b></div>
</div>
<h2>Requests per second, last minute</h2>
<svg id="chart" width="720" height="160" viewBox="0 0 720 160" role="img" aria-label="requests per second"></svg>
<div id="limits"></div>
<script>
const OUTCOMES = [['allowed', '#2e7d32'], ['rate_limited', '#c62828'], ['inflight_limited', '#ef6c00']];
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const ms = (v) => v === null ? '-' : v < 10 ? v.toFixed(2) + ' ms' : v.toFixed(0) + ' ms';
const quantiles = (l) => l.p50 === null ? '-' : [l.p50, l.p90, l.p99].map(ms).join(' / ') + ', max ' + ms(l.max);
const bytes = (n) => n >= 1048576 ? (n / 1048576).toFixed(1) + ' MiB' : (n / 1024).toFixed(1) + ' KiB';
function table(caption, head, rows) {
  const t = el('table'); t.append(el('caption', caption));
  const tr = el('tr'); for (const h of head) tr.append(el('th', h)); t.append(tr);
  if (rows.length === 0) { const r = el('tr'); const d = el('td', 'none'); d.colSpan = head.length; r.append(d); t.append(r); }
  for (const row of rows) { const r = el('tr'); row.forEach((v, i) => r.append(el('td', v, i === 0 ? 'key' : ''))); t.append(r); }
  return t;
}
function chart(seconds) {
  const svg = document.getElementById('chart'); const w = 720, h = 160, pad = 4;
  const max = Math.max(1, ...seconds.map((s) => s.allowed + s.rate_limited + s.inflight_limited));
  svg.replaceChildren();
  for (const [name, color] of OUTCOMES) {
    const points = seconds.map((s, i) => [pad + (i * (w - 2 * pad)) / Math.max(1, seconds.length - 1), h - pad - (s[name] / max) * (h - 2 * pad)]);
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', points.map((p) => p.join(',')).join(' '));
    line.setAttribute('fill', 'none'); line.setAttribute('stroke', color); line.setAttribute('stroke-width', '2');
    svg.append(line);
  }
  const label = document.createElementNS('http://www.w3.org/2000/svg', 'text');
  label.setAttribute('x', '8'); label.setAttribute('y', '16'); label.textContent = 'max ' + max + ' /s';
  svg.append(label);
}
function draw(s) {
  const last = s.perSecond[s.perSecond.length - 1] || { allowed: 0, rate_limited: 0, inflight_limited: 0 };
  for (const [name] of OUTCOMES) document.getElementById(name).textContent = last[name];
  document.getElementById('inflight').textContent = s.inflight;
  document.getElementById('memory').textContent = bytes(s.memoryBytes.limits);
  document.getElementById('latency').textContent = quantiles(s.latencyMs.total);
  document.getElementById('upstream-latency').textContent = quantiles(s.latencyMs.upstream);
  document.getElementById('summary').textContent = 'upstream ' + s.upstream + ', up ' + s.uptimeS + ' s; totals: ' +
    s.requests.allowed + ' allowed, ' + s.requests.rate_limited + ' rate limited, ' + s.requests.inflight_limited +
    ' inflight limited; upstream errors: ' + s.upstreamErrors.refused + ' refused, ' + s.upstreamErrors.timeout + ' timed out';
  chart(s.perSecond);
  const box = document.getElementById('limits'); box.replaceChildren();
  for (const l of s.limits) {
    const what = [];
    if (l.rate) what.push(l.rate.limit + ' per ' + l.rate.windowMs + ' ms (' + l.rate.algorithm + ')');
    if (l.inflight) what.push(l.inflight.limit + ' in progress (now ' + l.inflight.inProgress + ')');
    box.append(el('h2', 'Limit "' + l.name + '": ' + what.join(', ') + ', per ' + l.key + ' under ' + l.prefix));
    const bounds = [];
    if (l.errorBound.rate !== null) bounds.push('a count is high by at most ' + l.errorBound.rate.toFixed(1) + ' this window');
    if (l.errorBound.inflight !== null) bounds.push('an inflight count by at most ' + l.errorBound.inflight.toFixed(1));
    box.append(el('div', 'sketches ' + l.sketch.width + ' x ' + l.sketch.depth + ', ' + bytes(l.memoryBytes) +
      ', epsilon ' + l.sketch.epsilon.toExponential(2) + ', delta ' + l.sketch.delta.toExponential(2) +
      (bounds.length ? '; ' + bounds.join(', ') + ' (w.p. 1 - delta)' : ''), 'muted'));
    const row = el('div', undefined, 'row');
    row.append(table('top keys by rate', ['key', 'requests/s'], l.topByRate.map((k) => [k.key, k.perSecond.toFixed(1)])));
    row.append(table('top keys by requests in progress', ['key', 'in progress'], l.topByInflight.map((k) => [k.key, k.inflight])));
    box.append(row);
  }
}
async function poll() {
  try { const r = await fetch('status', { cache: 'no-store' }); draw(await r.json()); }
  catch (e) { document.getElementById('summary').textContent = 'cannot reach the proxy: ' + e.message; }
  setTimeout(poll, 1000);
}
poll();
</script>
</body>
</html>
`;
