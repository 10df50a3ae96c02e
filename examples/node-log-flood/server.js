// Floods its standard output on request: GET /flood?lines=150000&ms=2000 prints that many
// lines spread over that time, in batches every 50 ms, then "flood done <n>". GET /flood/status
// says "flooding" or how many lines the last flood printed, so a reader can tell a line the
// platform dropped from one not printed yet.
const http = require('node:http');

let flooding = false;
let lastFlood = 0;

function flood(total, ms) {
  flooding = true;
  const batches = Math.max(1, Math.round(ms / 50));
  const perBatch = Math.ceil(total / batches);
  let printed = 0;
  const started = Date.now();
  const timer = setInterval(() => {
    const lines = [];
    for (let i = 0; i < perBatch && printed < total; i++, printed++) {
      lines.push(`flood line ${String(printed + 1).padStart(6, '0')} lorem ipsum dolor sit amet, consectetur adipiscing`);
    }
    process.stdout.write(lines.join('\n') + '\n');
    if (printed >= total) {
      clearInterval(timer);
      console.log(`flood done ${total} in ${Date.now() - started} ms`);
      flooding = false;
      lastFlood = printed;
    }
  }, 50);
}

http
  .createServer((req, res) => {
    const url = new URL(req.url, 'http://app');
    if (url.pathname === '/flood/status') {
      res.end(flooding ? 'flooding\n' : `printed ${lastFlood}\n`);
      return;
    }
    if (url.pathname === '/flood') {
      if (flooding) {
        res.statusCode = 409;
        res.end('already flooding\n');
        return;
      }
      const total = Number(url.searchParams.get('lines') ?? 150000);
      const ms = Number(url.searchParams.get('ms') ?? 2000);
      flood(total, ms);
      res.statusCode = 202;
      res.end(`flooding ${total} lines over ${ms} ms\n`);
      return;
    }
    res.end('ok\n');
  })
  .listen(8080, '0.0.0.0', () => console.log('log flood app listening on 0.0.0.0:8080'));
