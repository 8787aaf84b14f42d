// Drives an MCP server with the official TypeScript SDK client, as most hosts do.
//
//   node run_plan.mjs COMMAND [ARG...] < plan.json
//
// COMMAND ARG... starts the server over stdio. The plan is a JSON list of
// {"tool", "arguments", "expect": "ok" | "error"}. Prints one JSON report on stdout:
// the protocol version asked for and the one the server answered, whether each
// listing (tools, resources, resource templates, prompts) threw, and for each call
// whether the client threw (the SDK validates structured content against the tool's
// output schema, errors included), isError, and whether structured content came back.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function failure(error) {
  return { threw: true, error: error instanceof Error ? error.message : String(error), code: error?.code ?? null };
}

// Every page of a list request; {threw, error} when one throws.
async function listAll(request, key) {
  const items = [];
  let cursor;
  try {
    do {
      const page = await request(cursor === undefined ? undefined : { cursor });
      items.push(...page[key]);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (error) {
    return failure(error);
  }
  return { threw: false, items };
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) throw new Error("usage: node run_plan.mjs COMMAND [ARG...] < plan.json");
  const plan = JSON.parse(await readStdin());

  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  // The client tells a transport that has this hook which version the server answered.
  let negotiated = null;
  transport.setProtocolVersion = (version) => { negotiated = version; };
  const client = new Client({ name: "repoctx-ts-client-test", version: "1.0.0" });
  await client.connect(transport);

  const report = {
    protocol: { requested: LATEST_PROTOCOL_VERSION, negotiated },
    server: client.getServerVersion() ?? null,
    capabilities: client.getServerCapabilities() ?? {},
    listing: {},
    calls: [],
  };
  const caps = report.capabilities;
  // listTools also gives the client each tool's output schema, which callTool checks results against.
  const tools = await listAll((p) => client.listTools(p), "tools");
  report.listing.tools = { ...tools, items: tools.items?.map((t) => ({ name: t.name, outputSchema: "outputSchema" in t })) };
  const lists = [
    ["resources", caps.resources, (p) => client.listResources(p), "resources"],
    ["resource_templates", caps.resources, (p) => client.listResourceTemplates(p), "resourceTemplates"],
    ["prompts", caps.prompts, (p) => client.listPrompts(p), "prompts"],
  ];
  for (const [name, advertised, request, key] of lists) {
    if (!advertised) {
      report.listing[name] = { advertised: false };
      continue;
    }
    const listed = await listAll(request, key);
    report.listing[name] = { advertised: true, ...listed, items: listed.items?.map((x) => x.uri ?? x.uriTemplate ?? x.name) };
  }

  for (const { tool, arguments: args, expect } of plan) {
    const entry = { tool, arguments: args, expect, threw: false, error: null, code: null };
    try {
      const result = await client.callTool({ name: tool, arguments: args });
      entry.isError = result.isError === true;
      entry.structured = result.structuredContent !== undefined;
      entry.text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n").slice(0, 400);
    } catch (error) {
      Object.assign(entry, failure(error));
    }
    report.calls.push(entry);
  }
  await client.close();
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
}

main().catch((error) => {
  process.stderr.write(`run_plan.mjs: ${error?.stack ?? error}\n`);
  process.exit(1);
});
