// nncheck's ONNX Runtime worker: one Node.js process that serves model runs for the C++ engine
// (ort_backend.cpp) through its official binding, onnxruntime-node, which ships no C header. It
// speaks nncheck's worker protocol, version 1 (docs/worker-protocol.md): frames of a u64 length
// and a body on stdin and stdout, a hello answered with the engine's facts, then runs.
//
// The run request's configuration is ORT's ("level=all,threads=1"), its `disabled` the graph
// transformers and rewrite rules to switch off; its options ask for ORT's log on stderr (`log`:
// the lines "GraphTransformer <Name> modified: 0|1", which the C++ side reads), for the
// optimized model as an attachment (`optimized_model`), or for the session alone (`skip_run`).
// A session that cannot be made is an unsupported reply of category "session"; a run that fails
// is an error reply.
'use strict';
const fs = require('fs');
const path = require('path');

const kProtocol = 1;

function loadOrt() {
  const dir = process.env.NNCHECK_ORT_NODE_MODULES;
  try {
    return require(dir ? path.join(dir, 'onnxruntime-node') : 'onnxruntime-node');
  } catch (e) {
    process.stderr.write('nncheck ort worker: cannot load onnxruntime-node from ' +
                         (dir || 'the module path') + ': ' + e.message + '\n');
    process.exit(3);
  }
}

function ortVersion() {
  try {
    const dir = process.env.NNCHECK_ORT_NODE_MODULES;
    return require(path.join(dir || '', 'onnxruntime-node', 'package.json')).version;
  } catch (e) {
    return '';
  }
}

// ONNX TensorProto data types and the arrays ORT's JavaScript tensors hold.
const kTypes = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 8: ['string', Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};
const kCodes = Object.fromEntries(Object.entries(kTypes).map(([code, [name]]) => [name, +code]));

// --- frames ---

// Reads exactly n bytes from stdin, synchronously (one request at a time); null at its end.
function readExactly(n) {
  const buf = Buffer.allocUnsafe(n);
  let got = 0;
  while (got < n) {
    let k;
    try {
      k = fs.readSync(0, buf, got, n - got, null);
    } catch (e) {
      if (e.code === 'EAGAIN') continue;
      throw e;
    }
    if (k === 0) return null;
    got += k;
  }
  return buf;
}

