#!/usr/bin/env node
// Self-test for server.mjs: starts it, signs in the way an MCP client does (fetch only) and
// checks that each rule it enforces refuses what it should. `node tests/oauth-mcp/check.mjs`;
// exits non-zero on the first failure.

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));
const PRE_ID = 'perch-preregistered';
const PRE_SECRET = 'pre-secret with spaces & symbols:+/';
const TTL = 90;
const REDIRECT_REGISTERED = 'http://127.0.0.1/callback';
const REDIRECT = 'http://127.0.0.1:53682/callback'; // RFC 8252: any port on a registered loopback URI

// ------------------------------------------------------------------------------------------
// Harness.

const servers = [];
const secrets = new Set(); // every token value seen, to check none reaches the logs
let passed = 0;

async function start(extra = []) {
    const child = spawn(process.execPath, [SERVER, '--port', '0', ...extra], { stdio: ['pipe', 'pipe', 'pipe'] });
    const srv = { child, stderr: '', stdoutLines: [] };
    servers.push(srv);
    child.stderr.setEncoding('utf8').on('data', d => (srv.stderr += d));
    const lines = createInterface({ input: child.stdout });
    lines.on('line', l => srv.stdoutLines.push(l));
    const [first] = await Promise.race([
        once(lines, 'line'),
        once(child, 'exit').then(([code]) => {
            throw new Error(`server exited (${code}) before its start line:\n${srv.stderr}`);
        })
    ]);
    srv.info = JSON.parse(first);
    return srv;
}

async function step(name, fn) {
    try {
        await fn();
        passed++;
        process.stdout.write(`ok   ${name}\n`);
    } catch (e) {
        process.stdout.write(`FAIL ${name}\n     ${e?.stack ?? e}\n`);
        for (const s of servers) process.stdout.write(`--- server stderr (${s.info?.mcp ?? '?'}) ---\n${s.stderr}\n`);
        await stopAll();
        process.exit(1);
    }
}

async function stopAll() {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
}

const b64url = buf => Buffer.from(buf).toString('base64url');
function pkce() {
    const verifier = b64url(randomBytes(32));
    return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
}

// Parse `Bearer a="b", c="d"` (quoted values only, which is all this server sends).
function parseChallenge(header) {
    assert.ok(header, 'WWW-Authenticate missing');
    const m = /^Bearer\s+(.*)$/i.exec(header);
    assert.ok(m, `not a Bearer challenge: ${header}`);
    const params = {};
    for (const [, k, v] of m[1].matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) params[k] = v;
    return params;
}

async function form(url, params, { basic } = {}) {
    const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (basic) {
        const enc = s => encodeURIComponent(s).replace(/%20/g, '+');
        headers.authorization = `Basic ${Buffer.from(`${enc(basic[0])}:${enc(basic[1])}`).toString('base64')}`;
    }
    const body = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined));
    const res = await fetch(url, { method: 'POST', headers, body });
    const json = await res.json().catch(() => null);
    if (json?.access_token) secrets.add(json.access_token);
    if (json?.refresh_token) secrets.add(json.refresh_token);
    return { status: res.status, json, headers: res.headers };
}

async function authorize(meta, params) {
    const url = new URL(meta.authorization_endpoint);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: 'manual' });
    const location = res.headers.get('location');
    const loc = location ? new URL(location) : null;
    if (loc?.searchParams.get('code')) secrets.add(loc.searchParams.get('code'));
    return { status: res.status, loc, json: location ? null : await res.json().catch(() => null) };
}

// One MCP JSON-RPC POST; answers come as JSON or as an SSE stream (read to its end).
let rpcId = 0;
async function mcp(url, token, message, session) {
    const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25'
    };
    if (token) headers.authorization = `Bearer ${token}`;
    if (session) headers['mcp-session-id'] = session;
    const body = 'method' in message && !message.method.startsWith('notifications/') ? { id: ++rpcId, ...message } : message;
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', ...body }) });
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    let messages = [];
    if (type.includes('text/event-stream')) {
        for (const line of text.split('\n')) if (line.startsWith('data:')) messages.push(JSON.parse(line.slice(5)));
    } else if (text && type.includes('json')) {
        messages = [JSON.parse(text)];
    }
    const reply = messages.find(m => m.id === body.id);
    return { status: res.status, headers: res.headers, reply, messages, text };
}

