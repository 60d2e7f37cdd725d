#!/usr/bin/env node
// An MCP server behind OAuth sign-in, for tests: one process on 127.0.0.1 is both the
// authorization server (the official TypeScript SDK's handlers, with an in-memory provider)
// and the protected MCP resource at /mcp (the SDK's Streamable HTTP transport).
// See README.md beside this file. stdout carries exactly one line (the URLs); logs go to stderr.

import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { fstatSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

import express from 'express';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createOAuthMetadata, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
    AccessDeniedError,
    InvalidClientError,
    InvalidClientMetadataError,
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
    InvalidTokenError,
    OAuthError,
    UnauthorizedClientError
} from '@modelcontextprotocol/sdk/server/auth/errors.js';

// ---------------------------------------------------------------------------------------------
// Logging: stdout is reserved for the single start line; everything else goes to stderr.

const log = (...parts) => process.stderr.write(`[oauth-mcp] ${parts.join(' ')}\n`);
console.log = console.info = console.debug = (...a) => process.stderr.write(a.map(String).join(' ') + '\n');

// ---------------------------------------------------------------------------------------------
// Command line.

function usage(message) {
    if (message) process.stderr.write(`oauth-mcp: ${message}\n`);
    process.stderr.write(
        'usage: node tests/oauth-mcp/server.mjs [--port N] [--token-ttl SECONDS] [--deny]\n' +
            '           [--client-id ID [--client-secret S] [--client-auth-method M] [--redirect-uri URI]...]\n'
    );
    process.exit(2);
}

let args;
try {
    args = parseArgs({
        options: {
            port: { type: 'string', default: '0' },
            'token-ttl': { type: 'string', default: '3600' },
            deny: { type: 'boolean', default: false },
            'client-id': { type: 'string' },
            'client-secret': { type: 'string' },
            'client-auth-method': { type: 'string' },
            'redirect-uri': { type: 'string', multiple: true },
            help: { type: 'boolean', short: 'h', default: false }
        },
        strict: true,
        allowPositionals: false
    }).values;
} catch (e) {
    usage(e.message);
}
if (args.help) usage();

const PORT = Number(args.port);
if (!Number.isInteger(PORT) || PORT < 0 || PORT > 65535) usage(`bad --port ${args.port}`);
const config = {
    deny: args.deny,
    token_ttl: Number(args['token-ttl'])
};
if (!Number.isInteger(config.token_ttl) || config.token_ttl <= 0) usage(`bad --token-ttl ${args['token-ttl']}`);
if (args['client-secret'] !== undefined && args['client-id'] === undefined) usage('--client-secret needs --client-id');

const BASE_SCOPE = 'mcp:tools';
const NOTES_SCOPE = 'notes:read';
const SCOPES_SUPPORTED = [BASE_SCOPE, NOTES_SCOPE];
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];
const CODE_TTL_MS = 120_000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

// ---------------------------------------------------------------------------------------------
// Helpers.

class InvalidTargetError extends OAuthError {
    static errorCode = 'invalid_target'; // RFC 8707 section 2
}
class InvalidRedirectUriError extends OAuthError {
    static errorCode = 'invalid_redirect_uri'; // RFC 7591 section 3.2.2
}

const newToken = () => randomBytes(32).toString('base64url');
// A short, stable, non-reversible name for a token: what the logs and /test/state refer to.
const fingerprint = token => createHash('sha256').update(token).digest('hex').slice(0, 12);
const now = () => Date.now();
const iso = ms => new Date(ms).toISOString();

function safeEqual(a, b) {
    const x = Buffer.from(String(a));
    const y = Buffer.from(String(b));
    return x.length === y.length && timingSafeEqual(x, y);
}

function isLoopbackAddress(addr) {
    return addr === '127.0.0.1' || addr === '::1' || addr === '::ffff:127.0.0.1';
}

// application/x-www-form-urlencoded decoding, as RFC 6749 section 2.3.1 asks for the Basic pair.
function formDecode(s) {
    return decodeURIComponent(s.replace(/\+/g, ' '));
}

// ---------------------------------------------------------------------------------------------
// What the fixture has seen (GET /test/state).

const seen = {
    authorization_requests: [],
    token_requests: [],
    revocation_requests: [],
    registrations: 0,
    refresh_count: 0,
    step_up_challenges: 0,
    revoked: []
};

