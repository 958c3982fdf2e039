// The playground page: the API key, the tabs, and one handler per form. Every call goes to this
// server with `Authorization: Bearer <key>`; the crawl status stream gets the key as its WebSocket
// subprotocol (browsers cannot set headers there). The key is never put in a URL.
/* global document, window, localStorage, location, fetch, FormData, WebSocket */
import { documentView, el, fieldChanges, linkList, markdownView, outLink, section, sideBySide, pre } from './views.js';

const KEY_STORAGE = 'gleaner.apiKey';
const $ = (selector, root = document) => root.querySelector(selector);

// ---- The API key ----------------------------------------------------------------------------

const keyInput = $('#api-key');
try {
  keyInput.value = localStorage.getItem(KEY_STORAGE) ?? '';
} catch {
  // storage refused (private mode): the key lives in the field only
}
const saveKey = () => {
  try {
    const key = keyInput.value.trim();
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    // as above
  }
};
keyInput.addEventListener('change', saveKey);
keyInput.addEventListener('input', saveKey);
$('#key-form').addEventListener('submit', (e) => e.preventDefault());
$('#forget-key').addEventListener('click', () => {
  keyInput.value = '';
  saveKey();
  keyInput.focus();
});

class ApiFailure extends Error {}

function apiKey() {
  const key = keyInput.value.trim();
  if (!key) {
    keyInput.focus();
    throw new ApiFailure('Enter your API key first (the "API key" field at the top of the page).');
  }
  return key;
}

/**
 * Calls the API: JSON in (or a FormData), JSON out. A non-2xx answer or `success: false` throws
 * with the server's code and message, unless `lenient` (interact answers 200 with success false
 * when the caller's code failed).
 */
async function api(method, path, body, { lenient = false } = {}) {
  const headers = { authorization: `Bearer ${apiKey()}` };
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, { method, headers, body: payload, cache: 'no-store', credentials: 'omit' });
  } catch (err) {
    throw new ApiFailure(`The server did not answer: ${err.message}`);
  }
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok || (json?.success === false && !lenient)) {
    const code = json?.code ? ` ${json.code}` : '';
    const message = json?.error ?? (text.slice(0, 300) || res.statusText);
    throw new ApiFailure(`${res.status}${code}: ${message}`);
  }
  return json;
}

// ---- Tabs -----------------------------------------------------------------------------------

const tabs = [...document.querySelectorAll('[role="tab"]')];
function selectTab(tab, { focus = false, remember = true } = {}) {
  for (const t of tabs) {
    const selected = t === tab;
    t.setAttribute('aria-selected', String(selected));
    t.tabIndex = selected ? 0 : -1;
    document.getElementById(t.getAttribute('aria-controls')).hidden = !selected;
  }
  if (focus) tab.focus();
  if (remember) window.history.replaceState(null, '', `#${tab.id.slice(4)}`);
}
for (const [i, tab] of tabs.entries()) {
  tab.addEventListener('click', () => selectTab(tab));
  tab.addEventListener('keydown', (e) => {
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    selectTab(tabs[(to + tabs.length) % tabs.length], { focus: true });
  });
}
const initial = tabs.find((t) => `#${t.id.slice(4)}` === location.hash) ?? tabs[0];
selectTab(initial, { remember: false });
window.addEventListener('hashchange', () => {
  const tab = tabs.find((t) => `#${t.id.slice(4)}` === location.hash);
  if (tab) selectTab(tab, { remember: false });
});

// ---- Shared form plumbing -------------------------------------------------------------------

/** The status line, error box and results box of a panel. */
function parts(panel) {
  return { status: $('.status', panel), error: $('.error', panel), results: $('.results', panel) };
}

/**
 * Runs `work` for a panel: its status says what is going on, its buttons are disabled meanwhile,
 * and a failure lands in its alert box (announced).
 */
