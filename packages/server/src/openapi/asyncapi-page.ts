/**
 * The stream's AsyncAPI document (asyncapi.ts) as one HTML page for people, served at
 * `/docs/stream`: written on the server, with no script and no inline style, so it reads offline
 * under the pages' Content-Security-Policy (routes/web). Only the parts of AsyncAPI 3 the
 * document uses are drawn: info, servers, channels with their WebSocket query, operations,
 * messages with payload tables and examples, and component schemas.
 */
type Json = Record<string, unknown>;

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const record = (v: unknown): Json => (isRecord(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `code` spans, as the document's descriptions use them; everything else is text. */
function inline(s: string): string {
  return escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** Paragraphs split on blank lines; lines starting with `- ` are list items. */
function blocks(s: string): string {
  return s
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split('\n');
      const items = lines.filter((l) => l.startsWith('- ')).map((l) => `<li>${inline(l.slice(2))}</li>`);
      const prose = lines.filter((l) => !l.startsWith('- ')).join(' ').trim();
      return `${prose ? `<p>${inline(prose)}</p>` : ''}${items.length ? `<ul>${items.join('')}</ul>` : ''}`;
    })
    .join('\n');
}

/** The last segment of a local `$ref` and the object it points at. */
function resolve(doc: Json, ref: string): { name: string; target: Json } {
  const parts = ref.replace(/^#\//, '').split('/');
  let node: unknown = doc;
  for (const p of parts) node = record(node)[p];
  return { name: parts[parts.length - 1] ?? ref, target: record(node) };
}

/**
 * A table cell. Its content sits in one element: on a phone `table.stack` (svc.css) makes each
 * cell a flex row of its label and its content, and bare inline pieces would each become a flex
 * item, side by side, wider than the screen.
 */
const cell = (label: string, html: string): string => `<td data-label="${escapeHtml(label)}"><div>${html}</div></td>`;

const anchor = (kind: 'message' | 'schema' | 'operation' | 'channel', name: string): string => `${kind}-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/** A schema's type in a few words: `string`, `"score"`, `integer | null`, a link to a named schema. */
function typeOf(doc: Json, schema: Json): string {
  if (typeof schema.$ref === 'string') {
    const { name } = resolve(doc, schema.$ref);
    return `<a href="#${anchor('schema', name)}">${escapeHtml(name)}</a>`;
  }
  if ('const' in schema) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(' | ');
  const union = list(schema.anyOf).length ? list(schema.anyOf) : list(schema.oneOf);
  if (union.length) return union.map((s) => typeOf(doc, record(s))).join(' | ');
  if (schema.type === 'array') return `array of ${typeOf(doc, record(schema.items))}`;
  return escapeHtml(text(schema.type) || 'any');
}

/** One row per property, nested inline objects as `parent.child` rows. */
function propertyRows(doc: Json, schema: Json, prefix = ''): string[] {
  const required = new Set(list(schema.required).map(text));
  return Object.entries(record(schema.properties)).flatMap(([name, raw]) => {
    const prop = record(raw);
    const path = `${prefix}${name}`;
    const examples = list(prop.examples).map((e) => `\`${JSON.stringify(e)}\``);
    const words = [text(prop.description), examples.length ? `e.g. ${examples.join(', ')}` : '']
      .filter(Boolean)
      .join(' ');
    const row = `<tr>${cell('Field', `<code>${escapeHtml(path)}</code>`)}${cell('Type', typeOf(doc, prop))}${cell('Required', required.has(name) ? 'yes' : 'no')}${cell('Description', inline(words))}</tr>`;
    const nested = prop.type === 'object' && isRecord(prop.properties) ? propertyRows(doc, prop, `${path}.`) : [];
    return [row, ...nested];
  });
}

function schemaTable(doc: Json, schema: Json): string {
  const rows = propertyRows(doc, schema);
  if (rows.length === 0) return `<p>Type: ${typeOf(doc, schema)}</p>`;
  return [
    '<table class="stack">',
    '<thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody>`,
    '</table>',
  ].join('');
}

function messageSection(doc: Json, name: string, message: Json): string {
  const payload = record(message.payload);
  const examples = list(message.examples).map((e) => `<pre><code>${escapeHtml(JSON.stringify(record(e).payload, null, 2))}</code></pre>`);
  return [
    `<section class="card" id="${anchor('message', name)}" aria-labelledby="${anchor('message', name)}-title">`,
    `<h3 id="${anchor('message', name)}-title">${escapeHtml(text(message.title) || name)} <span class="muted small">message <code>${escapeHtml(name)}</code>, ${escapeHtml(text(message.contentType) || text(doc.defaultContentType))}</span></h3>`,
    message.summary ? `<p>${inline(text(message.summary))}</p>` : '',
    schemaTable(doc, payload),
    examples.length ? `<h4>Example</h4>${examples.join('')}` : '',
    '</section>',
  ].join('\n');
}