// ---------------------------------------------------------------------------------------------
// The in-memory provider (the SDK's OAuthServerProvider interface).

class FixtureProvider {
    constructor({ issuer, resource }) {
        this.issuer = issuer; // exact string of the metadata's `issuer`
        this.resource = resource; // exact string of the MCP URL
        this.clients = new Map(); // client_id -> client info (+ _origin)
        this.codes = new Map(); // code -> { client_id, scopes, resource, codeChallenge, redirectUri, redirectUriSent, expiresAt, grantId }
        this.usedCodes = new Map(); // code -> grantId (single use; reuse revokes what it issued)
        this.access = new Map(); // token -> { client_id, scopes, resource, expiresAt, grantId, issuedAt }
        this.refresh = new Map(); // token -> { client_id, scopes, resource, grantId, issuedAt }
        this.rotated = new Map(); // old refresh token -> grantId (replay detection)
        const provider = this;
        this.clientsStore = {
            async getClient(clientId) {
                return provider.clients.get(clientId);
            },
            async registerClient(client) {
                // The SDK's handler has validated the metadata and generated id and secret.
                const method = client.token_endpoint_auth_method ?? 'client_secret_basic'; // RFC 7591 default
                if (!AUTH_METHODS.includes(method)) {
                    throw new InvalidClientMetadataError(`token_endpoint_auth_method ${method} is not supported`);
                }
                for (const uri of client.redirect_uris) {
                    const u = new URL(uri);
                    const loopback = u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
                    if (u.protocol !== 'https:' && !loopback) {
                        throw new InvalidRedirectUriError(`redirect URIs must be https or loopback http: ${uri}`);
                    }
                    if (u.hash) throw new InvalidRedirectUriError(`redirect URI must not have a fragment: ${uri}`);
                }
                if (client.scope !== undefined) {
                    const unknown = client.scope.split(' ').filter(s => s && !SCOPES_SUPPORTED.includes(s));
                    if (unknown.length) throw new InvalidClientMetadataError(`unknown scope ${unknown.join(' ')}`);
                }
                const info = { ...client, token_endpoint_auth_method: method };
                provider.clients.set(info.client_id, { ...info, _origin: 'dynamic' });
                seen.registrations++;
                log(`registered client ${info.client_id} (${method}) redirect_uris=${info.redirect_uris.join(',')}`);
                return info;
            }
        };
    }

    addPreregistered({ clientId, clientSecret, authMethod, redirectUris }) {
        const method = authMethod ?? (clientSecret ? 'client_secret_basic' : 'none');
        if (!AUTH_METHODS.includes(method)) usage(`bad --client-auth-method ${method}`);
        if ((method === 'none') !== (clientSecret === undefined)) {
            usage('--client-secret goes with client_secret_basic/client_secret_post, and none without one');
        }
        this.clients.set(clientId, {
            client_id: clientId,
            client_secret: clientSecret,
            client_id_issued_at: Math.floor(now() / 1000),
            client_name: 'pre-registered test client',
            redirect_uris: redirectUris,
            token_endpoint_auth_method: method,
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            _origin: 'preconfigured'
        });
    }

    // /authorize: the SDK has checked client_id, redirect_uri (RFC 8252 loopback port rule),
    // response_type=code, code_challenge and code_challenge_method=S256. Errors thrown here
    // become error redirects (with state; the /authorize wrapper adds iss).
    async authorize(client, params, res) {
        const raw = (res.req.method === 'POST' ? res.req.body : res.req.query) ?? {};
        const record = res.locals.authorizationRecord;
        if (config.deny) throw new AccessDeniedError('The resource owner denied the request (--deny)');
        if (params.resource === undefined) throw new InvalidTargetError('The resource parameter is required');
        if (params.resource.href !== this.resource) {
            throw new InvalidTargetError(`Unknown resource ${params.resource.href}; this server protects ${this.resource}`);
        }
        let scopes = (params.scopes ?? []).filter(Boolean);
        if (scopes.length === 0) scopes = [BASE_SCOPE];
        const unknown = scopes.filter(s => !SCOPES_SUPPORTED.includes(s));
        if (unknown.length) throw new InvalidScopeError(`Unknown scope ${unknown.join(' ')}`);
        scopes = [...new Set(scopes)];

        const code = newToken();
        this.codes.set(code, {
            client_id: client.client_id,
            scopes,
            resource: params.resource.href,
            codeChallenge: params.codeChallenge,
            redirectUri: params.redirectUri,
            redirectUriSent: raw.redirect_uri !== undefined,
            expiresAt: now() + CODE_TTL_MS,
            grantId: randomUUID()
        });
        if (record) record.scopes_granted = scopes;
        const target = new URL(params.redirectUri);
        target.searchParams.set('code', code);
        if (params.state !== undefined) target.searchParams.set('state', params.state);
        target.searchParams.set('iss', this.issuer); // RFC 9207
        res.redirect(302, target.href);
    }

