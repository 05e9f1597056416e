// @a2a-js/sdk client (A2A 1.0 from the agent card, or 0.3 with --v03) through
// warden's /a2a/{agent} proxy running the built-in pack alone, to the agent of
// a2a_server.mjs: a stream whose second status update and an artifact update
// carry the AWS example key. Checks that every event arrives, that the key
// reaches the client in none of them (redact-secrets-inbound-a2a redacted it,
// as redact-secrets-in-tool-results does in an MCP result), and that the task
// read back with tasks/get does not carry it either.
//   node a2a_pack_client.mjs --url http://127.0.0.1:PORT/a2a/echo [--v03]
// Prints the JSON of lib.mjs on stdout.
import { TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { a2aRequest } from "./a2a_common.mjs";
import { Checks, errText, parseArgs, withTimeout } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2));
const base = String(args.url ?? "").replace(/\/+$/, "");
const v03 = Boolean(args.v03);
const c = new Checks(v03 ? "a2a_pack_client(0.3)" : "a2a_pack_client");
if (!base) {
  console.error("usage: node a2a_pack_client.mjs --url URL [--v03]");
  process.exit(2);
}

const T = 15000;
const KEY = "AKIAIOSFODNN7EXAMPLE";
const MARK = "[REDACTED:aws_access_key]";
const json = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? String(x) : x));


async function main() {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  );
  const client = v03
    ? new LegacyJsonRpcTransport({ endpoint: base + "/" })
    : await c.step("client from card", () => withTimeout(factory.createFromUrl(base + "/"), T, "createFromUrl"));
  if (!client) return;

  const events = [];
  let error = null;
  try {
    await withTimeout(
      (async () => {
        for await (const ev of client.sendMessageStream(a2aRequest("stream the aws key"))) events.push(ev);
      })(),
      T,
      "stream",
    );
  } catch (err) {
    error = errText(err);
  }
  const kinds = events.map((e) => e?.payload?.$case);
  const last = events.at(-1)?.payload?.value;
  c.check(
    "stream: every event arrives, the last completed",
    !error && events.length >= 6 && kinds.includes("artifactUpdate") && last?.status?.state === TaskState.TASK_STATE_COMPLETED,
    { error, kinds },
  );
  const texts = events.map(json);
  c.check("stream: the key reaches the client in no event", texts.every((t) => !t.includes(KEY)), texts.filter((t) => t.includes(KEY)));
  const marked = events.filter((e, i) => texts[i].includes(MARK)).map((e) => e?.payload?.$case);
  c.check("stream: the status update and the artifact update carry the redaction mark", marked.includes("statusUpdate") && marked.includes("artifactUpdate"), { marked });

  const taskId = events.find((e) => e?.payload?.$case === "task")?.payload?.value?.id;
  if (!taskId) {
    c.check("get", false, "no task id from the stream");
    return;
  }
  const got = await c.step("get", () => withTimeout(client.getTask({ tenant: "", id: taskId }), T, "get"));
  if (got) {
    const t = json(got);
    c.check("get: the task read back carries no key", got.id === taskId && !t.includes(KEY), { id: got.id, leaked: t.includes(KEY) });
  }
}

main()
  .catch((err) => c.check("unexpected error", false, errText(err) + "\n" + (err?.stack ?? "")))
  .finally(() => {
    c.finish();
    setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
  });
