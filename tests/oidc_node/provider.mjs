// A real OpenID provider for the bridge's tests (tests/security_peers.py starts it).
//
// Input: the environment variable OIDC_PEER_CONFIG, JSON
//   {"audience": "...", "clients": [{"id": "...", "secret": "..."}], "keys": [<private JWK>, ...]}
// It listens on 127.0.0.1 (a free port), prints one JSON line {"issuer": "..."} and then
// serves client-credentials tokens as RFC 9068 JWTs for the audience, signed with the
// first key; every key is published in the JWKS.
//
// Key rotation: each line on stdin is JSON {"keys": [...]}; the provider is rebuilt with
// those keys (same issuer, same port, same clients) and answers one line "rotated".
import http from 'node:http';
import readline from 'node:readline';

import Provider from 'oidc-provider';

// stdout is the protocol above; the library's notices go to stderr.
console.log = console.error;

const config = JSON.parse(process.env.OIDC_PEER_CONFIG);

function build(issuer, keys) {
  const provider = new Provider(issuer, {
    clients: config.clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys },
    scopes: ['agent'],
    ttl: { ClientCredentials: 300 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => config.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'agent',
          audience: config.audience,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: keys[0].alg || 'RS256' } },
        }),
      },
    },
  });
  provider.proxy = false;
  return provider.callback();
}

let handler = null;
const server = http.createServer((req, res) => handler(req, res));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  handler = build(issuer, config.keys);
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    handler = build(issuer, JSON.parse(line).keys);
    process.stdout.write('rotated\n');
  });
  lines.on('close', () => server.close(() => process.exit(0)));
});