function writeAll(buf) {
  let put = 0;
  while (put < buf.length) {
    try {
      put += fs.writeSync(1, buf, put, buf.length - put);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

function u32(v) { const b = Buffer.allocUnsafe(4); b.writeUInt32LE(v); return b; }
function i32(v) { const b = Buffer.allocUnsafe(4); b.writeInt32LE(v); return b; }
function u64(v) { const b = Buffer.allocUnsafe(8); b.writeBigUInt64LE(BigInt(v)); return b; }
function bytes(b) { return [u64(b.length), b]; }
function text(s) { return bytes(Buffer.from(s, 'utf8')); }

// JSON as the protocol writes it: compact, object keys sorted.
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  return v;
}
function json(v) { return text(JSON.stringify(canonical(v))); }

// A frame of `parts`, written one by one, never joined: an output of hundreds of MiB is not
// copied.
function send(parts) {
  writeAll(u64(parts.reduce((n, p) => n + p.length, 0)));
  for (const p of parts) writeAll(p);
}

class Reader {
  constructor(buf) { this.buf = buf; this.at = 0; }
  take(n) {
    if (this.at + n > this.buf.length) throw new Error('a request is cut short');
    const b = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return b;
  }
  kind() { return String.fromCharCode(this.take(1)[0]); }
  i32() { return this.take(4).readInt32LE(0); }
  u32() { return this.take(4).readUInt32LE(0); }
  u64() { return Number(this.take(8).readBigUInt64LE(0)); }
  i64() { return this.take(8).readBigInt64LE(0); }
  bytes() { return this.take(this.u64()); }
  json() { return JSON.parse(this.bytes().toString('utf8')); }
}

// A tensor as {name, type, dims, data}: what ORT's Tensor takes and gives.
function readTensor(r) {
  const name = r.bytes().toString('utf8');
  const code = r.i32();
  const rank = r.u32();
  const dims = [];
  for (let i = 0; i < rank; ++i) dims.push(Number(r.i64()));
  const type = kTypes[code];
  if (!type) throw new Error('tensor ' + name + ': ONNX data type ' + code + ' has no ORT tensor');
  const [typeName, Arr] = type;
  if (typeName === 'string') {
    const data = [];
    for (let n = dims.reduce((a, b) => a * b, 1); n > 0; --n) data.push(r.bytes().toString('utf8'));
    return {name, type: typeName, dims, data};
  }
  const raw = Buffer.from(r.bytes());  // a copy, aligned for the typed array
  const data = new Arr(raw.buffer, raw.byteOffset, raw.length / Arr.BYTES_PER_ELEMENT);
  return {name, type: typeName, dims, data};
}

function tensorParts(name, t) {
  const code = kCodes[t.type];
  if (code === undefined) throw new Error('tensor ' + name + ' is of type ' + t.type);
  const parts = [...text(name), i32(code), u32(t.dims.length)];
  const dims = Buffer.allocUnsafe(8 * t.dims.length);
  t.dims.forEach((d, i) => dims.writeBigInt64LE(BigInt(d), 8 * i));
  parts.push(dims);
  const d = t.data;
  if (t.type === 'string') {
    for (const s of d) parts.push(...text(s));
  } else {
    parts.push(...bytes(Buffer.from(d.buffer, d.byteOffset, d.byteLength)));
  }
  return parts;
}

// --- the engine ---

const kLevels = ['disabled', 'basic', 'extended', 'all'];

// A standalone reproducer's run() at a configuration (nncheck repro writes the rest): ORT's own
// API, what a maintainer runs.
function reproducer(level, threads) {
  return [
    "const ort = require('onnxruntime-node');",
    '',
    'async function run(modelPath, feeds) {',
    '  const session = await ort.InferenceSession.create(modelPath, {',
    `    graphOptimizationLevel: '${level}',`,
    `    intraOpNumThreads: ${threads},`,
    '    interOpNumThreads: 1,',
    "    executionMode: 'sequential',",
    '  });',
    '  const inputs = {};  // defined, not assigned: an input may be named __proto__',
    '  for (const [name, t] of Object.entries(feeds)) {',
    '    const value = new ort.Tensor(t.type, t.data, t.dims);',
    '    Object.defineProperty(inputs, name, {value, enumerable: true});',
    '  }',
    '  const results = await session.run(inputs);',
    '  return session.outputNames.map((name) => results[name]);',
    '}',
    '',
  ].join('\n');
}

function facts() {
  const configurations = kLevels.map((l) => 'level=' + l + ',threads=1');
  return {
    protocol: kProtocol,
    name: 'ort',
    version: ortVersion(),
    description: 'ONNX Runtime through onnxruntime-node',
    configurations,
    baseline: 'level=disabled,threads=1',
    optimizations: {},
    install: 'scripts/install-deps.sh of nncheck\'s source tree',
    reproducer: {
      language: 'javascript',
      runtime: 'Node.js ' + process.versions.node,
      requirements: 'npm install onnxruntime-node@' + (ortVersion() || 'latest'),
      configurations: Object.fromEntries(
          kLevels.map((l, i) => [configurations[i], reproducer(l, 1)])),
    },
  };
}

// "level=all,threads=2" as session options.
function configured(configuration) {
  const c = {level: 'all', threads: 1};
  for (const item of configuration.split(',').filter((s) => s)) {
    const [key, value] = item.split('=');
    if (key === 'level') c.level = value;
    else if (key === 'threads') c.threads = Number(value);
  }
  return c;
}

function unsupportedParts(category, message) {
  return [Buffer.from('U'), ...json({category, message})];
}
function errorParts(message, trace) {
  return [Buffer.from('E'), ...json({message, trace})];
}
function unsupported(category, e) {
  send(unsupportedParts(category, String(e && e.message || e)));
}
function failed(e) {
  send(errorParts(String(e && e.message || e), String(e && e.stack || '')));
}

async function run(ort, r) {
  const request = r.json();
  const model = r.bytes();
  const feeds = {};
  for (let n = r.u64(); n > 0; --n) {
    const t = readTensor(r);
    const value = new ort.Tensor(t.type, t.type === 'bool' ? new Uint8Array(t.data) : t.data, t.dims);
    // Defined, not assigned: an input named __proto__ is an input, not the object's prototype.
    Object.defineProperty(feeds, t.name, {value, enumerable: true});
  }
  const options = request.options || {};
  const c = configured(request.configuration || '');
  const optimizedPath = path.join(process.cwd(), 'optimized.onnx');
  const sessionOptions = {
    graphOptimizationLevel: c.level,
    intraOpNumThreads: c.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    // INFO: the lines 'GraphTransformer <Name> modified: 0|1', without the verbose ones.
    logSeverityLevel: options.log ? 1 : 3,
    logVerbosityLevel: 0,
  };
  if (options.optimized_model) sessionOptions.optimizedModelFilePath = optimizedPath;
  const disabled = request.disabled || [];
  if (disabled.length)
    // ORT splits this config value at ';' (a ',' makes one unknown name of the whole list).
    sessionOptions.extra = {optimization: {disable_specified_optimizers: disabled.join(';')}};
  let session;
  try {
    session = await ort.InferenceSession.create(model, sessionOptions);
  } catch (e) {
    unsupported('session', e);
    return;
  }
  try {
    const outputs = [];
    if (!options.skip_run) {
      const out = await session.run(feeds, {logSeverityLevel: 3});
      for (const name of session.outputNames) outputs.push(tensorParts(name, out[name]));
    }
    const attachments = [];
    if (options.optimized_model && fs.existsSync(optimizedPath)) {
      attachments.push([...text('optimized_model'), ...bytes(fs.readFileSync(optimizedPath))]);
      fs.unlinkSync(optimizedPath);
    }
    send([Buffer.from('O'), ...json({applied: []}), u64(outputs.length), ...outputs.flat(),
          u64(attachments.length), ...attachments.flat()]);
  } catch (e) {
    failed(e);
  } finally {
    await session.release();
  }
}

async function serve() {
  const ort = loadOrt();
  for (;;) {
    const head = readExactly(8);
    if (!head) process.exit(0);  // the engine closed the pipe: done
    const body = readExactly(Number(head.readBigUInt64LE(0)));
    if (!body) process.exit(0);
    const r = new Reader(body);
    const kind = r.kind();
    if (kind === 'H') {
      const hello = r.json();
      // A host of another version is answered all the same: the facts say which this speaks.
      void hello;
      send([Buffer.from('F'), ...json(facts())]);
    } else if (kind === 'R') {
      await run(ort, r);
    } else {
      throw new Error('a request of kind ' + JSON.stringify(kind) + ', which the protocol has not');
    }
  }
}

// What the tests of the protocol's vectors use (tests/backends/ort/worker_protocol_test.js).
module.exports = {Reader, readTensor, tensorParts, json, text, bytes, u64, unsupportedParts, errorParts};

if (require.main === module)
  serve().catch((e) => {
    process.stderr.write('nncheck ort worker: ' + (e && e.stack || e) + '\n');
    process.exit(4);
  });
