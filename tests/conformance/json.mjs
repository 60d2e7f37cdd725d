// JSON work for client.sh: node is at hand wherever the suite runs, jq may not be.
//   node json.mjs config URL FILE      writes the data folder's mcp_servers.json: one server, `conf`,
//                                      (with the context's pre-registered OAuth client, if any), and
//                                      Perch's bundled servers turned off
//   node json.mjs context-calls        the context's `toolCalls`, one `NAME<TAB>ARGUMENTS` line each
//   node json.mjs listed-calls         stdin: `perch mcp tools --json`; every tool with placeholder
//                                      values for its required arguments, one line each
//   node json.mjs schema-of TOOL       stdin: `perch mcp tools --json`; that tool's input schema
//   node json.mjs first KIND           stdin: `perch mcp list --json`; the first resource's URI
//                                      (KIND resource) or prompt's name (KIND prompt) of `conf`
import fs from 'node:fs';

const [command, ...args] = process.argv.slice(2);
const stdin = () => JSON.parse(fs.readFileSync(0, 'utf8'));
const line = (name, value) => console.log(`${name}\t${JSON.stringify(value)}`);

// A value of the schema's type (the first one listed), for a required argument.
function placeholder(schema = {}) {
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  return { number: 1, integer: 1, boolean: true, array: [], object: {}, null: null }[type] ?? 'conformance';
}

switch (command) {
  case 'config': {
    const [url, file] = args;
    const bundled = new URL('../../mcp_servers/config/servers.json', import.meta.url);
    const servers = { conf: { type: 'http', url } };
    // A client registered beforehand (auth/pre-registration) goes in the entry, as a user's would.
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
    if (context.client_id) {
      servers.conf.oauth = { clientId: context.client_id, clientSecret: context.client_secret };
    }
    for (const name of Object.keys(JSON.parse(fs.readFileSync(bundled, 'utf8')).mcpServers)) {
      servers[name] = { enabled: false };
    }
    fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
    break;
  }
  case 'context-calls': {
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
    for (const call of context.toolCalls ?? []) line(call.name, call.arguments ?? {});
    break;
  }
  case 'listed-calls': {
    for (const { tool } of stdin()) {
      const schema = tool.input_schema ?? {};
      const required = schema.required ?? [];
      const values = Object.fromEntries(required.map((n) => [n, placeholder(schema.properties?.[n])]));
      line(tool.name, values);
    }
    break;
  }
  case 'schema-of': {
    const found = stdin().find(({ tool }) => tool.name === args[0]);
    if (!found) {
      console.error(`conformance: perch does not list a tool named ${args[0]}`);
      process.exit(1);
    }
    console.log(JSON.stringify(found.tool.input_schema));
    break;
  }
  case 'first': {
    const conf = stdin().servers.find((s) => s.config.name === 'conf');
    const item = args[0] === 'resource' ? conf?.resources?.[0]?.uri : conf?.prompts?.[0]?.name;
    if (!item) {
      console.error(`conformance: perch lists no ${args[0]} of the server`);
      process.exit(1);
    }
    console.log(item);
    break;
  }
  default:
    console.error(`json.mjs: unknown command ${command}`);
    process.exit(2);
}
