// @a2a-js/sdk client (A2A 1.0, JSON-RPC) driving the agent of a2a_server.mjs,
// directly or through warden's /a2a/{agent} proxy.
//   node a2a_client.mjs --url http://127.0.0.1:PORT/a2a/echo [--direct] [--v03]
// --v03 speaks A2A 0.3 (message/send, message/stream, tasks/get, tasks/cancel)
// with the SDK's LegacyJsonRpcTransport at the URL itself instead of the 1.0
// client the agent card selects.
// Checks: the agent card (through warden its interface URL points at the proxy),
// send, stream, a stream with a streamed event the policy denies (through warden
// the stream ends with an error before the TOP-SECRET event; --direct: the event
// arrives), a send whose answer is denied (through warden), get and cancel. A
// deny must surface as warden's own code -31900 (a JsonRpcTransportError, never
// one of A2A's errors) whose data holds the reason and the trace record id.
// Prints the JSON of lib.mjs on stdout.
import { TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { a2aRequest, textOf } from "./a2a_common.mjs";
import { Checks, errText, parseArgs, withTimeout } from "./lib.mjs";

const args = parseArgs(process.argv.slice(2));
const base = String(args.url ?? "").replace(/\/+$/, "");
const direct = Boolean(args.direct);
const v03 = Boolean(args.v03);
const c = new Checks(v03 ? "a2a_client(0.3)" : "a2a_client");
if (!base) {
  console.error("usage: node a2a_client.mjs --url URL [--direct]");
  process.exit(2);
}

const T = 15000;


// describe turns a stream event into {kind, state, text} for the report.
function describe(ev) {
  const p = ev?.payload;
  if (!p) return { kind: "empty" };
  const v = p.value;
  switch (p.$case) {
    case "task":
      return { kind: "task", state: v.status?.state, text: textOf(v.status?.message?.parts) };
    case "statusUpdate":
      return { kind: "statusUpdate", state: v.status?.state, text: textOf(v.status?.message?.parts) };
    case "artifactUpdate":
      return { kind: "artifactUpdate", text: textOf(v.artifact?.parts) };
    case "message":
      return { kind: "message", text: textOf(v.parts) };
    default:
      return { kind: String(p.$case) };
  }
}

async function collect(client, text) {
  const events = [];
  let error = null;
  let raw = null;
  try {
    await withTimeout(
      (async () => {
        for await (const ev of client.sendMessageStream(a2aRequest(text))) events.push(describe(ev));
      })(),
      T,
      "stream",
    );
  } catch (err) {
    error = errText(err);
    raw = err;
  }
  return { events, error, raw };
}

// WARDEN_DENIED is warden's own JSON-RPC code for a deny: none of A2A's
// (-32001 is TaskNotFound), so the SDK surfaces it as a JsonRpcTransportError.
const WARDEN_DENIED = -31900;

// denyOf reads warden's deny out of an SDK error: a stream's error event is
// an Error whose cause is the SDK's JSON-RPC error; a call's is that error.
// data is an object (0.3) or a list of google.rpc.ErrorInfo (1.0).
function denyOf(err) {
  const e = err?.envelopeCode !== undefined ? err : err?.cause;
  if (!e) return { name: err?.name };
  const d = Array.isArray(e.data) ? (e.data[0]?.metadata ?? {}) : (e.data ?? {});
  return { name: e.name, code: e.envelopeCode, reason: d.reason, recordId: d.recordId, wardenName: d.name };
}

function checkDeny(what, err, reason) {
  const got = denyOf(err);
  c.check(
    `${what}: warden's deny, told apart from A2A's errors, with the reason and record id`,
    got.code === WARDEN_DENIED && got.name === "JsonRpcTransportError" && got.wardenName === "DENIED_BY_WARDEN" &&
      got.reason === reason && typeof got.recordId === "string" && got.recordId !== "",
    got,
  );
}

async function main() {
  // The agent card, as a client discovers it.
  const card = await c.step("agent card", async () => {
    const res = await fetch(`${base}/.well-known/agent-card.json`);
    return res.ok ? res.json() : Promise.reject(new Error(`HTTP ${res.status}`));
  });
  if (card) {
    const urls = (card.supportedInterfaces ?? []).map((i) => i.url);
    c.check(
      "agent card interface URL points at " + (direct ? "the agent" : "the proxy"),
      urls.length > 0 && urls.every((u) => u.replace(/\/+$/, "").startsWith(base)),
      { urls },
    );
  }

  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  );
  // The 0.3 transport has the client's methods (sendMessage, sendMessageStream, getTask, cancelTask).
  const client = v03
    ? new LegacyJsonRpcTransport({ endpoint: base + "/" })
    : await c.step("client from card", () => withTimeout(factory.createFromUrl(base + "/"), T, "createFromUrl"));
  if (!client) return;

  // send: a completed task whose artifact echoes the text.
  const sent = await c.step("send", () => withTimeout(client.sendMessage(a2aRequest("hello warden")), T, "send"));
  let echoTaskId = "";
  if (sent) {
    const task = sent.status ? sent : null;
    echoTaskId = task?.id ?? "";
    const artifactText = task ? task.artifacts.map((a) => textOf(a.parts)).join(" ") : textOf(sent.parts);
    c.check("send: completed task echoing the text", task?.status?.state === TaskState.TASK_STATE_COMPLETED && artifactText.includes("Echo: hello warden"), {
      state: task?.status?.state,
      artifactText,
    });
  }

  // stream: task, three working updates, completed.
  const s = await collect(client, "stream please");
  c.check(
    "stream: all events arrive, last is completed",
    !s.error && s.events.length >= 5 && s.events.at(-1).state === TaskState.TASK_STATE_COMPLETED,
    s,
  );

  // stream with a secret event.
  const d = await collect(client, "stream a secret");
  const sawSecret = d.events.some((e) => (e.text ?? "").includes("TOP-SECRET"));
  if (direct) {
    c.check("stream with secret (direct): the TOP-SECRET event arrives", !d.error && sawSecret, { events: d.events, error: d.error });
  } else {
    c.check("stream with a denied event: the stream ends with an error before it", d.error !== null && !sawSecret, { events: d.events, error: d.error });
    checkDeny("stream with a denied event", d.raw, "TOP-SECRET content from the agent");
    c.check(
      "stream with a denied event: the events before it arrive",
      d.events.some((e) => e.text === "step 1: working"),
      d.events,
    );
  }

  // send whose answer the policy denies: a deny, not an A2A error.
  if (!direct) {
    let sendErr = null;
    try {
      await withTimeout(client.sendMessage(a2aRequest("hello TOP-SECRET")), T, "send denied");
    } catch (err) {
      sendErr = err;
    }
    checkDeny("send with a denied answer", sendErr, "TOP-SECRET content from the agent");
  }

  // get: the echo task.
  if (echoTaskId) {
    const got = await c.step("get", () => withTimeout(client.getTask({ tenant: "", id: echoTaskId }), T, "get"));
    if (got) {
      c.check("get: the echo task, completed", got.id === echoTaskId && got.status?.state === TaskState.TASK_STATE_COMPLETED, {
        id: got.id,
        state: got.status?.state,
      });
    }
  } else c.check("get", false, "no task id from send");

  // cancel: a slow task started with returnImmediately, then cancelled.
  const slow = await c.step("cancel: start slow task", () =>
    withTimeout(
      client.sendMessage(
        a2aRequest("slow job", { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }),
      ),
      T,
      "send slow",
    ),
  );
  if (slow?.id) {
    const cancelled = await c.step("cancel", () =>
      withTimeout(client.cancelTask({ tenant: "", id: slow.id, metadata: {} }), T, "cancel"),
    );
    let state = cancelled?.status?.state;
    // The executor publishes CANCELED on its next 100 ms tick; poll get briefly.
    for (let i = 0; i < 30 && state !== TaskState.TASK_STATE_CANCELED; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const t = await c.step("cancel: get after cancel", () => withTimeout(client.getTask({ tenant: "", id: slow.id }), T, "get"));
      state = t?.status?.state;
    }
    c.check("cancel: the task ends cancelled", state === TaskState.TASK_STATE_CANCELED, { state });
  } else if (slow) c.check("cancel: start slow task", false, { result: slow });
}

main()
  .catch((err) => c.check("unexpected error", false, errText(err) + "\n" + (err?.stack ?? "")))
  .finally(() => {
    c.finish();
    // Keep-alive sockets would hold the process open.
    setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
  });
