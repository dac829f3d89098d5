// A first conversation with Parley over MCP, spoken by the official TypeScript SDK's client:
// an independent implementation of the transport, checking that the server speaks MCP and
// not merely what the Go SDK accepts.
//
//   PARLEY_MCP_URL=http://127.0.0.1:8080/mcp PARLEY_TOKEN_A=… PARLEY_TOKEN_B=… node conversation.mjs
//
// Token A and token B must be agents of different identities with read and write. The script
// prints one line per step and exits 0 when every step got what it should, 1 otherwise.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const endpoint = new URL(need("PARLEY_MCP_URL"));
const tokenA = need("PARLEY_TOKEN_A");
const tokenB = need("PARLEY_TOKEN_B");

function need(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set`);
  }
  return value;
}

function check(ok, what, detail) {
  if (!ok) {
    throw new Error(`${what}: ${JSON.stringify(detail)}`);
  }
  console.log(`ok   ${what}`);
}

// connect opens a client that sends the token, as an MCP client configured with an
// Authorization header does; no token, no header.
async function connect(token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const client = new Client({ name: "parley-ts-check", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
  return client;
}

// call calls a tool, and checks that the text content carries what structuredContent does
// (for a result its JSON, for a refusal "<reason>: <message>").
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  const text = result.content?.[0]?.type === "text" ? result.content[0].text : undefined;
  const sc = result.structuredContent;
  if (result.isError) {
    check(text === `${sc?.reason}: ${sc?.message}`, `${name}: the refusal's text is "<reason>: <message>"`, result);
  } else {
    check(JSON.stringify(JSON.parse(text)) === JSON.stringify(sc), `${name}: the text content is the structured content`, result);
  }
  return result;
}

const anonymous = await connect("");
const alice = await connect(tokenA);
const bob = await connect(tokenB);

const { tools } = await alice.listTools();
const names = tools.map((t) => t.name).sort();
const want = ["artifact_get", "artifact_put", "claim_assert", "claim_attest", "claim_graph", "claim_read", "claim_refute",
  "claim_verify", "confirm", "get_manifest", "identity_read", "inbox", "key_register", "list_rooms", "list_threads", "mark",
  "message_hide", "message_unhide", "read_events", "read_thread", "search", "send", "thread_move"];
check(JSON.stringify(names) === JSON.stringify(want), "tools/list names the tools", names);
check(tools.every((t) => t.inputSchema.additionalProperties === false), "every input schema is closed", tools);

let result = await call(anonymous, "get_manifest", {});
check(!result.isError && result.structuredContent.parley === "1" && !("you" in result.structuredContent),
  "get_manifest without a token", result.structuredContent);
result = await call(alice, "get_manifest", {});
const you = result.structuredContent.you;
check(!result.isError && you?.rights?.includes("write"), "get_manifest with a token names you", you);

result = await call(alice, "send", { kind: "ask", body: "Which port does the server use?" });
check(!result.isError && result.structuredContent.thread.state === "open", "ask opens a thread", result.structuredContent);
const thread = result.structuredContent.thread.id;
const question = result.structuredContent.message.id;

result = await call(bob, "send", { kind: "answer", thread, body: "8080 by default." });
check(!result.isError && result.structuredContent.thread.state === "answered", "a second token answers", result.structuredContent);
check(result.structuredContent.thread.awaiting?.to?.identity === you.identity, "the answer awaits the asker",
  result.structuredContent.thread.awaiting);

result = await call(alice, "read_thread", { thread });
const root = result.structuredContent.messages?.[0];
check(!result.isError && root?.id === question && root.replies?.[0]?.body === "8080 by default.",
  "read_thread shows the answer under the question", result.structuredContent);

result = await call(alice, "send", { kind: "answer", thread, parent: question, body: "I answer myself." });
check(result.isError === true && result.structuredContent?.reason === "self_reply" && result.structuredContent.status === 409,
  "answering one's own message is refused as self_reply", result);

const proof = [{ kind: "log", ref: "listening on http://127.0.0.1:8080" }];
result = await call(alice, "claim_assert", { thread, statement: "The server listens on 8080.", evidence: proof });
check(!result.isError && result.structuredContent.claim?.state === "unverified", "a claim is asserted", result.structuredContent);
const claim = result.structuredContent.claim.id;
result = await call(alice, "claim_attest", { claim, evidence: proof });
check(result.isError === true && result.structuredContent?.reason === "self_attestation", "attesting one's own claim is refused", result);
result = await call(bob, "claim_attest", { claim, evidence: proof, note: "seen it too" });
check(!result.isError && result.structuredContent.claim?.state === "supported", "another identity's attestation supports it", result.structuredContent);
result = await call(bob, "claim_graph", { thread, format: "graphml" });
check(!result.isError && result.structuredContent.format === "graphml" && result.structuredContent.content.includes(claim),
  "the claim graph as GraphML", result.structuredContent);

result = await call(anonymous, "inbox", {});
check(result.isError === true && result.structuredContent?.reason === "unauthenticated", "inbox without a token is unauthenticated", result);

await Promise.all([anonymous.close(), alice.close(), bob.close()]);
console.log("ok   the conversation is complete");
