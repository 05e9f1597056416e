// Official MCP TypeScript SDK client over Streamable HTTP against --url
// (through warden: http://127.0.0.1:PORT/mcp/everything; directly:
// server-everything's own http://127.0.0.1:PORT/mcp), running the checks of
// mcp_common.mjs, then closing the session (HTTP DELETE).
//   node mcp_http_client.mjs --url URL [--direct]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Checks, errText, parseArgs, withTimeout } from "./lib.mjs";
import { runMcpChecks } from "./mcp_common.mjs";

const args = parseArgs(process.argv.slice(2));
const url = args.url;
const direct = Boolean(args.direct);
const c = new Checks("mcp_http_client");
if (!url) {
  console.error("usage: node mcp_http_client.mjs --url URL [--direct]");
  process.exit(2);
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "warden-e2e-http", version: "1.0.0" });
  const connected = await c.step("initialize", async () => {
    await withTimeout(client.connect(transport), 15000, "initialize");
    return true;
  });
  if (!connected) return;
  c.check("initialize", Boolean(transport.sessionId), { server: client.getServerVersion(), sessionId: transport.sessionId });
  await runMcpChecks(c, client, { direct });
  await c.step("terminate session", () => withTimeout(transport.terminateSession(), 15000, "DELETE session"));
  await client.close();
}

main()
  .catch((err) => c.check("unexpected error", false, errText(err) + "\n" + (err?.stack ?? "")))
  .finally(() => {
    c.finish();
    setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
  });