async function run(panel, busyText, work) {
  const { status, error } = parts(panel);
  const buttons = [...panel.querySelectorAll('button')].filter((b) => !b.disabled);
  error.textContent = '';
  status.textContent = busyText;
  panel.setAttribute('aria-busy', 'true');
  for (const b of buttons) b.disabled = true;
  try {
    status.textContent = (await work()) ?? '';
  } catch (err) {
    status.textContent = '';
    error.textContent = err instanceof ApiFailure ? err.message : `Something went wrong: ${err.message}`;
  } finally {
    panel.removeAttribute('aria-busy');
    for (const b of buttons) if (b.isConnected) b.disabled = false;
  }
}

const numberOr = (input, fallback) => {
  const n = Number(input.value);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
};

// ---- Scrape ---------------------------------------------------------------------------------

const scrapePanel = $('#panel-scrape');
const jsonBox = $('#scrape-json');
const promptBox = $('#scrape-prompt');
jsonBox.addEventListener('change', () => (promptBox.disabled = !jsonBox.checked));
let lastScrapeId = '';

$('#scrape-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const { results } = parts(scrapePanel);
  const formats = [...form.querySelectorAll('input[name="format"]:checked')].map((box) =>
    box.value === 'json' ? { type: 'json', prompt: promptBox.value.trim() || undefined } : box.value,
  );
  const body = {
    url: form.url.value.trim(),
    formats: formats.length ? formats : ['markdown'],
    onlyMainContent: form.onlyMainContent.checked,
  };
  run(scrapePanel, 'Scraping…', async () => {
    results.replaceChildren();
    const answer = await api('POST', '/v2/scrape', body);
    const doc = answer.data ?? {};
    lastScrapeId = doc.metadata?.scrapeId ?? lastScrapeId;
    if (lastScrapeId) $('#interact-id').value = lastScrapeId;
    results.replaceChildren(...documentView(doc, { warning: answer.warning }));
    return `Scraped ${doc.metadata?.url ?? body.url} (${doc.metadata?.statusCode ?? '?'}).`;
  });
});

// ---- Map ------------------------------------------------------------------------------------

const mapPanel = $('#panel-map');
$('#map-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const { results } = parts(mapPanel);
  const body = { url: form.url.value.trim(), limit: numberOr(form.limit, 100) };
  if (form.search.value.trim()) body.search = form.search.value.trim();
  run(mapPanel, 'Mapping…', async () => {
    results.replaceChildren();
    const answer = await api('POST', '/v2/map', body);
    const links = answer.links ?? [];
    results.replaceChildren(section(`Links (${links.length})`, 3, linkList(links)));
    return `Found ${links.length} links.`;
  });
});

// ---- Crawl ----------------------------------------------------------------------------------

const crawlPanel = $('#panel-crawl');
const progress = $('#crawl-progress');
const crawlCount = $('#crawl-count');
const crawlPages = $('#crawl-pages');
const cancelButton = $('#crawl-cancel');
let crawl = null;

/** The live state of the crawl being watched: pages shown once each, the progress bar. */
function crawlState(id) {
  const seen = new Set();
  const state = {
    id,
    stopped: false,
    socket: null,
    total: 0,
    completed: 0,
    status: 'scraping',
    page(doc) {
      const key = doc.metadata?.scrapeId ?? doc.metadata?.url ?? JSON.stringify(doc.metadata);
      if (seen.has(key)) return;
      seen.add(key);
      const url = doc.metadata?.url ?? doc.metadata?.sourceURL ?? '';
      const title = doc.metadata?.title || url;
      const details = el('details', {}, el('summary', {}, title, ' ', el('span', { className: 'note', text: url })));
      details.addEventListener(
        'toggle',
        () => {
          if (details.open && typeof doc.markdown === 'string')
            details.append(markdownView(doc.markdown, `Markdown of ${url}`));
        },
        { once: true },
      );
      crawlPages.append(el('li', {}, details));
      $('#crawl-pages-heading').hidden = false;
      state.show();
    },
    update(status) {
      if (status.total !== undefined) state.total = status.total;
      if (status.completed !== undefined) state.completed = status.completed;
      if (status.status) state.status = status.status;
      state.show();
    },
    show() {
      const done = Math.max(state.completed, seen.size);
      const total = Math.max(state.total, done, 1);
      progress.max = total;
      progress.value = done;
      progress.setAttribute('aria-valuetext', `${done} of ${state.total || '?'} pages`);
      crawlCount.textContent = `${done} of ${state.total || '?'} pages · ${state.status}`;
    },
  };
  return state;
}

