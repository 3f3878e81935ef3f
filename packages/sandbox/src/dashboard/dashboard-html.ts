/**
 * The dashboard page. It holds no data and no inline script or style (the Content-Security-Policy
 * forbids both); `main.js` fills it in.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>churn-risk sandbox</title>
<link rel="stylesheet" href="/dashboard/app.css">
<script type="module" src="/dashboard/js/main.js"></script>
</head>
<body>
<a class="skip" href="#deliveries-title">Skip to the delivery log</a>
<header class="top">
  <h1>churn-risk sandbox</h1>
  <span id="live" class="live" hidden></span>
  <span id="counts"></span>
  <p id="message" role="status" aria-live="polite"></p>
</header>
<section id="key-missing" class="notice" hidden>
  <h2>API key missing</h2>
  <p>This page reads the sandbox's API key from the URL fragment. Open the dashboard URL that
  <code>churn-risk sandbox</code> printed; it ends in <code>#key=sk_test_...</code>.</p>
</section>
<section id="key-rejected" class="notice" hidden>
  <h2>API key rejected</h2>
  <p>The sandbox refused the key in the URL fragment (401). Open the dashboard URL that
  <code>churn-risk sandbox</code> printed for this run.</p>
</section>
<main id="app" hidden>
  <div class="grid">
    <section aria-labelledby="users-title" class="users">
      <h2 id="users-title">Users</h2>
      <div id="users"></div>
    </section>
    <aside>
      <section aria-labelledby="clock-title">
        <h2 id="clock-title">Clock</h2>
        <div id="clock"></div>
      </section>
      <section aria-labelledby="watches-title">
        <h2 id="watches-title">Watches</h2>
        <div id="watches"></div>
      </section>
    </aside>
  </div>
  <section aria-labelledby="deliveries-title">
    <h2 id="deliveries-title" tabindex="-1">Delivery log</h2>
    <div class="filters">
      <label>State <select id="filter-status">
        <option value="">all</option><option>pending</option><option>delivered</option><option>failed</option>
      </select></label>
      <label>User <input id="filter-user" type="search" placeholder="user id" autocomplete="off"></label>
    </div>
    <div id="deliveries"></div>
  </section>
</main>
</body>
</html>
`;
