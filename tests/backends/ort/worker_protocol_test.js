// ONNX Runtime's Node.js worker (src/backends/ort/worker.js) against the worker protocol's test
// vectors (docs/worker-protocol/*.bin): it reads the host's messages to their values and writes
// its own byte for byte (the values of tests/backends/worker_protocol_test.cpp).
// usage: node worker_protocol_test.js WORKER_JS VECTORS_DIR
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const w = require(path.resolve(process.argv[2]));
const vectors = process.argv[3];

function body(name) {
  const frame = fs.readFileSync(path.join(vectors, name + '.bin'));
  assert.strictEqual(Number(frame.readBigUInt64LE(0)), frame.length - 8, name);
  return frame.subarray(8);
}
const join = (parts) => Buffer.concat(parts);

// The host's messages read back to their values.
const hello = new w.Reader(body('hello'));
assert.strictEqual(hello.kind(), 'H');
assert.deepStrictEqual(hello.json(), {protocol: 1});

const run = new w.Reader(body('run'));
assert.strictEqual(run.kind(), 'R');
assert.deepStrictEqual(run.json(), {configuration: 'O1', disabled: ['FuseOps'], options: {log: true}});
assert.ok(run.bytes().length > 0, 'the model');
assert.strictEqual(run.u64(), 4);
const x = w.readTensor(run), n = w.readTensor(run), b = w.readTensor(run), s = w.readTensor(run);
assert.deepStrictEqual([x.name, x.type, x.dims, Array.from(x.data)],
                       ['x', 'float32', [2, 3], [0, 0.5, 1, 1.5, 2, 2.5]]);
assert.deepStrictEqual([n.name, n.type, n.dims, Array.from(n.data)], ['n', 'int64', [], [7n]]);
assert.deepStrictEqual([b.name, b.type, b.dims, Array.from(b.data)], ['b', 'bool', [2], [1, 0]]);
assert.deepStrictEqual([s.name, s.type, s.dims, s.data], ['s', 'string', [2], ['a', 'ünï']]);
assert.strictEqual(run.at, run.buf.length, 'nothing past the run');

// The worker's messages written byte for byte (outputs in name order).
const facts = {
  protocol: 1, name: 'vectors', version: '1.0', description: "the worker protocol's test vectors",
  configurations: ['O0', 'O1'], baseline: 'O0',
  optimizations: {O0: [], O1: ['FoldConstant', 'FuseOps']}, install: 'pip install vectors',
  capabilities: {dtypes: [1, 7], opset: 17, ops: {Add: 100, Cast: 50},
                 shape_operands_must_be_initializers: true, weights_must_be_initializers: false},
  unreported_optimizations: {O1: ['Vectorize']}, fixed_optimizations: {O1: ['SimplifyShapes']},
  restart_every: 500, start_seconds: 30, shared_stage: 'the import', fresh_forks: true,
  reproducer: {language: 'python', runtime: 'Python 3.11', requirements: 'pip install vectors',
               configurations: {O0: 'def run(model_path, feeds):\n    return []\n'}},
};
assert.deepStrictEqual(join([Buffer.from('F'), ...w.json(facts)]), body('facts'));
const outputs = [
  w.tensorParts('e', {type: 'int64', dims: [0], data: new BigInt64Array(0)}),
  w.tensorParts('h', {type: 'float16', dims: [2], data: new Uint16Array([0x3c00, 0xc000])}),
  w.tensorParts('t', {type: 'string', dims: [1], data: ['ok']}),
  w.tensorParts('y', {type: 'float32', dims: [2, 3], data: new Float32Array([7, 7.5, 8, 8.5, 9, 9.5])}),
];
const note = [...w.text('note'), ...w.bytes(Buffer.from([0x62, 0x79, 0x74, 0x65, 0x73, 0, 1]))];
assert.deepStrictEqual(
    join([Buffer.from('O'), ...w.json({applied: ['FoldConstant']}), w.u64(4), ...outputs.flat(),
          w.u64(1), ...note]),
    body('outputs'));
assert.deepStrictEqual(join(w.unsupportedParts('op', 'no Loop in the frontend')), body('unsupported'));
assert.deepStrictEqual(
    join(w.errorParts('compile failed: ünïcode',
                      'Traceback (most recent call last):\n  File "engine.py", line 1')),
    body('error'));
console.log('ok: worker.js reads and writes every vector');