/** Follows the crawl on its WebSocket status stream; polls GET /v2/crawl/{id} if the stream fails. */
function watchCrawl(state) {
  return new Promise((resolve, reject) => {
    let finished = false;
    let socket;
    try {
      const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
      socket = new WebSocket(`${scheme}//${location.host}/v2/crawl/${encodeURIComponent(state.id)}`, [apiKey()]);
    } catch {
      pollCrawl(state).then(resolve, reject);
      return;
    }
    state.socket = socket;
    socket.addEventListener('message', (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg.type === 'catchup') {
        state.update(msg.data);
        for (const doc of msg.data.data ?? []) state.page(doc);
      } else if (msg.type === 'document') {
        state.page(msg.data);
      } else if (msg.type === 'done') {
        finished = true;
        state.update(msg.data);
        resolve(msg.data);
      } else if (msg.type === 'error') {
        finished = true;
        reject(new ApiFailure(`${msg.code}: ${msg.error}`));
      }
    });
    socket.addEventListener('close', () => {
      state.socket = null;
      if (finished || state.stopped) return resolve({ status: state.status });
      // Never opened (a proxy without WebSocket), or cut short: read the status the plain way.
      pollCrawl(state).then(resolve, reject);
    });
  });
}

async function pollCrawl(state) {
  for (;;) {
    if (state.stopped) return { status: state.status };
    let path = `/v2/crawl/${encodeURIComponent(state.id)}`;
    let status;
    for (let i = 0; path && i < 100; i++) {
      const page = await api('GET', path);
      status ??= page;
      for (const doc of page.data ?? []) state.page(doc);
      const next = page.next ? new URL(page.next, location.href) : null;
      path = next ? next.pathname + next.search : '';
    }
    state.update(status);
    if (status.status !== 'scraping') return status;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

$('#crawl-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const body = { url: form.url.value.trim(), limit: numberOr(form.limit, 10) };
  if (crawl) {
    crawl.stopped = true;
    crawl.socket?.close();
  }
  crawlPages.replaceChildren();
  $('#crawl-pages-heading').hidden = true;
  progress.max = 1;
  progress.value = 0;
  crawlCount.textContent = '';
  run(crawlPanel, 'Starting the crawl…', async () => {
    const started = await api('POST', '/v2/crawl', body);
    crawl = crawlState(started.id);
    const mine = crawl;
    mine.total = body.limit;
    mine.show();
    parts(crawlPanel).status.textContent = `Crawling ${body.url} (crawl ${started.id})…`;
    cancelButton.disabled = false;
    try {
      const end = await watchCrawl(mine);
      return `Crawl ${end.status ?? 'ended'}: ${Math.max(mine.completed, crawlPages.children.length)} pages.`;
    } finally {
      if (crawl === mine) cancelButton.disabled = true;
    }
  }).then(() => {
    cancelButton.disabled = !crawl || crawl.status !== 'scraping' || !crawl.socket;
  });
});

cancelButton.addEventListener('click', async () => {
  if (!crawl) return;
  const { error } = parts(crawlPanel);
  try {
    await api('DELETE', `/v2/crawl/${encodeURIComponent(crawl.id)}`);
  } catch (err) {
    error.textContent = err.message;
  }
});

// ---- Parse ----------------------------------------------------------------------------------

const parsePanel = $('#panel-parse');
$('#parse-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const file = form.file.files[0];
  const { results } = parts(parsePanel);
  run(parsePanel, `Parsing ${file?.name ?? ''}…`, async () => {
    if (!file) throw new ApiFailure('Choose a document to parse.');
    results.replaceChildren();
    const data = new FormData();
    data.append('file', file, file.name);
    const answer = await api('POST', '/v2/parse', data);
    const doc = answer.data ?? {};
    results.replaceChildren(section(file.name, 3, ...documentView(doc, { warning: answer.warning, level: 4 })));
    return `Parsed ${file.name}.`;
  });
});