async function signIn(meta, mcpUrl, client, { scope, redirect = REDIRECT, basic } = {}) {
    const { verifier, challenge } = pkce();
    const state = b64url(randomBytes(12));
    const a = await authorize(meta, {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: redirect,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        scope,
        state,
        resource: mcpUrl
    });
    assert.equal(a.status, 302);
    assert.equal(a.loc.searchParams.get('state'), state);
    assert.equal(a.loc.searchParams.get('iss'), meta.issuer);
    const code = a.loc.searchParams.get('code');
    assert.ok(code, `no code in ${a.loc}`);
    const t = await form(
        meta.token_endpoint,
        {
            grant_type: 'authorization_code',
            code,
            code_verifier: verifier,
            redirect_uri: redirect,
            resource: mcpUrl,
            client_id: basic ? undefined : client.client_id,
            client_secret: basic ? undefined : client.client_secret
        },
        { basic: basic ? [client.client_id, client.client_secret] : undefined }
    );
    assert.equal(t.status, 200, JSON.stringify(t.json));
    return { ...t.json, code, verifier };
}

const toolText = r => r.reply?.result?.content?.[0]?.text;

// ------------------------------------------------------------------------------------------
// The run.

process.on('exit', () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

const srv = await start(['--client-id', PRE_ID, '--client-secret', PRE_SECRET, '--token-ttl', String(TTL)]);
const { mcp: MCP, issuer: ISSUER } = srv.info;
const ORIGIN = new URL(MCP).origin;
const test = path => new URL(path, ORIGIN);
let meta, prmUrl, pub, conf, tokens, session, stepped;

await step('start line: {"mcp","issuer"} on stdout', async () => {
    assert.deepEqual(Object.keys(srv.info), ['mcp', 'issuer']);
    assert.match(MCP, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.equal(ISSUER, `${ORIGIN}/`);
});

await step('no token -> 401 with Bearer resource_metadata and scope', async () => {
    const r = await mcp(MCP, null, { method: 'initialize', params: {} });
    assert.equal(r.status, 401);
    const header = r.headers.get('www-authenticate');
    assert.equal(header, `Bearer resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`);
    prmUrl = parseChallenge(header).resource_metadata;
});

await step('protected resource metadata (path and root well-known)', async () => {
    for (const url of [prmUrl, `${ORIGIN}/.well-known/oauth-protected-resource`]) {
        const prm = await (await fetch(url)).json();
        assert.equal(prm.resource, MCP);
        assert.deepEqual(prm.authorization_servers, [ISSUER]);
        assert.ok(prm.scopes_supported.includes('mcp:tools') && prm.scopes_supported.includes('notes:read'));
    }
});

await step('authorization server metadata (RFC 8414)', async () => {
    const asUrl = new URL('/.well-known/oauth-authorization-server', ISSUER); // issuer has no path
    meta = await (await fetch(asUrl)).json();
    assert.equal(meta.issuer, ISSUER);
    assert.equal(meta.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.ok(meta.scopes_supported.includes('mcp:tools'));
    for (const m of ['none', 'client_secret_basic', 'client_secret_post']) {
        assert.ok(meta.token_endpoint_auth_methods_supported.includes(m), m);
    }
    for (const k of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint']) {
        assert.ok(meta[k]?.startsWith(ORIGIN), k);
    }
});

await step('dynamic client registration (public client) -> 201', async () => {
    const r = await fetch(meta.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
            client_name: 'check.mjs public',
            redirect_uris: [REDIRECT_REGISTERED],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none'
        })
    });
    assert.equal(r.status, 201);
    pub = await r.json();
    assert.ok(pub.client_id);
    assert.equal(pub.client_secret, undefined);
    assert.equal(pub.token_endpoint_auth_method, 'none');
});

await step('registration refuses a non-loopback http redirect URI', async () => {
    const r = await fetch(meta.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://example.com/cb'], token_endpoint_auth_method: 'none' })
    });
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error, 'invalid_redirect_uri');
});

const { verifier, challenge } = pkce();
const base = () => ({
    response_type: 'code',
    client_id: pub.client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    resource: MCP
});
let code;

