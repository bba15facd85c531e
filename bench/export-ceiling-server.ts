// The ceiling for bench/export: a bare node:http server streaming a file from disk with
// fs.createReadStream. Nothing of svc runs here; it answers every request with the file.
import fs from 'node:fs';
import http from 'node:http';

const [file, port] = process.argv.slice(2);
http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    fs.createReadStream(file).pipe(res);
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('ceiling server ready\n'));
