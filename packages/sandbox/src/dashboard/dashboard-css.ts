/** The dashboard's styles: readable at 1280x800, visible keyboard focus, light and dark. */
export const DASHBOARD_CSS = `:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a;
  --line: #d0d7de; --panel: #f6f8fa; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1;
  --line: #30363d; --panel: #161b22; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --accent: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
code, .num, time { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; z-index: 1; }
.top { display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; padding: 10px 20px;
  border-bottom: 1px solid var(--line); background: var(--panel); }
.top h1 { font-size: 18px; margin: 0; }
.live { color: var(--ok); font-weight: 600; }
.live.down { color: var(--bad); }
#message { margin: 0; flex: 1; text-align: right; }
#message.error { color: var(--bad); }
main, .notice { padding: 8px 20px 24px; }
.notice h2 { color: var(--bad); }
h2 { font-size: 15px; margin: 14px 0 6px; }
.grid aside { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 2.6fr); gap: 24px; }
.scroll { overflow-x: auto; max-height: 300px; overflow-y: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
thead th { font-size: 12px; color: var(--muted); font-weight: 600; position: sticky; top: 0; background: var(--bg); }
.user-id, .delivery-id, .webhook { overflow-wrap: anywhere; }
th .user-id { display: inline-block; min-width: 10ch; }
.signals, .traits, .events { font-size: 12.5px; max-width: 260px; }
.tier, .badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 12px;
  border: 1px solid currentColor; }
.tier-low, .delivered, .ok { color: var(--ok); }
.tier-medium, .pending { color: var(--warn); }
.tier-high, .failed, .bad { color: var(--bad); }
.spark { display: block; }
.spark polyline { fill: none; stroke: var(--accent); stroke-width: 1.5; }
.spark circle { fill: var(--accent); }
.spark .threshold { stroke: var(--bad); stroke-dasharray: 3 3; stroke-width: 1; }
button { font: inherit; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); color: var(--fg); cursor: pointer; white-space: nowrap; }
button:hover:not(:disabled) { border-color: var(--accent); }
button:disabled { opacity: 0.5; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; }
.buttons { display: flex; gap: 6px; flex-wrap: wrap; }
.filters { display: flex; gap: 16px; margin-bottom: 8px; }
input, select { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line);
  border-radius: 6px; padding: 2px 6px; }
.delivery { border: 1px solid var(--line); border-radius: 8px; padding: 6px 10px; margin-bottom: 8px; }
.delivery header { display: flex; gap: 10px; align-items: flex-start; }
.delivery header .summary { display: flex; gap: 10px; flex-wrap: wrap; align-items: center;
  flex: 1 1 auto; min-width: 0; }
.delivery header button { flex: none; white-space: nowrap; }
.delivery .webhook { margin: 2px 0 4px; color: var(--muted); font-size: 12.5px; }
.tries td, .tries th { font-size: 12.5px; padding: 2px 8px; }
.note, .empty { color: var(--muted); }
.chaos { color: var(--warn); font-weight: 600; }
`;