// ---- Search ---------------------------------------------------------------------------------

const searchPanel = $('#panel-search');
$('#search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const { results } = parts(searchPanel);
  const body = { query: form.query.value.trim(), limit: numberOr(form.limit, 10) };
  run(searchPanel, 'Searching…', async () => {
    results.replaceChildren();
    const answer = await api('POST', '/v2/search', body);
    const web = answer.data?.web ?? [];
    results.replaceChildren(
      section(`Results (${web.length})`, 3, web.length ? linkList(web) : el('p', { text: 'Nothing found.' })),
    );
    if (answer.warning) results.append(el('p', { className: 'note', text: `Warning: ${answer.warning}` }));
    return `${web.length} results for “${body.query}”.`;
  });
});

// ---- Monitors -------------------------------------------------------------------------------

const monitorsPanel = $('#panel-monitors');

/** A list of buttons, one pressed at a time; `pick` runs on a press. */
function choiceList(items, label, pick) {
  const list = el('ul', { className: 'choices' });
  const buttons = items.map(([text, value]) => {
    const b = el('button', { type: 'button', 'aria-pressed': 'false', text });
    b.addEventListener('click', () => {
      for (const other of buttons) other.setAttribute('aria-pressed', String(other === b));
      pick(value);
    });
    list.append(el('li', {}, b));
    return b;
  });
  list.setAttribute('aria-label', label);
  return list;
}

const summaryText = (s) =>
  s
    ? `${s.totalPages} pages: ${s.changed} changed, ${s.new} new, ${s.same} same, ${s.removed} removed, ${s.error} errors`
    : '';

$('#monitors-load').addEventListener('click', () => {
  run(monitorsPanel, 'Loading monitors…', async () => {
    const answer = await api('GET', '/v2/monitor?limit=100');
    const monitors = answer.data ?? [];
    $('#monitor-checks').replaceChildren();
    $('#monitor-check').replaceChildren();
    $('#monitor-list').replaceChildren(
      section(
        `Monitors (${monitors.length})`,
        3,
        monitors.length
          ? choiceList(
              monitors.map((m) => [`${m.name} · ${m.status} · ${m.schedule?.text ?? m.schedule?.cron ?? ''}`, m]),
              'Monitors',
              showChecks,
            )
          : el('p', { text: 'No monitors yet: create one with POST /v2/monitor.' }),
      ),
    );
    return `${monitors.length} monitors.`;
  });
});

function showChecks(monitor) {
  run(monitorsPanel, `Loading the checks of ${monitor.name}…`, () => loadChecks(monitor));
}

async function loadChecks(monitor) {
  const answer = await api('GET', `/v2/monitor/${encodeURIComponent(monitor.id)}/checks?limit=50`);
  const checks = answer.data ?? [];
  $('#monitor-check').replaceChildren();
  const runNow = el('button', { type: 'button', text: 'Run a check now' });
  runNow.addEventListener('click', () =>
    run(monitorsPanel, 'Queueing a check…', async () => {
      await api('POST', `/v2/monitor/${encodeURIComponent(monitor.id)}/run`, {});
      await loadChecks(monitor);
      return 'Check queued: load the checks again to see it finish.';
    }),
  );
  $('#monitor-checks').replaceChildren(
    section(
      `Checks of ${monitor.name} (${checks.length})`,
      3,
      el('div', { className: 'actions' }, runNow),
      checks.length
        ? choiceList(
            checks.map((c) => [
              `${new Date(c.createdAt ?? c.scheduledFor ?? Date.now()).toLocaleString()} · ${c.status} · ${summaryText(c.summary)}`,
              c,
            ]),
            `Checks of ${monitor.name}`,
            (check) => showCheck(monitor, check),
          )
        : el('p', { text: 'No checks yet.' }),
    ),
  );
  return `${checks.length} checks of ${monitor.name}.`;
}

