// A webhook receiver that verifies every request before trusting it.
//
//   SVC_WEBHOOK_ALLOW_PRIVATE=on npm start      # svc may deliver to http://127.0.0.1
//   SVC_API_KEY=svc_test_… npm run example:webhook-receiver -w @svc/client
//
// Without SVC_WEBHOOK_SECRET it registers itself (POST /v1/webhooks) and asks svc for a test
// event; with it, it only listens. PORT (default 4242) is where it listens; MAX_EVENTS stops it.
import http from 'node:http';
import { Svc, WebhookVerificationError, verifyWebhook } from '@svc/client';

const port = Number(process.env.PORT ?? 4242);
const maxEvents = Number(process.env.MAX_EVENTS ?? Infinity);
const seen = new Set<string>();
let secret = process.env.SVC_WEBHOOK_SECRET;
let received = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const raw = Buffer.concat(chunks);
    try {
      // The raw bytes, before any JSON parsing: re-serialised JSON would not match the signature.
      const ev = await verifyWebhook(raw, req.headers, secret ?? '', { toleranceS: 300 });
      res.writeHead(200).end('ok');
      // At-least-once delivery: the same event may come twice; its id says so.
      if (seen.has(ev.id)) return;
      seen.add(ev.id);
      if (ev.type === 'test') {
        console.log(`verified test event ${ev.id}`);
        return;
      }
      if (ev.type === 'status') console.log(`verified ${ev.id}: ${ev.game_id} is now ${ev.status} (was ${ev.previous_status})`);
      else console.log(`verified ${ev.id}: ${ev.game_id} ${ev.team} +${ev.points} (${ev.tier})`);
      // MAX_EVENTS counts scoring events; test sends only prove the path works.
      if (++received >= maxEvents) {
        server.close();
        server.closeAllConnections();
      }
    } catch (err) {
      res.writeHead(err instanceof WebhookVerificationError ? 400 : 500).end();
      console.log(`rejected: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
});

await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
console.log(`listening on http://127.0.0.1:${port}/`);
if (!secret) {
  const svc = new Svc();
  const endpoint = await svc.webhooks.create({ url: `http://127.0.0.1:${port}/`, tier: 'confirmed', description: 'example receiver' });
  secret = endpoint.secret;
  console.log(`registered ${endpoint.id}`);
  const test = await svc.webhooks.test(endpoint.id);
  console.log(`test send: ${test.delivered ? 'delivered' : `not delivered (${test.error ?? test.status_code})`}`);
  process.once('SIGINT', () => void svc.webhooks.delete(endpoint.id).finally(() => process.exit(0)));
}
