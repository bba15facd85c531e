// Ceiling for bench/consensus: a bare node:http server that reads and JSON-parses each request
// body and answers 202. No auth, no validation, no engine, no database.
import http from 'node:http';

const port = Number(process.argv[2]);
http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let n = 0;
      try {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        n = typeof body === 'object' && body !== null && 'reports' in body && Array.isArray(body.reports) ? body.reports.length : 1;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const out = JSON.stringify({ accepted: n });
      res.writeHead(202, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  })
  .listen(port, '127.0.0.1', () => process.stdout.write('bare server ready\n'));