await step('/authorize -> 302 to redirect_uri with code, same state, iss', async () => {
    const a = await authorize(meta, base());
    assert.equal(a.status, 302);
    assert.equal(a.loc.origin + a.loc.pathname, REDIRECT);
    assert.equal(a.loc.searchParams.get('state'), 'st-123');
    assert.equal(a.loc.searchParams.get('iss'), ISSUER);
    code = a.loc.searchParams.get('code');
    assert.ok(code);
});

await step('/authorize without resource -> error=invalid_target redirect (with state, iss)', async () => {
    const a = await authorize(meta, { ...base(), resource: undefined });
    assert.equal(a.status, 302);
    assert.equal(a.loc.searchParams.get('error'), 'invalid_target');
    assert.equal(a.loc.searchParams.get('state'), 'st-123');
    assert.equal(a.loc.searchParams.get('iss'), ISSUER);
    assert.equal(a.loc.searchParams.get('code'), null);
});

await step('/authorize with another resource -> error=invalid_target', async () => {
    const a = await authorize(meta, { ...base(), resource: `${ORIGIN}/other` });
    assert.equal(a.loc.searchParams.get('error'), 'invalid_target');
});

await step('/authorize with code_challenge_method=plain or no challenge -> error=invalid_request (SDK)', async () => {
    for (const p of [{ code_challenge_method: 'plain' }, { code_challenge: undefined }, { code_challenge_method: undefined }]) {
        const a = await authorize(meta, { ...base(), ...p });
        assert.equal(a.status, 302);
        assert.equal(a.loc.searchParams.get('error'), 'invalid_request', JSON.stringify(p));
        assert.equal(a.loc.searchParams.get('iss'), ISSUER);
    }
});

await step('/authorize with an unknown scope -> error=invalid_scope', async () => {
    const a = await authorize(meta, { ...base(), scope: 'mcp:tools admin' });
    assert.equal(a.loc.searchParams.get('error'), 'invalid_scope');
});

await step('/authorize with an unregistered redirect_uri -> 400, no redirect', async () => {
    const a = await authorize(meta, { ...base(), redirect_uri: 'http://127.0.0.1:53682/elsewhere' });
    assert.equal(a.status, 400);
    assert.equal(a.loc, null);
    assert.equal(a.json.error, 'invalid_request');
});

const exchange = over =>
    form(meta.token_endpoint, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        resource: MCP,
        client_id: pub.client_id,
        ...over
    });

await step('/token with a wrong code_verifier -> 400 invalid_grant (SDK PKCE check)', async () => {
    const t = await exchange({ code_verifier: pkce().verifier });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_grant');
});

await step('/token with a wrong redirect_uri -> 400 invalid_grant', async () => {
    const t = await exchange({ redirect_uri: 'http://127.0.0.1:53683/callback' });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_grant');
});

await step('/token without redirect_uri (authorization request had one) -> 400 invalid_request', async () => {
    const t = await exchange({ redirect_uri: undefined });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_request');
});

await step('/token without resource -> 400 invalid_target', async () => {
    const t = await exchange({ resource: undefined });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_target');
});

await step('/token with another resource -> 400 invalid_target', async () => {
    const t = await exchange({ resource: `${ORIGIN}/other` });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_target');
});

await step('/token code exchange with PKCE -> access + refresh token', async () => {
    const t = await exchange({});
    assert.equal(t.status, 200, JSON.stringify(t.json));
    assert.equal(t.headers.get('cache-control'), 'no-store');
    tokens = t.json;
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.expires_in, TTL);
    assert.equal(tokens.scope, 'mcp:tools');
    assert.ok(tokens.access_token && tokens.refresh_token);
});

await step('MCP initialize with the token -> session', async () => {
    const r = await mcp(MCP, tokens.access_token, {
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'check.mjs', version: '0' } }
    });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.reply?.result?.serverInfo, r.text);
    session = r.headers.get('mcp-session-id');
    assert.ok(session);
    const n = await mcp(MCP, tokens.access_token, { method: 'notifications/initialized' }, session);
    assert.equal(n.status, 202);
});

await step('tools/list -> whoami, secret_note', async () => {
    const r = await mcp(MCP, tokens.access_token, { method: 'tools/list', params: {} }, session);
    const names = r.reply.result.tools.map(t => t.name).sort();
    assert.deepEqual(names, ['secret_note', 'whoami']);
});