    #liveCode(client, code) {
        const data = this.codes.get(code);
        if (!data) {
            if (this.usedCodes.has(code)) {
                // OAuth 2.1 section 4.1.3: a reused code is refused and what it issued is revoked.
                const grantId = this.usedCodes.get(code);
                const n = this.revokeGrant(grantId, 'authorization-code-reuse');
                log(`authorization code reused; revoked ${n} token(s) of its grant`);
                throw new InvalidGrantError('Authorization code was already used');
            }
            throw new InvalidGrantError('Unknown authorization code');
        }
        if (data.client_id !== client.client_id) throw new InvalidGrantError('Authorization code was issued to another client');
        if (data.expiresAt < now()) {
            this.codes.delete(code);
            throw new InvalidGrantError('Authorization code has expired');
        }
        return data;
    }

    // Called by the SDK's token handler before exchangeAuthorizationCode, for its own PKCE check.
    async challengeForAuthorizationCode(client, code) {
        return this.#liveCode(client, code).codeChallenge;
    }

    async exchangeAuthorizationCode(client, code, _codeVerifier, redirectUri, resource) {
        const data = this.#liveCode(client, code);
        // RFC 6749 section 4.1.3: redirect_uri must be present and identical if the
        // authorization request carried one.
        if (data.redirectUriSent && redirectUri === undefined) {
            throw new InvalidRequestError('redirect_uri is required: the authorization request had one');
        }
        if (redirectUri !== undefined && redirectUri !== data.redirectUri) {
            throw new InvalidGrantError('redirect_uri does not match the authorization request');
        }
        if (resource === undefined) throw new InvalidTargetError('The resource parameter is required');
        if (resource.href !== this.resource || resource.href !== data.resource) {
            throw new InvalidTargetError(`resource ${resource.href} is not the one authorized (${data.resource})`);
        }
        this.codes.delete(code);
        this.usedCodes.set(code, data.grantId);
        return this.#issue(client.client_id, data.scopes, data.resource, data.grantId);
    }

    async exchangeRefreshToken(client, refreshToken, scopes, resource) {
        const data = this.refresh.get(refreshToken);
        if (!data) {
            if (this.rotated.has(refreshToken)) {
                // Refresh token rotation (OAuth 2.1 section 4.3.1): a replayed, already rotated
                // token means two parties hold the grant; revoke it.
                const n = this.revokeGrant(this.rotated.get(refreshToken), 'refresh-token-replay');
                log(`rotated refresh token ${fingerprint(refreshToken)} replayed; revoked ${n} token(s) of its grant`);
                throw new InvalidGrantError('Refresh token was already used (rotated)');
            }
            throw new InvalidGrantError('Unknown or revoked refresh token');
        }
        if (data.client_id !== client.client_id) throw new InvalidGrantError('Refresh token was issued to another client');
        if (resource === undefined) throw new InvalidTargetError('The resource parameter is required');
        if (resource.href !== data.resource) {
            throw new InvalidTargetError(`resource ${resource.href} is not the one authorized (${data.resource})`);
        }
        let granted = data.scopes;
        if (scopes !== undefined) {
            const asked = scopes.filter(Boolean);
            const extra = asked.filter(s => !data.scopes.includes(s));
            if (extra.length) throw new InvalidScopeError(`Scope ${extra.join(' ')} exceeds the grant`);
            if (asked.length) granted = [...new Set(asked)];
        }
        this.refresh.delete(refreshToken);
        this.rotated.set(refreshToken, data.grantId);
        seen.refresh_count++;
        // The narrowed scope applies to the new access token; the grant (refresh token) keeps its own.
        return this.#issue(client.client_id, granted, data.resource, data.grantId, data.scopes);
    }

    #issue(clientId, scopes, resource, grantId, refreshScopes = scopes) {
        const accessToken = newToken();
        const refreshToken = newToken();
        const issuedAt = now();
        this.access.set(accessToken, {
            client_id: clientId,
            scopes,
            resource,
            grantId,
            issuedAt,
            expiresAt: issuedAt + config.token_ttl * 1000
        });
        this.refresh.set(refreshToken, { client_id: clientId, scopes: refreshScopes, resource, grantId, issuedAt });
        log(
            `issued access ${fingerprint(accessToken)} + refresh ${fingerprint(refreshToken)} to ${clientId} ` +
                `scope="${scopes.join(' ')}" ttl=${config.token_ttl}s`
        );
        return {
            access_token: accessToken,
            token_type: 'Bearer',
            expires_in: config.token_ttl,
            refresh_token: refreshToken,
            scope: scopes.join(' ')
        };
    }

    async verifyAccessToken(token) {
        const data = this.access.get(token);
        if (!data) throw new InvalidTokenError('Unknown or revoked access token');
        if (data.expiresAt <= now()) throw new InvalidTokenError('Access token has expired');
        return {
            token,
            clientId: data.client_id,
            scopes: data.scopes,
            expiresAt: Math.floor(data.expiresAt / 1000),
            resource: new URL(data.resource)
        };
    }

    // RFC 7009. Unknown tokens are not an error (section 2.2); a token of another client is refused.
    async revokeToken(client, { token, token_type_hint }) {
        const order = token_type_hint === 'refresh_token' ? ['refresh', 'access'] : ['access', 'refresh'];
        for (const kind of order) {
            const data = this[kind].get(token);
            if (!data) continue;
            if (data.client_id !== client.client_id) {
                throw new UnauthorizedClientError('The token was not issued to this client');
            }
            if (kind === 'access') {
                this.#drop('access', token, 'revocation-endpoint');
            } else {
                // Revoking a refresh token revokes the grant: it and the access tokens issued under it.
                this.#drop('refresh', token, 'revocation-endpoint');
                this.revokeGrant(data.grantId, 'revocation-endpoint (refresh token revoked)');
            }
            return;
        }
        log(`revocation of an unknown token by ${client.client_id} (ignored, RFC 7009 section 2.2)`);
    }

    #drop(kind, token, reason) {
        const data = this[kind].get(token);
        if (!data) return false;
        this[kind].delete(token);
        seen.revoked.push({
            type: kind === 'access' ? 'access_token' : 'refresh_token',
            id: fingerprint(token),
            token,
            client_id: data.client_id,
            reason,
            at: iso(now())
        });
        log(`revoked ${kind} ${fingerprint(token)} of ${data.client_id} (${reason})`);
        return true;
    }

    revokeGrant(grantId, reason) {
        let n = 0;
        for (const kind of ['access', 'refresh']) {
            for (const [token, data] of [...this[kind]]) {
                if (data.grantId === grantId && this.#drop(kind, token, reason)) n++;
            }
        }
        return n;
    }

    revokeAll(reason) {
        const counts = { access_tokens: 0, refresh_tokens: 0 };
        for (const token of [...this.access.keys()]) if (this.#drop('access', token, reason)) counts.access_tokens++;
        for (const token of [...this.refresh.keys()]) if (this.#drop('refresh', token, reason)) counts.refresh_tokens++;
        this.codes.clear();
        return counts;
    }

    expireAccess() {
        let n = 0;
        const t = now();
        for (const data of this.access.values()) {
            if (data.expiresAt > t) {
                data.expiresAt = t;
                n++;
            }
        }
        return n;
    }
}

// ---------------------------------------------------------------------------------------------
// Start: listen first (the issuer and the resource carry the port), then build the routes.

const httpServer = http.createServer();
await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(PORT, '127.0.0.1', () => {
        httpServer.off('error', reject);
        resolve();
    });
});
const { port } = httpServer.address();
const origin = `http://127.0.0.1:${port}`;
const mcpUrl = new URL('/mcp', origin);
const issuerUrl = new URL('/', origin);

