/** The page's styles: inline under the page's nonce, system fonts, light and dark. */
export const PAGE_CSS = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--card:#f6f8fa;--bad:#cf222e;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--bg:#0d1117;--card:#161b22;--bad:#ff7b72;--ok:#3fb950}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1100px;padding:16px;font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px 16px}
h1{font-size:20px;margin:0}h2{font-size:15px;margin:0 0 6px}
.kind,#updated,.meta,.toolbar span,.pager span{color:var(--muted)}
.ok{color:var(--ok)}.bad{color:var(--bad);font-weight:600}
#counts dl{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.count{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:96px;background:var(--card)}
.count dt{font-size:12px;text-transform:capitalize;color:var(--muted)}.count dd{margin:0;font-size:22px;font-weight:600}
.count.hot{border-color:var(--bad)}.count.hot dd{color:var(--bad)}
#status{min-height:1.4em;margin:4px 0}
.toolbar,.pager{display:flex;gap:12px;align-items:center;margin:8px 0}
.confirm{border:1px solid var(--bad);border-radius:6px;padding:12px 16px;max-width:32em;color:var(--fg);background:var(--bg)}.confirm p{margin:0 0 12px}
.confirm::backdrop{background:rgb(0 0 0/.4)}.note{color:var(--muted);margin:4px 0}
button{font:inherit;padding:3px 12px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg);cursor:pointer}
button:disabled{opacity:.5;cursor:default}button.danger{border-color:var(--bad);color:var(--bad)}
.alerts{list-style:none;padding:0;margin:0}
.alert{border:1px solid var(--line);border-radius:6px;padding:10px 12px;margin:8px 0}
.head{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:baseline}.head button{margin-left:auto}
.tier{color:var(--muted)}
pre{white-space:pre-wrap;word-break:break-word;margin:6px 0;font:12px/1.4 ui-monospace,monospace}
.error{color:var(--bad);background:var(--card);padding:6px 8px;border-radius:4px}
.meta{display:flex;flex-wrap:wrap;gap:2px 16px;margin:4px 0;font-size:12px}
details pre{background:var(--card);padding:8px;border-radius:4px}
.summary{border:1px solid var(--line);border-radius:6px;padding:8px 12px}.summary ul{margin:0;padding-left:18px}
.empty{border:1px dashed var(--line);border-radius:6px;padding:24px;text-align:center;color:var(--muted)}
`;
