// The official TypeScript SDK client against the worker: lists tools, calls every tool, and checks the
// refusals an agent meets. Usage: node tests/mcp/client.mjs <base-url> <api-key>. Prints one JSON line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, key] = process.argv.slice(2);

async function connect(authorization) {
  const headers = authorization ? { Authorization: authorization } : {};
  const client = new Client({ name: "commonplace-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

const client = await connect(`Bearer ${key}`);
const out = { protocolVersion: client.getServerVersion()?.name, calls: {} };
const { tools } = await client.listTools();
out.tools = tools.map((tool) => tool.name);
out.readOnly = tools.filter((tool) => tool.annotations?.readOnlyHint).map((tool) => tool.name);

// callTool validates structuredContent against each tool's outputSchema (Ajv): a mismatch throws.
async function call(name, args) {
  const result = await client.callTool({ name, arguments: args });
  out.calls[name] = { isError: !!result.isError, text: text(result).slice(0, 400), structured: result.structuredContent ?? null };
  return result;
}

const recipe = {
  emoji: "🥒", course: "salad", difficulty: 1, prep_min: 5, cook_min: 0, servings: 2,
  gf: 1, vegan: 1, vegetarian: 1, dairy_free: 1, nut_free: 1,
  texts: { en: { title: "TS SDK cucumber salad", summary: "Quick.", tips: "",
    ingredients: [{ q: 2, i: "cucumbers" }], steps: [{ t: "Slice the cucumbers.", f: ["knife"] }] } },
};
await call("search_recipes", { q: "hummus", limit: 3 });
await call("get_recipe", { slug: "hummus" });
const created = await call("create_recipe", { recipe });
const slug = created.structuredContent?.slug;
await call("fork_recipe", { slug: "hummus" });
await call("update_recipe", { slug, recipe, note: "Same again", version: 1 });
await call("ai_write_recipe", { prompt: "a quick lentil soup", lang: "en" });
await call("ai_change_recipe", { slug, prompt: "add mint", lang: "en" });
await call("make_diet_version", { slug, kind: "gf" });
const episodes = await call("list_episodes", { limit: 2 });
const episode = episodes.structuredContent.items[0];
const transcript = await call("get_transcript", { episode_id: episode.id, to: 120 });
const words = transcript.structuredContent.segments[0].text.split(/\s+/).slice(0, 6).join(" ");
await call("attribute_quote", { source_url: episode.source_url, quote: words });
await call("search_transcripts", { q: words.split(" ").slice(0, 2).join(" ") });
await call("speaker_stats", { episode_id: episode.id });
await call("request_episode", { source_url: "https://podcasts.example.org/ts-sdk/episode-1" });
await client.close();

// Refusals: no key, an unknown key, someone else's recipe.
const anonymous = await connect(null);
const noKey = await anonymous.callTool({ name: "create_recipe", arguments: { recipe } });
out.noKey = { isError: !!noKey.isError, text: text(noKey) };
await anonymous.close();
const stranger = await connect("Bearer cpk_0000");
const badKey = await stranger.callTool({ name: "fork_recipe", arguments: { slug: "hummus" } });
out.badKey = { isError: !!badKey.isError, text: text(badKey) };
await stranger.close();
console.log(JSON.stringify(out));