const provider = new FixtureProvider({ issuer: issuerUrl.href, resource: mcpUrl.href });
if (args['client-id'] !== undefined) {
    provider.addPreregistered({
        clientId: args['client-id'],
        clientSecret: args['client-secret'],
        authMethod: args['client-auth-method'],
        redirectUris: args['redirect-uri'] ?? ['http://127.0.0.1/callback', 'http://localhost/callback']
    });
}

// RFC 8414 metadata: the SDK's (which accepts an http issuer on 127.0.0.1/localhost), extended.
const oauthMetadata = {
    ...createOAuthMetadata({ provider, issuerUrl, scopesSupported: SCOPES_SUPPORTED }),
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    response_modes_supported: ['query'],
    authorization_response_iss_parameter_supported: true
};
const resourceMetadataUrl = new URL('/.well-known/oauth-protected-resource/mcp', origin).href;
const resourceName = 'Perch OAuth test MCP server';

const app = createMcpExpressApp({ host: '127.0.0.1' }); // Host header check + express.json()
app.disable('x-powered-by');

app.use((req, res, next) => {
    const path = req.path; // no query string: it can hold codes
    res.on('finish', () => log(`${req.method} ${path} -> ${res.statusCode}`));
    next();
});

// -- /authorize: record the request, and add RFC 9207 `iss` to every authorization response,
//    including the error redirects the SDK's handler builds itself.
const authorizePath = new URL(oauthMetadata.authorization_endpoint).pathname;
app.use(authorizePath, express.urlencoded({ extended: false }), (req, res, next) => {
    const p = (req.method === 'POST' ? req.body : req.query) ?? {};
    const record = {
        at: iso(now()),
        method: req.method,
        client_id: p.client_id,
        response_type: p.response_type,
        scope: p.scope,
        resource: p.resource,
        code_challenge_method: p.code_challenge_method,
        code_challenge_present: p.code_challenge !== undefined,
        redirect_uri: p.redirect_uri,
        state_present: p.state !== undefined,
        scopes_granted: undefined,
        outcome: undefined,
        status: undefined
    };
    seen.authorization_requests.push(record);
    res.locals.authorizationRecord = record;
    const redirect = res.redirect.bind(res);
    res.redirect = (a, b) => {
        const [status, url] = typeof a === 'number' ? [a, b] : [302, a];
        let target = url;
        try {
            const u = new URL(url);
            if (!u.searchParams.has('iss')) u.searchParams.set('iss', issuerUrl.href);
            target = u.href;
            record.outcome = u.searchParams.has('code') ? 'code' : (u.searchParams.get('error') ?? 'redirect');
        } catch {
            /* not absolute: leave it */
        }
        return redirect(status, target);
    };
    const json = res.json.bind(res);
    res.json = body => {
        if (body && typeof body.error === 'string') record.outcome = body.error;
        return json(body);
    };
    res.on('finish', () => (record.status = res.statusCode));
    next();
});
app.use(authorizePath, authorizationHandler({ provider, rateLimit: false }));