await step('tools/call whoami -> client id and scopes of the token', async () => {
    const r = await mcp(MCP, tokens.access_token, { method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session);
    assert.deepEqual(JSON.parse(toolText(r)), { client_id: pub.client_id, scopes: ['mcp:tools'] });
});

await step('tools/call secret_note without notes:read -> 403 insufficient_scope challenge', async () => {
    const r = await mcp(MCP, tokens.access_token, { method: 'tools/call', params: { name: 'secret_note', arguments: {} } }, session);
    assert.equal(r.status, 403);
    const header = r.headers.get('www-authenticate');
    assert.ok(
        header.startsWith(`Bearer error="insufficient_scope", scope="mcp:tools notes:read", resource_metadata="${prmUrl}"`),
        header
    );
    stepped = parseChallenge(header).scope;
});

await step('step-up: re-authorize with the challenged scope, then secret_note works', async () => {
    const t = await signIn(meta, MCP, pub, { scope: stepped });
    assert.equal(t.scope, 'mcp:tools notes:read');
    const r = await mcp(MCP, t.access_token, { method: 'tools/call', params: { name: 'secret_note', arguments: {} } }, session);
    assert.equal(r.status, 200);
    assert.match(toolText(r), /secret note/);
    const w = await mcp(MCP, t.access_token, { method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session);
    assert.deepEqual(JSON.parse(toolText(w)).scopes, ['mcp:tools', 'notes:read']);
    tokens = t;
});

const refresh = (rt, over = {}) =>
    form(meta.token_endpoint, { grant_type: 'refresh_token', refresh_token: rt, resource: MCP, client_id: pub.client_id, ...over });

await step('refresh without resource -> 400 invalid_target', async () => {
    const t = await refresh(tokens.refresh_token, { resource: undefined });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_target');
});

await step('refresh -> new access token and a rotated refresh token', async () => {
    const t = await refresh(tokens.refresh_token);
    assert.equal(t.status, 200, JSON.stringify(t.json));
    assert.notEqual(t.json.refresh_token, tokens.refresh_token);
    assert.notEqual(t.json.access_token, tokens.access_token);
    assert.equal(t.json.expires_in, TTL);
    assert.equal(t.json.scope, 'mcp:tools notes:read');
    tokens = t.json;
    const w = await mcp(MCP, tokens.access_token, { method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session);
    assert.equal(w.status, 200);
});

await step('refresh with a narrower scope -> that scope; beyond the grant -> 400 invalid_scope', async () => {
    const t = await refresh(tokens.refresh_token, { scope: 'mcp:tools' });
    assert.equal(t.status, 200, JSON.stringify(t.json));
    assert.equal(t.json.scope, 'mcp:tools');
    tokens = t.json;
    const beyond = await refresh(tokens.refresh_token, { scope: 'mcp:tools notes:read admin' });
    assert.equal(beyond.status, 400);
    assert.equal(beyond.json.error, 'invalid_scope');
    const full = await refresh(tokens.refresh_token, { scope: 'mcp:tools notes:read' });
    assert.equal(full.status, 200, 'the grant keeps its scopes');
    assert.equal(full.json.scope, 'mcp:tools notes:read');
    tokens = full.json;
});

await step('POST /test/expire-access -> 401 invalid_token; refresh still works', async () => {
    const e = await (await fetch(test('/test/expire-access'), { method: 'POST' })).json();
    assert.ok(e.expired >= 1);
    const r = await mcp(MCP, tokens.access_token, { method: 'tools/list', params: {} }, session);
    assert.equal(r.status, 401);
    const c = parseChallenge(r.headers.get('www-authenticate'));
    assert.equal(c.error, 'invalid_token');
    assert.equal(c.resource_metadata, prmUrl);
    const t = await refresh(tokens.refresh_token);
    assert.equal(t.status, 200);
    tokens = t.json;
    const ok = await mcp(MCP, tokens.access_token, { method: 'tools/list', params: {} }, session);
    assert.equal(ok.status, 200);
});

await step('an unknown token -> 401 error="invalid_token"', async () => {
    const r = await mcp(MCP, 'not-a-token', { method: 'tools/list', params: {} }, session);
    assert.equal(r.status, 401);
    assert.equal(parseChallenge(r.headers.get('www-authenticate')).error, 'invalid_token');
});

await step('revocation of the refresh token (RFC 7009) -> its access tokens die, refresh -> invalid_grant', async () => {
    const r = await form(meta.revocation_endpoint, { token: tokens.refresh_token, token_type_hint: 'refresh_token', client_id: pub.client_id });
    assert.equal(r.status, 200);
    const t = await refresh(tokens.refresh_token);
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_grant');
    const m = await mcp(MCP, tokens.access_token, { method: 'tools/list', params: {} }, session);
    assert.equal(m.status, 401);
    const again = await form(meta.revocation_endpoint, { token: tokens.refresh_token, client_id: pub.client_id });
    assert.equal(again.status, 200, 'revoking an unknown token is not an error');
});

await step('revocation of an access token only', async () => {
    const t = await signIn(meta, MCP, pub);
    const r = await form(meta.revocation_endpoint, { token: t.access_token, client_id: pub.client_id });
    assert.equal(r.status, 200);
    assert.equal((await mcp(MCP, t.access_token, { method: 'tools/list', params: {} }, session)).status, 401);
    assert.equal((await refresh(t.refresh_token)).status, 200, 'the refresh token survives');
});

await step('a replayed (rotated) refresh token -> invalid_grant and the grant is revoked', async () => {
    const t = await signIn(meta, MCP, pub);
    const next = await refresh(t.refresh_token);
    assert.equal(next.status, 200);
    const replay = await refresh(t.refresh_token);
    assert.equal(replay.json.error, 'invalid_grant');
    assert.equal((await refresh(next.json.refresh_token)).json.error, 'invalid_grant');
});

await step('pre-registered confidential client (client_secret_basic); session bound to client; code reuse revokes', async () => {
    conf = { client_id: PRE_ID, client_secret: PRE_SECRET };
    const t = await signIn(meta, MCP, conf, { basic: true, redirect: 'http://localhost:40123/callback' });
    const init = await mcp(MCP, t.access_token, {
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'check.mjs', version: '0' } }
    });
    assert.equal(init.status, 200);
    const s2 = init.headers.get('mcp-session-id');
    const w = await mcp(MCP, t.access_token, { method: 'tools/call', params: { name: 'whoami', arguments: {} } }, s2);
    assert.equal(JSON.parse(toolText(w)).client_id, PRE_ID);
    const someoneElse = await signIn(meta, MCP, pub);
    const other = await mcp(MCP, someoneElse.access_token, { method: 'tools/list', params: {} }, s2);
    assert.equal(other.status, 403, 'a session is bound to its client');
    // The code was used: a second exchange is refused and revokes what the code issued.
    const reuse = await form(
        meta.token_endpoint,
        { grant_type: 'authorization_code', code: t.code, code_verifier: t.verifier, redirect_uri: 'http://localhost:40123/callback', resource: MCP },
        { basic: [PRE_ID, PRE_SECRET] }
    );
    assert.equal(reuse.json.error, 'invalid_grant');
    assert.equal((await mcp(MCP, t.access_token, { method: 'tools/list', params: {} }, s2)).status, 401);
});

await step('confidential client: wrong secret -> 401 invalid_client (Basic); client_secret_post when basic registered -> invalid_client', async () => {
    const bad = await form(meta.token_endpoint, { grant_type: 'refresh_token', refresh_token: 'x', resource: MCP }, { basic: [PRE_ID, 'wrong'] });
    assert.equal(bad.status, 401);
    assert.equal(bad.json.error, 'invalid_client');
    assert.match(bad.headers.get('www-authenticate'), /^Basic /);
    const post = await form(meta.token_endpoint, { grant_type: 'refresh_token', refresh_token: 'x', resource: MCP, client_id: PRE_ID, client_secret: PRE_SECRET });
    assert.equal(post.json.error, 'invalid_client');
    const none = await form(meta.token_endpoint, { grant_type: 'refresh_token', refresh_token: 'x', resource: MCP, client_id: PRE_ID });
    assert.equal(none.json.error, 'invalid_client');
});

await step('dynamic confidential client with client_secret_post', async () => {
    const r = await fetch(meta.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'check.mjs post', redirect_uris: [REDIRECT_REGISTERED], token_endpoint_auth_method: 'client_secret_post' })
    });
    assert.equal(r.status, 201);
    const c = await r.json();
    assert.ok(c.client_secret);
    const t = await signIn(meta, MCP, c);
    assert.ok(t.access_token);
});

