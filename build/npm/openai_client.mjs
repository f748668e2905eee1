// openai_client.mjs BASE_URL MODEL: drives a running Ember server with the official
// `openai` npm client and prints one JSON object of what it saw, for
// app/server/client_test.go to check. Every call is one a real tool makes.
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "sk-local", maxRetries: 0 });
const out = {};
const messages = [{ role: "user", content: "Once upon a time" }];

const full = await client.chat.completions.create({ model, messages, max_tokens: 12, seed: 1, temperature: 0 });
out.chat = { object: full.object, content: full.choices[0].message.content, finish: full.choices[0].finish_reason, usage: full.usage };

const stream = await client.chat.completions.create({
	model, messages, max_tokens: 12, seed: 1, temperature: 0, stream: true, stream_options: { include_usage: true },
});
let text = "", chunks = 0, finish = null, usage = null;
for await (const c of stream) {
	chunks++;
	if (c.usage) usage = c.usage;
	for (const ch of c.choices) {
		text += ch.delta?.content ?? "";
		if (ch.finish_reason) finish = ch.finish_reason;
	}
}
out.stream = { content: text, chunks, finish, usage };

const lp = await client.chat.completions.create({ model, messages, max_tokens: 4, logprobs: true, top_logprobs: 2, n: 2, temperature: 0 });
out.logprobs = { choices: lp.choices.length, tokens: lp.choices[0].logprobs.content.length, top: lp.choices[0].logprobs.content[0].top_logprobs.length };

const comp = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 6, temperature: 0 });
out.completion = { object: comp.object, text: comp.choices[0].text, usage: comp.usage };

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

try {
	await client.chat.completions.create({ model, messages, n: 9 });
	out.error = { status: 200 };
} catch (e) {
	out.error = { status: e.status, type: e.type ?? e.error?.type ?? null, message: e.message };
}
try {
	await client.chat.completions.create({ model: "no-such-model", messages });
	out.unknownModel = { status: 200 };
} catch (e) {
	out.unknownModel = { status: e.status };
}
console.log(JSON.stringify(out));
