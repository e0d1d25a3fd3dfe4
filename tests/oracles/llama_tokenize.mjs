// llama.cpp's own tokenizer as a test oracle (tests/oracles/llama_cpp.py runs it).
//
// Reads one JSON request on stdin:
//   {"path": "model.gguf", "texts": ["...", ...], "special": false, "add_bos": false,
//    "modes": [{"special": true, "add_bos": true}, ...], "time_rounds": 0}
// loads the GGUF's vocabulary only (no tensors are read) with node-llama-cpp's prebuilt CPU
// binaries, never building or downloading anything, and prints one JSON line on stdout:
//   {"ids": [[...], ...], "vocabulary_type": "bpe", "bos": 1, "eos": 2,
//    "prepends_bos": true, "appends_eos": false, "modes": [[[...], ...], ...], "seconds": [...],
//    "load_seconds": 0.4}
// Each text is tokenized by llama.cpp's tokenize (common_tokenize with add_special off);
// `special` lets text that spells a special token become that token; `add_bos` puts the BOS
// token in front when the file asks for one (tokenizer.ggml.add_bos_token), as llama.cpp does
// before a prompt. `modes` (optional) asks for the same texts again under other flags, in the same
// process (one vocabulary load): `modes[i]` holds every text's ids under the i-th flags.
// `time_rounds` (optional, > 0) also times tokenizing all the texts (special off), that many
// rounds after one warm-up round, inside this process: `seconds` holds each round's wall time.
// `load_seconds` is the wall time of loading the file's vocabulary (node-llama-cpp's loadModel).
// {"requests": [request, ...]} asks for several files in one process (node and llama.cpp started
// once; each file loaded, answered and freed in turn) and prints {"answers": [answer, ...]}.
// llama.cpp's own log lines go to stderr; a failure exits 1 with its message there.
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function tokenizeAll(model, texts, special, addBos) {
  const bos = model.tokens.bos;
  const prependsBos = model.tokens.shouldPrependBosToken;
  return texts.map((text) => {
    const tokens = Array.from(model.tokenize(text, special), Number);
    return addBos && prependsBos && bos != null ? [Number(bos), ...tokens] : tokens;
  });
}

async function answerOne(llama, request) {
  if (typeof request.path !== "string" || !Array.isArray(request.texts)) {
    throw new Error('expected {"path": string, "texts": [string, ...]}');
  }
  const loadStart = process.hrtime.bigint();
  const model = await llama.loadModel({ modelPath: request.path, vocabOnly: true });
  const loadSeconds = Number(process.hrtime.bigint() - loadStart) / 1e9;
  try {
    const bos = model.tokens.bos;
    const ids = tokenizeAll(model, request.texts, Boolean(request.special), Boolean(request.add_bos));
    const modes = (request.modes || []).map(
      (mode) => tokenizeAll(model, request.texts, Boolean(mode.special), Boolean(mode.add_bos)));
    const seconds = [];
    const rounds = Number(request.time_rounds || 0);
    if (rounds > 0) {
      for (const text of request.texts) model.tokenize(text, false);  // (warm-up)
      for (let round = 0; round < rounds; round++) {
        const start = process.hrtime.bigint();
        for (const text of request.texts) model.tokenize(text, false);
        seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
      }
    }
    return {
      ids,
      modes,
      seconds,
      load_seconds: loadSeconds,
      vocabulary_type: model.vocabularyType,
      bos: bos == null ? null : Number(bos),
      eos: model.tokens.eos == null ? null : Number(model.tokens.eos),
      prepends_bos: model.tokens.shouldPrependBosToken,
      appends_eos: model.tokens.shouldAppendEosToken,
    };
  } finally {
    await model.dispose();
  }
}

async function main() {
  const request = await readStdin();
  const llama = await getLlama({
    gpu: false,
    build: "never",
    skipDownload: true,
    usePrebuiltBinaries: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.error,
    logger: (level, message) => process.stderr.write(`llama.cpp ${level}: ${message}\n`),
  });
  try {
    if (Array.isArray(request.requests)) {
      const answers = [];
      for (const one of request.requests) answers.push(await answerOne(llama, one));
      process.stdout.write(JSON.stringify({ answers }) + "\n");
    } else {
      process.stdout.write(JSON.stringify(await answerOne(llama, request)) + "\n");
    }
  } finally {
    await llama.dispose();
  }
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