function messageLinks(doc: Json, refs: unknown[]): string {
  return refs
    .map((r) => {
      const ref = text(record(r).$ref);
      const { name, target } = resolve(doc, ref);
      // Channel messages point at components; follow to the component's own name.
      const final = typeof target.$ref === 'string' ? resolve(doc, target.$ref).name : name;
      return `<a href="#${anchor('message', final)}"><code>${escapeHtml(final)}</code></a>`;
    })
    .join(', ');
}

/** The whole page. */
export function asyncApiPage(doc: Json): string {
  const info = record(doc.info);
  const title = text(info.title) || 'Stream';
  const servers = Object.entries(record(doc.servers)).map(
    ([name, raw]) => {
      const s = record(raw);
      return `<tr>${cell('Name', `<code>${escapeHtml(name)}</code>`)}${cell('URL', `<code>${escapeHtml(`${text(s.protocol)}://${text(s.host)}`)}</code>`)}${cell('Description', inline(text(s.description)))}</tr>`;
    },
  );
  const channels = Object.entries(record(doc.channels)).map(([name, raw]) => {
    const c = record(raw);
    const query = record(record(record(c.bindings).ws).query);
    return [
      `<section class="card" id="${anchor('channel', name)}" aria-labelledby="${anchor('channel', name)}-title">`,
      `<h3 id="${anchor('channel', name)}-title">${escapeHtml(text(c.title) || name)} <span class="muted small">channel <code>${escapeHtml(name)}</code> at <code>${escapeHtml(text(c.address))}</code></span></h3>`,
      c.description ? `<p>${inline(text(c.description))}</p>` : '',
      Object.keys(record(query.properties)).length ? `<h4>Query of the WebSocket upgrade</h4>${schemaTable(doc, query)}` : '',
      `<p>Messages: ${messageLinks(doc, Object.values(record(c.messages)))}</p>`,
      '</section>',
    ].join('\n');
  });
  const operations = Object.entries(record(doc.operations)).map(([name, raw]) => {
    const o = record(raw);
    const who = o.action === 'send' ? 'client → server' : 'server → client';
    return `<tr id="${anchor('operation', name)}">${cell('Operation', `<code>${escapeHtml(name)}</code>`)}${cell('Direction', escapeHtml(who))}${cell('Summary', inline(text(o.summary)))}${cell('Messages', messageLinks(doc, list(o.messages)))}</tr>`;
  });
  const components = record(doc.components);
  const messages = Object.entries(record(components.messages)).map(([name, m]) => messageSection(doc, name, record(m)));
  const schemas = Object.entries(record(components.schemas)).map(
    ([name, s]) =>
      `<section class="card" id="${anchor('schema', name)}"><h3>${escapeHtml(name)} <span class="muted small">schema</span></h3>${record(s).description ? `<p>${inline(text(record(s).description))}</p>` : ''}${schemaTable(doc, record(s))}</section>`,
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}: stream protocol</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/svc.css">
<link rel="stylesheet" href="/ui/docs.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="topbar">
  <a class="brand" href="/status">svc</a>
  <nav aria-label="Main"><a href="/status">Status</a><a href="/dashboard">Dashboard</a><a href="/docs">API reference</a><a href="/docs/stream" aria-current="page">Stream</a></nav>
</header>
<main id="main" class="page docs">
<h1>${escapeHtml(title)}</h1>
<p class="lead">AsyncAPI ${escapeHtml(text(doc.asyncapi))}, version ${escapeHtml(text(info.version))}. The document itself: <a href="/v1/asyncapi.json"><code>/v1/asyncapi.json</code></a>.</p>
<nav aria-label="On this page" class="toc"><a href="#overview">Overview</a> · <a href="#servers">Servers</a> · <a href="#channels">Channels</a> · <a href="#operations">Operations</a> · <a href="#messages">Messages</a>${schemas.length ? ' · <a href="#schemas">Schemas</a>' : ''}</nav>
<section id="overview" aria-labelledby="overview-title"><h2 id="overview-title">Overview</h2>
${blocks(text(info.description))}
</section>
<section id="servers" aria-labelledby="servers-title"><h2 id="servers-title">Servers</h2>
<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">Description</th></tr></thead><tbody>${servers.join('')}</tbody></table>
</section>
<section id="channels" aria-labelledby="channels-title"><h2 id="channels-title">Channels</h2>
${channels.join('\n')}
</section>
<section id="operations" aria-labelledby="operations-title"><h2 id="operations-title">Operations</h2>
<table class="stack"><thead><tr><th scope="col">Operation</th><th scope="col">Direction</th><th scope="col">Summary</th><th scope="col">Messages</th></tr></thead><tbody>${operations.join('')}</tbody></table>
</section>
<section id="messages" aria-labelledby="messages-title"><h2 id="messages-title">Messages</h2>
${messages.join('\n')}
</section>
${schemas.length ? `<section id="schemas" aria-labelledby="schemas-title"><h2 id="schemas-title">Schemas</h2>\n${schemas.join('\n')}\n</section>` : ''}
</main>
</body>
</html>
`;
}