await step('POST /test/revoke-all -> the next refresh gets invalid_grant', async () => {
    const t = await signIn(meta, MCP, pub);
    const r = await (await fetch(test('/test/revoke-all'), { method: 'POST' })).json();
    assert.ok(r.revoked.access_tokens >= 1 && r.revoked.refresh_tokens >= 1);
    const x = await refresh(t.refresh_token);
    assert.equal(x.status, 400);
    assert.equal(x.json.error, 'invalid_grant');
    assert.equal((await mcp(MCP, t.access_token, { method: 'tools/list', params: {} }, session)).status, 401);
});

await step('POST /test/config {deny:true} -> error=access_denied with state and iss', async () => {
    await fetch(test('/test/config'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"deny":true}' });
    const a = await authorize(meta, base());
    assert.equal(a.loc.searchParams.get('error'), 'access_denied');
    assert.equal(a.loc.searchParams.get('state'), 'st-123');
    assert.equal(a.loc.searchParams.get('iss'), ISSUER);
    await fetch(test('/test/config'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"deny":false}' });
});

await step('GET /test/state records clients, requests, refreshes and revocations', async () => {
    const s = await (await fetch(test('/test/state'))).json();
    assert.equal(s.issuer, ISSUER);
    const byId = Object.fromEntries(s.clients.map(c => [c.client_id, c]));
    assert.equal(byId[pub.client_id].token_endpoint_auth_method, 'none');
    assert.equal(byId[PRE_ID].token_endpoint_auth_method, 'client_secret_basic');
    assert.equal(byId[PRE_ID].origin, 'preconfigured');
    const ok = s.authorization_requests.filter(r => r.outcome === 'code');
    assert.ok(ok.length >= 5);
    assert.ok(ok.every(r => r.code_challenge_method === 'S256' && r.resource === MCP && r.redirect_uri));
    assert.ok(s.authorization_requests.some(r => r.outcome === 'invalid_target' && r.resource === undefined));
    const methods = new Set(s.token_requests.filter(r => r.outcome === 'ok').map(r => `${r.grant_type}/${r.client_auth_method}`));
    for (const m of ['authorization_code/none', 'authorization_code/client_secret_basic', 'authorization_code/client_secret_post', 'refresh_token/none']) {
        assert.ok(methods.has(m), m);
    }
    assert.ok(s.refresh_count >= 6, String(s.refresh_count));
    assert.ok(s.revoked.some(r => r.reason === 'revocation-endpoint'));
    assert.ok(s.revoked.some(r => r.reason === 'test-revoke-all'));
    assert.equal(s.tokens.access.length, 0);
    assert.equal(s.step_up_challenges, 1);
});

await step('--deny: /authorize answers error=access_denied', async () => {
    const d = await start(['--deny']);
    const m = await (await fetch(new URL('/.well-known/oauth-authorization-server', d.info.issuer))).json();
    const reg = await (
        await fetch(m.registration_endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ redirect_uris: [REDIRECT_REGISTERED], token_endpoint_auth_method: 'none' })
        })
    ).json();
    const a = await authorize(m, { ...base(), client_id: reg.client_id, resource: d.info.mcp, state: 'deny-state' });
    assert.equal(a.status, 302);
    assert.equal(a.loc.searchParams.get('error'), 'access_denied');
    assert.equal(a.loc.searchParams.get('state'), 'deny-state');
    assert.equal(a.loc.searchParams.get('code'), null);
    d.child.kill('SIGTERM');
    const [code] = await once(d.child, 'exit');
    assert.equal(code, 0);
});

await step('logs: one stdout line, no token values on stdout or stderr', async () => {
    assert.equal(srv.stdoutLines.length, 1);
    assert.ok(secrets.size > 10);
    for (const v of secrets) assert.ok(!srv.stderr.includes(v), 'a token or code value reached stderr');
});

await step('closing stdin stops the server', async () => {
    srv.child.stdin.end();
    const timer = setTimeout(() => srv.child.kill('SIGKILL'), 5000);
    const [code, signal] = await once(srv.child, 'exit');
    clearTimeout(timer);
    assert.equal(signal, null);
    assert.equal(code, 0);
});

process.stdout.write(`\nall ${passed} checks passed\n`);
