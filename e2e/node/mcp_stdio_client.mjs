// Official MCP TypeScript SDK client over stdio. It launches the command after
// `--` (through warden: `<warden> mcp stdio --policy ... -- node .../server-everything/dist/index.js`)
// and runs the checks of mcp_common.mjs.
//   node mcp_stdio_client.mjs [--direct] -- CMD ARGS...
// After the checks it closes the transport (the SDK ends stdin, waits up to 2 s,
// then signals) and reports how long the command took to exit on EOF.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Checks, errText, parseArgs } from "./lib.mjs";
import { runMcpChecks } from "./mcp_common.mjs";

const args = parseArgs(process.argv.slice(2));
const [command, ...cmdArgs] = args._;
const direct = Boolean(args.direct);
const c = new Checks("mcp_stdio_client");
if (!command) {
  console.error("usage: node mcp_stdio_client.mjs [--direct] -- CMD ARGS...");
  process.exit(2);
}

async function main() {
  const transport = new StdioClientTransport({ command, args: cmdArgs, stderr: "inherit", env: process.env });
  const client = new Client({ name: "warden-e2e-stdio", version: "1.0.0" });
  const connected = await c.step("initialize", async () => {
    await client.connect(transport);
    return true;
  });
  if (!connected) return;
  c.check("initialize", true, client.getServerVersion());
  await runMcpChecks(c, client, { direct });

  const pid = transport.pid;
  const started = Date.now();
  let exited = false;
  const proc = transport._process; // the child; close() clears it
  proc?.once("exit", () => (exited = true));
  await client.close();
  const ms = Date.now() - started;
  // The SDK waits 2 s for the child to exit after EOF before it signals it.
  c.check(
    direct ? "close (direct): informational" : "close: warden exits on stdin EOF (stopping its child)",
    direct || ms < 1900,
    { pid, ms, exited },
  );
}

main()
  .catch((err) => c.check("unexpected error", false, errText(err) + "\n" + (err?.stack ?? "")))
  .finally(() => {
    c.finish();
    setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
  });