// -- Client authentication shim for /token and /revoke. The SDK's authenticateClient reads
//    client_id/client_secret from the form body only (client_secret_post and none); this adds
//    client_secret_basic (RFC 6749 section 2.3.1) by checking the Authorization header here and
//    handing the pair on in the body. It also enforces one method per request and the method
//    each client registered.
function clientAuthShim() {
    return async (req, res, next) => {
        const body = req.body ?? (req.body = {});
        const header = req.headers.authorization;
        let method = 'none';
        const fail = (status, error, description) => {
            if (status === 401) res.set('WWW-Authenticate', `Basic realm="oauth-mcp", charset="UTF-8"`);
            res.locals.clientAuthMethod = method;
            res.status(status).json({ error, error_description: description });
        };
        if (header !== undefined) {
            const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
            if (!m) return fail(401, 'invalid_client', 'Unsupported Authorization header; use Basic');
            method = 'client_secret_basic';
            const decoded = Buffer.from(m[1], 'base64').toString('utf8');
            const colon = decoded.indexOf(':');
            if (colon < 0) return fail(401, 'invalid_client', 'Malformed Basic credentials');
            let id, secret;
            try {
                id = formDecode(decoded.slice(0, colon));
                secret = formDecode(decoded.slice(colon + 1));
            } catch {
                return fail(401, 'invalid_client', 'Malformed Basic credentials');
            }
            if (body.client_secret !== undefined) {
                return fail(400, 'invalid_request', 'Use one client authentication method, not Basic and client_secret');
            }
            if (body.client_id !== undefined && body.client_id !== id) {
                return fail(400, 'invalid_request', 'client_id in the body differs from the Basic credentials');
            }
            const client = await provider.clientsStore.getClient(id);
            if (!client || !client.client_secret || !safeEqual(client.client_secret, secret)) {
                return fail(401, 'invalid_client', 'Client authentication failed');
            }
            body.client_id = id;
            body.client_secret = secret;
        } else if (body.client_secret !== undefined) {
            method = 'client_secret_post';
        }
        res.locals.clientAuthMethod = method;
        const client = typeof body.client_id === 'string' ? await provider.clientsStore.getClient(body.client_id) : undefined;
        if (client && client.token_endpoint_auth_method !== method) {
            return fail(
                method === 'client_secret_basic' ? 401 : 400,
                'invalid_client',
                `Client registered token_endpoint_auth_method ${client.token_endpoint_auth_method} but used ${method}`
            );
        }
        next();
    };
}