function showCheck(monitor, check) {
  run(monitorsPanel, 'Loading the check…', async () => {
    const base = `/v2/monitor/${encodeURIComponent(monitor.id)}/checks/${encodeURIComponent(check.id)}`;
    const answer = await api('GET', `${base}?limit=100`);
    const data = answer.data ?? {};
    const pages = data.pages ?? [];
    const rows = pages.map((p) =>
      el(
        'tr',
        {},
        el('td', {}, outLink(p.url)),
        el('td', { text: p.status }),
        el('td', { text: p.statusCode ?? '' }),
        el('td', { text: p.error ?? p.judgment?.reason ?? '' }),
      ),
    );
    const table = el(
      'table',
      {},
      el('caption', { text: `Pages of the check (${summaryText(data.summary)})` }),
      el(
        'thead',
        {},
        el('tr', {}, ...['Page', 'Status', 'HTTP', 'Note'].map((h) => el('th', { scope: 'col', text: h }))),
      ),
      el('tbody', {}, ...rows),
    );
    const diffs = pages
      .filter((p) => p.diff)
      .map((p) => {
        const parts = [];
        if (p.diff.json?.files) parts.push(sideBySide(p.diff.json, `Changes of ${p.url}`));
        else if (p.diff.json) parts.push(fieldChanges(p.diff.json, `Changed fields of ${p.url}`));
        if (p.diff.text)
          parts.push(
            el('details', {}, el('summary', { text: 'Unified diff' }), pre(p.diff.text, `Unified diff of ${p.url}`)),
          );
        return section(`Diff of ${p.url}`, 4, ...parts);
      });
    $('#monitor-check').replaceChildren(
      section(
        `Check of ${new Date(data.createdAt ?? Date.now()).toLocaleString()}: ${data.status}`,
        3,
        table,
        ...diffs,
      ),
    );
    return `${pages.length} pages, ${diffs.length} with a diff${answer.next ? ' (first 100 pages shown)' : ''}.`;
  });
}

// ---- Interact -------------------------------------------------------------------------------

const interactPanel = $('#panel-interact');
let session = null;

function showSession(urls, end, extra = []) {
  const { results } = parts(interactPanel);
  const stop = el('button', { type: 'button', text: 'End session' });
  stop.addEventListener('click', () =>
    run(interactPanel, 'Ending the session…', async () => {
      const answer = await api('DELETE', end);
      session = null;
      results.replaceChildren();
      return `Session ended (${answer.creditsBilled ?? 0} credits).`;
    }),
  );
  results.replaceChildren(
    ...extra,
    section(
      'Live view',
      3,
      el(
        'p',
        { className: 'actions' },
        outLink(urls.liveViewUrl, 'Open the live view in a new tab'),
        outLink(urls.interactiveLiveViewUrl, 'Open the interactive live view in a new tab'),
      ),
      el('iframe', { className: 'live', src: urls.liveViewUrl, title: 'Live view of the browser session' }),
      el('div', { className: 'actions' }, stop),
    ),
  );
}

$('#interact-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const id = form.scrapeId.value.trim();
  run(interactPanel, 'Opening the session and running the code…', async () => {
    const answer = await api(
      'POST',
      `/v2/scrape/${encodeURIComponent(id)}/interact`,
      { code: form.code.value, language: 'node' },
      { lenient: true },
    );
    session = { end: `/v2/scrape/${encodeURIComponent(id)}/interact` };
    const output = [answer.result, answer.stdout, answer.stderr, answer.error].filter(Boolean).join('\n');
    showSession(answer, session.end, [section('Output', 3, pre(output || '(no output)', 'Output of the code'))]);
    return answer.success ? 'The code ran.' : 'The code failed: see its output.';
  });
});

$('#browser-new').addEventListener('click', () => {
  run(interactPanel, 'Opening a browser session…', async () => {
    const answer = await api('POST', '/v2/browser', {});
    session = { end: `/v2/browser/${encodeURIComponent(answer.id)}` };
    showSession(answer, session.end);
    return `Session ${answer.id} open until ${new Date(answer.expiresAt).toLocaleTimeString()}.`;
  });
});

// Marks the page ready (tests and people can tell the script ran).
document.documentElement.dataset.ready = 'true';
