// nncheck's ONNX Runtime worker: one Node.js process that serves model runs for the C++ engine
// (ort_backend.cpp) over its stdin and stdout, so that ORT is driven through its official
// binding, onnxruntime-node, which ships no C header.
//
// Protocol, all integers little-endian, every message a u32 byte length then its body:
//   request:  u32 model bytes length, model bytes; u32 options length, options JSON
//             ({level, intraOpThreads, log, disabled: [names], optimizedModel, skipRun});
//             u32 input count; per input:
//             u32 name length, name, i32 ONNX dtype, u32 rank, i64 dims[rank],
//             u32 data length, data (raw little-endian elements; bool one byte each).
//   response: u8 status (0 outputs, 1 the session could not be created, 2 the run failed),
//             then for 0: u32 output count; per output the same layout as an input;
//             for 1 and 2: u32 message length, message (UTF-8).
// The native library's log (severity info at session creation) goes to fd 2, which the C++
// side reads for the graph transformers that changed the graph. With `optimizedModel`, ORT
// writes the optimized model to fd 3 (an unlinked file the C++ side reads); with `skipRun` the
// session is only created, and the reply holds no outputs.
'use strict';
const fs = require('fs');
const path = require('path');

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
const ort = loadOrt();

// ONNX TensorProto data types and the typed arrays ORT's JavaScript tensors hold.
const kTypes = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const kCodes = Object.fromEntries(Object.entries(kTypes).map(([code, [name]]) => [name, +code]));

// Reads exactly n bytes from stdin, synchronously (one request at a time).
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
    if (k === 0) process.exit(0);  // the engine closed the pipe: done
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

class Reader {
  constructor(buf) { this.buf = buf; this.at = 0; }
  u32() { const v = this.buf.readUInt32LE(this.at); this.at += 4; return v; }
  i32() { const v = this.buf.readInt32LE(this.at); this.at += 4; return v; }
  i64() { const v = this.buf.readBigInt64LE(this.at); this.at += 8; return v; }
  bytes() { const n = this.u32(); const b = this.buf.subarray(this.at, this.at + n); this.at += n; return b; }
}

function readTensor(r) {
  const name = r.bytes().toString('utf8');
  const code = r.i32();
  const rank = r.u32();
  const dims = [];
  for (let i = 0; i < rank; ++i) dims.push(Number(r.i64()));
  const data = Buffer.from(r.bytes());  // a copy, aligned for the typed array
  const type = kTypes[code];
  if (!type) throw new Error('input ' + name + ': ONNX data type ' + code + ' has no ORT tensor');
  const [typeName, Arr] = type;
  const values = new Arr(data.buffer, data.byteOffset, data.length / Arr.BYTES_PER_ELEMENT);
  return [name, new ort.Tensor(typeName, typeName === 'bool' ? new Uint8Array(values) : values, dims)];
}

function u32(v) { const b = Buffer.allocUnsafe(4); b.writeUInt32LE(v); return b; }
function bytes(b) { return [u32(b.length), b]; }

function writeTensor(parts, name, t) {
  const code = kCodes[t.type];
  if (code === undefined) throw new Error('output ' + name + ' is of type ' + t.type);
  parts.push(...bytes(Buffer.from(name, 'utf8')));
  const head = Buffer.allocUnsafe(8 + 8 * t.dims.length);
  head.writeInt32LE(code, 0);
  head.writeUInt32LE(t.dims.length, 4);
  t.dims.forEach((d, i) => head.writeBigInt64LE(BigInt(d), 8 + 8 * i));
  parts.push(head);
  const d = t.data;
  parts.push(...bytes(Buffer.from(d.buffer, d.byteOffset, d.byteLength)));
}

// The parts are written one by one, never joined: an output of hundreds of MiB is not copied.
function reply(status, parts) {
  const head = Buffer.from([status]);
  writeAll(u32(head.length + parts.reduce((n, p) => n + p.length, 0)));
  writeAll(head);
  for (const p of parts) writeAll(p);
}

function failure(status, e) { reply(status, bytes(Buffer.from(String(e && e.message || e), 'utf8'))); }

async function serve() {
  for (;;) {
    const r = new Reader(readExactly(readExactly(4).readUInt32LE(0)));
    const model = r.bytes();
    const options = JSON.parse(r.bytes().toString('utf8'));
    const feeds = {};
    for (let n = r.u32(); n > 0; --n) {
      const [name, t] = readTensor(r);
      feeds[name] = t;
    }
    const sessionOptions = {
      graphOptimizationLevel: options.level,
      intraOpNumThreads: options.intraOpThreads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      // INFO: the lines 'GraphTransformer <Name> modified: 0|1', without the verbose ones.
      logSeverityLevel: options.log ? 1 : 3,
      logVerbosityLevel: 0,
    };
    if (options.optimizedModel) sessionOptions.optimizedModelFilePath = '/proc/self/fd/3';
    if (options.disabled && options.disabled.length)
      // ORT splits this config value at ';' (a ',' makes one unknown name of the whole list).
      sessionOptions.extra = {optimization: {disable_specified_optimizers: options.disabled.join(';')}};
    let session;
    try {
      session = await ort.InferenceSession.create(model, sessionOptions);
    } catch (e) {
      failure(1, e);
      continue;
    }
    if (options.skipRun) {
      reply(0, [u32(0)]);
      await session.release();
      continue;
    }
    try {
      const out = await session.run(feeds, {logSeverityLevel: 3});
      const parts = [u32(session.outputNames.length)];
      for (const name of session.outputNames) writeTensor(parts, name, out[name]);
      reply(0, parts);
    } catch (e) {
      failure(2, e);
    } finally {
      await session.release();
    }
  }
}

serve().catch((e) => {
  process.stderr.write('nncheck ort worker: ' + (e && e.stack || e) + '\n');
  process.exit(4);
});
