// What the @a2a-js/sdk client scripts share: a 1.0 SendMessageRequest for a
// user's text, and the text of a list of parts.
import { randomUUID } from "node:crypto";
import { Role } from "@a2a-js/sdk";

// a2aRequest is a SendMessageRequest carrying text as a new user message
// (configuration: the request's SendMessageConfiguration, if any).
export function a2aRequest(text, configuration) {
  return {
    tenant: "",
    metadata: {},
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      taskId: "",
      contextId: "",
      extensions: [],
      metadata: {},
      referenceTaskIds: [],
    },
    configuration,
  };
}

// textOf joins the text parts of parts with spaces.
export const textOf = (parts) =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join(" ");
