// An A2A agent built with @a2a-js/sdk (A2A protocol 1.0, JSON-RPC binding) for
// warden's end-to-end tests. What it does depends on the text it receives:
//   "stream ..."  publishes a task, three "working" status updates and a final
//                 "completed" status (with "secret" in the text, the second
//                 update carries a TOP-SECRET marker a policy denies; with
//                 "aws key", the second update and an artifact before the
//                 last carry the AWS example key the built-in pack redacts);
//   "slow ..."    publishes a task and works for up to 10 s, checking for
//                 cancellation every 100 ms;
//   anything else answers with a completed task whose artifact echoes the text.
// It speaks A2A 1.0 and, through the SDK's compat layer, 0.3 at the same endpoint.
// Usage: node a2a_server.mjs [PORT]   (0 or none: a free port). Prints
// `a2a agent listening on http://127.0.0.1:PORT` once ready. SIGTERM/SIGINT exit.
import express from "express";
import { randomUUID } from "node:crypto";
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);

const textPart = (value) => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

const agentMessage = (taskId, contextId, text) => ({
  role: Role.ROLE_AGENT,
  messageId: randomUUID(),
  parts: [textPart(text)],
  taskId,
  contextId,
  extensions: [],
  metadata: {},
  referenceTaskIds: [],
});

const now = () => new Date().toISOString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function textOf(message) {
  return (message?.parts ?? [])
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .join(" ");
}

class EchoExecutor {
  cancelled = new Set();

  cancelTask = async (taskId) => {
    this.cancelled.add(taskId);
  };

  async execute(ctx, bus) {
    const { taskId, contextId, userMessage } = ctx;
    const text = textOf(userMessage);
    const status = (state, msg) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, timestamp: now(), message: msg ? agentMessage(taskId, contextId, msg) : undefined },
          metadata: {},
        }),
      );
    try {
      if (!ctx.task) {
        bus.publish(
          AgentEvent.task({
            id: taskId,
            contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
            artifacts: [],
            history: [userMessage],
            metadata: {},
          }),
        );
      }
      if (text.startsWith("stream")) {
        const secret = text.includes("secret");
        const awsKey = text.includes("aws key") ? "AKIAIOSFODNN7EXAMPLE" : "";
        for (let i = 1; i <= 3; i++) {
          await sleep(50);
          let msg = secret && i === 2 ? `step ${i}: TOP-SECRET launch code 0000` : `step ${i}: working`;
          if (awsKey && i === 2) msg = `step ${i}: found ${awsKey}`;
          status(TaskState.TASK_STATE_WORKING, msg);
        }
        if (awsKey) {
          bus.publish(
            AgentEvent.artifactUpdate({
              taskId,
              contextId,
              artifact: {
                artifactId: randomUUID(),
                name: "credentials",
                description: "",
                parts: [textPart(`AWS_ACCESS_KEY_ID=${awsKey}`)],
                metadata: {},
                extensions: [],
              },
              append: false,
              lastChunk: true,
              metadata: {},
            }),
          );
        }
        status(TaskState.TASK_STATE_COMPLETED, "stream done");
        return;
      }
      if (text.startsWith("slow")) {
        status(TaskState.TASK_STATE_WORKING, "working slowly");
        for (let i = 0; i < 100; i++) {
          if (this.cancelled.has(taskId)) {
            status(TaskState.TASK_STATE_CANCELED, "cancelled by request");
            return;
          }
          await sleep(100);
        }
        status(TaskState.TASK_STATE_COMPLETED, "slow done");
        return;
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: randomUUID(),
            name: "echo",
            description: "",
            parts: [textPart(`Echo: ${text}`)],
            metadata: {},
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: {},
        }),
      );
      status(TaskState.TASK_STATE_COMPLETED, `Echo: ${text}`);
    } finally {
      this.cancelled.delete(taskId);
    }
  }
}

const app = express();
const server = app.listen(port, "127.0.0.1", () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: "warden e2e echo agent",
    description: "Echoes, streams a few events, supports get and cancel.",
    supportedInterfaces: [
      { url: `${url}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_PROTOCOL_VERSION },
      // The same endpoint also speaks A2A 0.3 (message/send, message/stream, tasks/get, tasks/cancel).
      { url: `${url}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
    ],
    provider: { organization: "warden e2e", url: "https://example.com/warden" },
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text"],
    defaultOutputModes: ["text", "task-status"],
    skills: [
      {
        id: "echo",
        name: "Echo",
        description: "Echoes the text it is sent.",
        tags: ["echo"],
        examples: ["hello"],
        inputModes: ["text"],
        outputModes: ["text"],
        securityRequirements: [],
      },
    ],
    documentationUrl: "",
    signatures: [],
  };
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));
  console.log(`a2a agent listening on ${url}`);
});

for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
