// A scripted MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk), for the proxy
// tests. Usage: node ts_client.mjs PLAN_JSON, with CONDUIT_TS_SDK set to the folder that holds
// node_modules/@modelcontextprotocol/sdk. PLAN_JSON: {"transport": "stdio", "command": ...,
// "args": [...]} or {"transport": "http", "url": ...}, and "steps": [{"op": "list"} |
// {"op": "call", "name": ..., "arguments": {...}, "progress": true?} | {"op": "run", "argv":
// [...]} (a command, run to its end) | {"op": "wait_list_changed", "ms": N}]. Writes one JSON
// line per step to stdout: {"op": "list", "tools": [names]} | {"op": "call", "result": ...,
// "progress": [the progress notifications' params, when asked]} | {"op": "run", "status": N} |
// {"op": "wait_list_changed", "seen": N} (notifications/tools/list_changed received so far) |
// {..., "error": {code, message, data}}.
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const root = join(process.env.CONDUIT_TS_SDK, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (rel) => import(pathToFileURL(join(root, rel)).href);
const { Client } = await load("client/index.js");

const plan = JSON.parse(process.argv[2]);
let transport;
if (plan.transport === "http") {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  const headers = plan.headers || {};
  transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
} else {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "inherit", env: process.env });
}
const client = new Client({ name: "conduit-proxy-test", version: "0.0.1" }, { capabilities: {} });
const { ToolListChangedNotificationSchema } = await load("types.js");
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged += 1; });
await client.connect(transport);
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
out({ op: "connect", server: client.getServerVersion(), protocolVersion: transport.protocolVersion ?? null });
for (const step of plan.steps) {
  try {
    if (step.op === "list") {
      const result = await client.listTools();
      out({ op: "list", tools: result.tools.map((t) => t.name) });
    } else if (step.op === "call") {
      const progress = [];
      const options = step.progress ? { onprogress: (p) => progress.push(p) } : undefined;
      const result = await client.callTool({ name: step.name, arguments: step.arguments || {} }, undefined, options);
      out({ op: "call", name: step.name, result, ...(step.progress ? { progress } : {}) });
    } else if (step.op === "run") {
      const done = spawnSync(step.argv[0], step.argv.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
      out({ op: "run", status: done.status });
    } else if (step.op === "wait_list_changed") {
      const until = Date.now() + (step.ms ?? 10000);
      while (listChanged === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      out({ op: "wait_list_changed", seen: listChanged });
    }
  } catch (err) {
    out({ op: step.op, name: step.name, error: { code: err.code ?? null, message: String(err.message), data: err.data ?? null } });
  }
}
await client.close();
