// The release rehearsal's conformance harness (tests/release/worker.test.js): the conformance
// suites (tests/conformance/) run through the package's WebAssembly engine inside workerd, with
// the runners the Node suites use (tests/node/conformance-runner.js, copied beside this file as a
// CommonJS module: the example is `"type": "module"`).
// The test posts a suite's case files; the answer is how many cases ran and what failed.
import engine from "sitefile-wasm32-wasi/sitefile.workerd.js";
import { runSuite } from "./conformance-runner.cjs";

export default {
  async fetch(request) {
    const { suite, files } = await request.json();
    return Response.json(runSuite(engine, suite, files));
  },
};
