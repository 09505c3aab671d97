// What the JavaScript peers share and no SDK provides: the scripts the tests hand over,
// serving every scenario from one process, and answering calls read from stdin. The
// protocol is interop/python/harness.py's (JSON lines):
// - `serve`: stdout `READY <scenario> <url>` per scenario, then `READY all`; serves until
//   stdin closes (the process that started it ended).
// - `client`: stdin `{"url", "message", "user", "session", "stream"}` per call; stdout one
//   line per call, `{"events": [...]}` or `{"error": "..."}`.
// Nothing here imports a package: interop/adk-js imports it too, from its own install.
import http from 'node:http';
import readline from 'node:readline';

/** The scenario scripts (interop/python/scripts.py as JSON, in PEER_SCRIPTS). */
export function scripts() {
  const text = process.env.PEER_SCRIPTS;
  if (!text) {
    throw new Error('PEER_SCRIPTS is not set: run with PEER_SCRIPTS="$(python3 ../python/scripts.py)"');
  }
  return JSON.parse(text);
}

/** Scenario names from `--scenario NAME` arguments, else every script. */
export function scenarioNames(all) {
  const names = [];
  process.argv.forEach((arg, i) => {
    if (arg === '--scenario') names.push(process.argv[i + 1]);
  });
  return names.length ? names : Object.keys(all).sort();
}

/** One HTTP server per scenario on its own loopback port; `build(scenario, url)` returns
 * its request listener (an express app). Exits when stdin closes. */
export async function serveAll(names, build) {
  for (const name of names) {
    const server = http.createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${server.address().port}/`;
    server.on('request', await build(name, url));
    console.log(`READY ${name} ${url}`);
  }
  console.log('READY all');
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

/** Answer one call per stdin line, in order, until stdin closes. */
export async function clientLoop(call) {
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    let answer;
    try {
      answer = await call({
        url: request.url,
        message: request.message ?? 'hi',
        user: request.user ?? 'peer-user',
        session: request.session ?? 'peer-session',
        stream: request.stream ?? true,
      });
    } catch (err) {
      answer = { error: `${err?.name ?? 'Error'}: ${err?.message ?? err}`, trace: String(err?.stack ?? '') };
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
  process.exit(0);
}