function recordTokenEndpoint(list, fields) {
    return (req, res, next) => {
        if (req.method !== 'POST') return next();
        const body = req.body ?? {};
        const record = { at: iso(now()), ...fields(body), client_auth_method: undefined, status: undefined, outcome: undefined };
        list.push(record);
        const json = res.json.bind(res);
        res.json = payload => {
            record.outcome = payload && typeof payload.error === 'string' ? payload.error : 'ok';
            return json(payload);
        };
        res.on('finish', () => {
            record.status = res.statusCode;
            record.client_auth_method = res.locals.clientAuthMethod;
            if (record.client_id === undefined) record.client_id = req.body?.client_id;
        });
        next();
    };
}

const tokenPath = new URL(oauthMetadata.token_endpoint).pathname;
app.use(
    tokenPath,
    express.urlencoded({ extended: false }),
    recordTokenEndpoint(seen.token_requests, b => ({
        grant_type: b.grant_type,
        client_id: b.client_id,
        resource: b.resource,
        redirect_uri: b.redirect_uri,
        scope: b.scope,
        code_verifier_present: b.code_verifier !== undefined
    })),
    clientAuthShim(),
    tokenHandler({ provider, rateLimit: false })
);

const revokePath = new URL(oauthMetadata.revocation_endpoint).pathname;
app.use(
    revokePath,
    express.urlencoded({ extended: false }),
    recordTokenEndpoint(seen.revocation_requests, b => ({ client_id: b.client_id, token_type_hint: b.token_type_hint })),
    clientAuthShim(),
    revocationHandler({ provider, rateLimit: false })
);

const registerPath = new URL(oauthMetadata.registration_endpoint).pathname;
app.use(registerPath, clientRegistrationHandler({ clientsStore: provider.clientsStore, rateLimit: false }));

// RFC 8414 AS metadata and RFC 9728 protected resource metadata at /.well-known/oauth-protected-resource/mcp.
app.use(
    mcpAuthMetadataRouter({
        oauthMetadata,
        resourceServerUrl: mcpUrl,
        scopesSupported: SCOPES_SUPPORTED,
        resourceName
    })
);
// ... and the same document at the root well-known path (the MCP spec's fallback).
app.use(
    '/.well-known/oauth-protected-resource',
    metadataHandler({
        resource: mcpUrl.href,
        authorization_servers: [oauthMetadata.issuer],
        scopes_supported: SCOPES_SUPPORTED,
        resource_name: resourceName
    })
);

// ---------------------------------------------------------------------------------------------
// The protected MCP resource.

const sdkBearer = requireBearerAuth({
    verifier: provider,
    requiredScopes: [BASE_SCOPE],
    resourceMetadataUrl,
    expectedResource: mcpUrl
});
// RFC 6750 section 3.1: a request without any credentials gets a challenge with no error code;
// a bad token gets the SDK's error="invalid_token" challenge.
function bearer(req, res, next) {
    if (req.headers.authorization === undefined) {
        res.set('WWW-Authenticate', `Bearer resource_metadata="${resourceMetadataUrl}", scope="${BASE_SCOPE}"`);
        res.status(401).json({ error: 'invalid_request', error_description: 'Authorization required' });
        return;
    }
    return sdkBearer(req, res, next);
}

