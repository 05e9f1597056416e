// One asked call through warden, held while a human (the Go test, through
// /api/approvals) approves it: the official MCP TypeScript SDK client over
// Streamable HTTP or stdio, or the @a2a-js/sdk client (send and stream).
// The Go test counts the approvals: one per call, the answer included.
//   node ask_once_client.mjs --mcp-http URL
//   node ask_once_client.mjs --mcp-stdio -- CMD ARGS...
//   node ask_once_client.mjs --a2a URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { a2aRequest, textOf } from "./a2a_common.mjs";
import { Checks, errText, parseArgs, withTimeout } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2));
const c = new Checks("ask_once_client");
const T = 45000; // an approval takes a moment; far below the SDKs' own 60 s

async function mcp(transport) {
  const client = new Client({ name: "warden-e2e-ask-once", version: "1.0.0" });
  await withTimeout(client.connect(transport), 15000, "initialize");
  const res = await c.step("call echo (held, approved)", () =>
    client.callTool({ name: "echo", arguments: { message: "hello once" } }, undefined, { timeout: T }),
  );
  const text = (res?.content ?? []).map((x) => x.text ?? "").join(" ");
  c.check("the approved call is answered", text.includes("hello once"), res ?? "no result");
  await client.close();
}



async function a2a(base) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  );
  const client = await withTimeout(factory.createFromUrl(base + "/"), 15000, "createFromUrl");
  const sent = await c.step("send (held, approved)", () => withTimeout(client.sendMessage(a2aRequest("wire 100 EUR")), T, "send"));
  const sentText = sent?.artifacts ? sent.artifacts.map((a) => textOf(a.parts)).join(" ") : textOf(sent?.parts);
  c.check("send: the approved message is answered", sentText.includes("wire 100 EUR"), sent ?? "no answer");
  const events = [];
  await c.step("stream (held, approved)", () =>
    withTimeout(
      (async () => {
        for await (const ev of client.sendMessageStream(a2aRequest("stream wire 5 EUR"))) events.push(ev?.payload?.$case);
      })(),
      T,
      "stream",
    ),
  );
  c.check("stream: every event arrives", events.length >= 5, events);
}

async function main() {
  if (args["mcp-http"]) {
    await mcp(new StreamableHTTPClientTransport(new URL(args["mcp-http"])));
  } else if (args["mcp-stdio"]) {
    const [command, ...rest] = args._;
    await mcp(new StdioClientTransport({ command, args: rest, stderr: "inherit", env: process.env }));
  } else if (args.a2a) {
    await a2a(String(args.a2a).replace(/\/+$/, ""));
  } else {
    console.error("usage: node ask_once_client.mjs --mcp-http URL | --mcp-stdio -- CMD... | --a2a URL");
    process.exit(2);
  }
}

main()
  .catch((err) => c.check("unexpected error", false, errText(err) + "\n" + (err?.stack ?? "")))
  .finally(() => {
    c.finish();
    setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
  });
