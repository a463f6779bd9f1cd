/** The CSS and script of the run page (view-run-html.ts), apart so the page builder stays readable. */

/** Styles of the run page, on top of the trajectory drawing's own. */
export const RUN_PAGE_STYLE = `
.run-page{padding:12px 20px}
.bad{color:#cf222e}
.gates{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:12px}
.gate{background:#fff;border:1px solid #d0d7de;border-left:6px solid #1a7f37;border-radius:6px;padding:8px 14px;min-width:260px;max-width:520px;flex:1 1 300px}
.gate.broken{border-left-color:#cf222e}
.gate h2{margin:0 0 2px;font-size:15px}
.gate p{margin:2px 0}
.rate-value{font-size:26px;font-weight:700}
.gate .counts,.gate .reason{color:#57606a;font-size:13px}
.badge{display:inline-block;font-weight:700;font-size:12px;padding:1px 8px;border-radius:10px}
.badge.met,.badge.all{background:#dafbe1;color:#1a7f37}.badge.missed,.badge.not{background:#ffebe9;color:#cf222e}
.errors{background:#fff;border:1px solid #cf222e;border-radius:6px;padding:8px 14px;margin-bottom:12px}
.filters{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;align-items:center;gap:14px;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;margin-bottom:8px}
.filters .check{padding:0 6px;border-radius:4px}
#shown{margin-left:auto;color:#57606a}
table.units{width:100%;border-collapse:collapse;background:#fff;border:1px solid #d0d7de;font-size:13px}
table.units thead th{position:sticky;top:49px;background:#f6f8fa;z-index:1}
table.units th,table.units td{text-align:left;padding:3px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
table.units .num{text-align:right;font-variant-numeric:tabular-nums}
table.units tr.group th{background:#eaeef2;font-size:13px}
table.units tr.unit:hover{background:#f6f8fa;cursor:pointer}
table.units .src{max-width:260px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#57606a}
table.units .finding-cell{width:50%;max-width:0}
table.units .first{display:block;color:#57606a;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
table.units .verdict{margin:0;font-size:12px}
.verdict.unjudged{background:#eaeef2;color:#57606a}
button.open{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:none;border:0;padding:0;color:#0969da;cursor:pointer;text-align:left}
button.open:hover{text-decoration:underline}
dialog#dag{width:96vw;max-width:1500px;height:92vh;padding:0;border:1px solid #d0d7de;border-radius:8px;background:#f6f8fa}
dialog#dag::backdrop{background:rgba(31,35,40,.45)}
.dag-bar{position:sticky;top:0;z-index:3;display:flex;gap:8px;align-items:center;padding:6px 12px;background:#fff;border-bottom:1px solid #d0d7de}
.dag-nav{display:flex;flex-wrap:wrap;gap:6px;flex:1}
.dag-nav button{font:12px ui-monospace,Menlo,monospace;border:1px solid #d0d7de;border-radius:4px;background:#f6f8fa;padding:2px 8px;cursor:pointer}
.dag-nav button.current{background:#0969da;color:#fff;border-color:#0969da}
.dag-close{margin-left:auto;border:1px solid #d0d7de;border-radius:4px;background:#fff;padding:2px 10px;cursor:pointer}
.dag-head{background:none;border:0;padding:8px 20px 0}
.dag-head h2{font-size:17px;margin:0}
`;

/**
 * The table's filters and the dialog that draws a unit's traces. Every value reaches the page
 * through textContent or attributes written by the builder, escaped.
 */
export const RUN_PAGE_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('toolpath-run').textContent).traces;
  var dialog = document.getElementById('dag');
  var body = dialog.querySelector('.dag-body');
  var nav = dialog.querySelector('.dag-nav');
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.unit'));
  function draw(index) {
    var template = document.getElementById('dag-' + index);
    body.replaceChildren(template.content.cloneNode(true));
    toolpathDag(body, data[index].calls, body.querySelector('#details'));
    nav.querySelectorAll('button').forEach(function (b) { b.classList.toggle('current', b.getAttribute('data-trace') === String(index)); });
  }
  function open(row) {
    var traces = (row.getAttribute('data-traces') || '').split(' ').filter(Boolean);
    if (traces.length === 0) return;
    nav.replaceChildren();
    if (traces.length > 1) {
      traces.forEach(function (t, i) {
        var b = document.createElement('button');
        b.type = 'button';
        b.setAttribute('data-trace', t);
        b.textContent = 'trace ' + (i + 1) + ' of ' + traces.length + ': ' + data[Number(t)].label;
        b.addEventListener('click', function () { draw(Number(t)); });
        nav.appendChild(b);
      });
    }
    draw(Number(traces[0]));
    if (!dialog.open) dialog.showModal();
    history.replaceState(null, '', '#unit-' + (rows.indexOf(row) + 1));
  }
  rows.forEach(function (row) {
    row.addEventListener('click', function () { open(row); });
  });
  dialog.querySelector('.dag-close').addEventListener('click', function () { dialog.close(); });
  dialog.addEventListener('close', function () { body.replaceChildren(); history.replaceState(null, '', location.pathname + location.search); });

  var scenario = document.getElementById('filter-scenario');
  var text = document.getElementById('filter-text');
  var boxes = Array.prototype.slice.call(document.querySelectorAll('input[name=verdict]'));
  var shown = document.getElementById('shown');
  var none = document.getElementById('none-shown');
  function apply() {
    var wanted = scenario.value;
    var verdicts = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var words = text.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row) {
      var search = row.getAttribute('data-search') || '';
      var visible = (wanted === '' || row.getAttribute('data-scenario') === wanted) &&
        verdicts.indexOf(row.getAttribute('data-verdict')) >= 0 &&
        words.every(function (w) { return search.indexOf(w) >= 0; });
      row.hidden = !visible;
      if (visible) count++;
    });
    document.querySelectorAll('table.units tbody').forEach(function (group) {
      group.hidden = !group.querySelector('tr.unit:not([hidden])');
    });
    shown.textContent = count + ' of ' + rows.length + ' shown';
    none.hidden = count > 0;
  }
  scenario.addEventListener('change', apply);
  text.addEventListener('input', apply);
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
  var start = /^#unit-(\\d+)$/.exec(location.hash);
  // 1-based, as the table counts its rows.
  if (start && rows[Number(start[1]) - 1]) open(rows[Number(start[1]) - 1]);
})();
`;