// The MCP spec requires servers to validate Origin (DNS rebinding); only loopback origins pass.
function checkOrigin(req, res, next) {
    const o = req.headers.origin;
    if (o !== undefined) {
        let ok = false;
        try {
            ok = LOOPBACK_HOSTS.has(new URL(o).hostname);
        } catch {
            ok = false;
        }
        if (!ok) {
            res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: `Origin ${o} not allowed` }, id: null });
            return;
        }
    }
    next();
}

// Step-up at the HTTP layer (MCP authorization, scope challenge handling): a tools/call of
// secret_note without notes:read is answered 403 before it reaches the MCP server.
const TOOL_SCOPES = { secret_note: [BASE_SCOPE, NOTES_SCOPE] };
function stepUp(req, res, next) {
    const messages = Array.isArray(req.body) ? req.body : [req.body];
    for (const m of messages) {
        if (!m || m.method !== 'tools/call') continue;
        const needed = TOOL_SCOPES[m.params?.name];
        if (!needed) continue;
        if (needed.every(s => req.auth.scopes.includes(s))) continue;
        seen.step_up_challenges++;
        const description = `Tool ${m.params.name} requires scope ${needed.join(' ')}`;
        res.set(
            'WWW-Authenticate',
            `Bearer error="insufficient_scope", scope="${needed.join(' ')}", ` +
                `resource_metadata="${resourceMetadataUrl}", error_description="${description}"`
        );
        res.status(403).json({ error: 'insufficient_scope', error_description: description });
        return;
    }
    next();
}

function text(value) {
    return { content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }] };
}

function makeMcpServer() {
    const server = new McpServer({ name: 'perch-oauth-test', version: '1.0.0' });
    server.registerTool(
        'whoami',
        { description: 'The OAuth client and scopes of the access token this call was made with.' },
        async extra => text({ client_id: extra.authInfo?.clientId, scopes: extra.authInfo?.scopes ?? [] })
    );
    server.registerTool(
        'secret_note',
        { description: `A note only a token with scope ${NOTES_SCOPE} may read.` },
        async extra => {
            if (!extra.authInfo?.scopes.includes(NOTES_SCOPE)) {
                return { ...text(`scope ${NOTES_SCOPE} required`), isError: true };
            }
            return text('The secret note: the perch is in the birch.');
        }
    );
    return server;
}

const sessions = new Map(); // session id -> { transport, server, clientId }

function jsonRpcError(res, status, code, message) {
    res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function sessionFor(req, res) {
    const id = req.headers['mcp-session-id'];
    if (id === undefined) return undefined;
    const s = sessions.get(id);
    if (!s) {
        jsonRpcError(res, 404, -32001, 'Session not found');
        return null;
    }
    if (s.clientId !== req.auth.clientId) {
        jsonRpcError(res, 403, -32000, 'Session belongs to another client');
        return null;
    }
    return s;
}

app.post('/mcp', checkOrigin, bearer, stepUp, async (req, res) => {
    const s = sessionFor(req, res);
    if (s === null) return;
    let transport = s?.transport;
    if (!transport) {
        if (!isInitializeRequest(req.body)) return jsonRpcError(res, 400, -32000, 'Bad Request: no valid session ID');
        const server = makeMcpServer();
        const clientId = req.auth.clientId;
        transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: id => {
                sessions.set(id, { transport, server, clientId });
                log(`MCP session ${id} for ${clientId}`);
            }
        });
        transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await server.connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
});

async function existingSession(req, res) {
    if (req.headers['mcp-session-id'] === undefined) return jsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id required');
    const s = sessionFor(req, res);
    if (!s) return;
    await s.transport.handleRequest(req, res);
}
app.get('/mcp', checkOrigin, bearer, existingSession);
app.delete('/mcp', checkOrigin, bearer, existingSession);

// ---------------------------------------------------------------------------------------------
// Test surface (loopback only, not part of any spec).

