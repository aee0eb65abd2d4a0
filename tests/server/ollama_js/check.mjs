// ollama-js (Ollama's official JavaScript client) against `confab serve`: the requests it shapes
// itself (chat whole and streamed, generate, tags, show, embed, an unknown model's error),
// summed up as JSON on stdout for tests/server/test_ollama.py to check.
import { Ollama } from 'ollama'

const host = process.env.OLLAMA_TEST_HOST
const model = process.env.OLLAMA_TEST_MODEL
const embedder = process.env.OLLAMA_TEST_EMBEDDER
const ollama = new Ollama({ host })
const options = { temperature: 0, num_predict: 4 }
const messages = [{ role: 'user', content: 'Hi' }]

const chat = await ollama.chat({ model, messages, think: false, options })
let streamed = ''
for await (const part of await ollama.chat({ model, messages, think: false, options, stream: true })) {
  streamed += part.message.content
}
const generate = await ollama.generate({ model, prompt: 'Hi', think: false, options })
const tags = await ollama.list()
const shown = await ollama.show({ model })
const embedded = await ollama.embed({ model: embedder, input: ['a cat', 'a dog'] })
let unknownModel = null
try {
  await ollama.chat({ model: 'llama3.2', messages })
} catch (error) {
  unknownModel = error.status_code
}
console.log(JSON.stringify({
  chat: chat.message.content,
  streamed,
  generate: generate.response,
  models: tags.models.map((m) => m.model),
  capabilities: shown.capabilities,
  embeddings: embedded.embeddings.length,
  unknown_model: unknownModel,
}))