const test = express.Router();
test.use((req, res, next) => {
    if (!isLoopbackAddress(req.socket.remoteAddress)) return res.status(403).json({ error: 'loopback only' });
    res.set('Cache-Control', 'no-store');
    next();
});
test.get('/state', (req, res) => {
    const t = now();
    res.json({
        issuer: issuerUrl.href,
        mcp: mcpUrl.href,
        config: { ...config },
        clients: [...provider.clients.values()].map(c => ({
            client_id: c.client_id,
            origin: c._origin,
            client_name: c.client_name,
            token_endpoint_auth_method: c.token_endpoint_auth_method,
            redirect_uris: c.redirect_uris,
            grant_types: c.grant_types,
            scope: c.scope
        })),
        registrations: seen.registrations,
        authorization_requests: seen.authorization_requests,
        token_requests: seen.token_requests,
        revocation_requests: seen.revocation_requests,
        refresh_count: seen.refresh_count,
        step_up_challenges: seen.step_up_challenges,
        tokens: {
            access: [...provider.access].map(([token, d]) => ({
                id: fingerprint(token),
                token,
                client_id: d.client_id,
                scopes: d.scopes,
                resource: d.resource,
                issued_at: iso(d.issuedAt),
                expires_at: iso(d.expiresAt),
                expired: d.expiresAt <= t
            })),
            refresh: [...provider.refresh].map(([token, d]) => ({
                id: fingerprint(token),
                token,
                client_id: d.client_id,
                scopes: d.scopes,
                resource: d.resource,
                issued_at: iso(d.issuedAt)
            }))
        },
        revoked: seen.revoked,
        sessions: [...sessions].map(([id, s]) => ({ id, client_id: s.clientId }))
    });
});
test.post('/revoke-all', (req, res) => {
    const counts = provider.revokeAll('test-revoke-all');
    log(`/test/revoke-all: ${counts.access_tokens} access, ${counts.refresh_tokens} refresh`);
    res.json({ revoked: counts });
});
test.post('/expire-access', (req, res) => {
    const n = provider.expireAccess();
    log(`/test/expire-access: ${n} access token(s) expired`);
    res.json({ expired: n });
});
test.post('/config', (req, res) => {
    const b = req.body ?? {};
    if (b.deny !== undefined) {
        if (typeof b.deny !== 'boolean') return res.status(400).json({ error: 'deny must be a boolean' });
        config.deny = b.deny;
    }
    if (b.token_ttl !== undefined) {
        if (!Number.isInteger(b.token_ttl) || b.token_ttl <= 0) return res.status(400).json({ error: 'token_ttl must be a positive integer' });
        config.token_ttl = b.token_ttl;
    }
    log(`/test/config: ${JSON.stringify(config)}`);
    res.json({ config: { ...config } });
});
app.use('/test', test);

app.use((req, res) => res.status(404).json({ error: 'not_found' }));
// eslint-disable-next-line no-unused-vars
app.use((err, req, res, _next) => {
    log(`error on ${req.method} ${req.path}: ${err?.stack ?? err}`);
    if (!res.headersSent) res.status(err?.status ?? 500).json({ error: 'server_error', error_description: String(err?.message ?? err) });
});

httpServer.on('request', app);

// ---------------------------------------------------------------------------------------------
// Ready: the one stdout line. Then stop on SIGTERM/SIGINT, or when a piped stdin closes.

process.stdout.write(JSON.stringify({ mcp: mcpUrl.href, issuer: oauthMetadata.issuer }) + '\n');
log(`listening on ${origin} (issuer ${oauthMetadata.issuer}, resource ${mcpUrl.href}, token ttl ${config.token_ttl}s${config.deny ? ', --deny' : ''})`);

let stopping = false;
async function shutdown(why) {
    if (stopping) return;
    stopping = true;
    log(`stopping (${why})`);
    const force = setTimeout(() => process.exit(0), 2000);
    force.unref();
    for (const { transport } of sessions.values()) await transport.close().catch(() => {});
    httpServer.close(() => process.exit(0));
    httpServer.closeAllConnections();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGHUP', () => shutdown('SIGHUP'));

let stdinIsPipe = false;
try {
    const st = fstatSync(0);
    stdinIsPipe = st.isFIFO() || st.isSocket();
} catch {
    stdinIsPipe = false;
}
if (stdinIsPipe) {
    process.stdin.on('end', () => shutdown('stdin closed'));
    process.stdin.on('close', () => shutdown('stdin closed'));
    process.stdin.on('error', () => shutdown('stdin error'));
    process.stdin.resume();
}
