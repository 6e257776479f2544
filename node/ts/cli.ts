#!/usr/bin/env node
/**
 * The `sitefile` command of the npm package: one command for npm users. `generate` runs here,
 * in Node; every other command (`serve`, `check`, `bundle`, `resolve`, `cache`, `kv`,
 * `workspace`) is the native `sitefile` program that this platform's package ships
 * (`sitefile-linux-x64-gnu`, …), run with the same arguments, standard streams and exit code;
 * SIGINT, SIGTERM and SIGHUP sent to this process reach it.
 */

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { runGenerate } from "./generate/cli";

const USAGE = `usage: sitefile <command> [options]

Commands:
  generate   write the schema, section registry and content bundle of a Next.js app
  serve      serve a site over HTTP (page views, page JSON, admin protocol, edge cache)
  check      report every content problem, named by block
  bundle     write the canonical content bundle
  resolve    resolve one URL and print the page
  cache      print what the edge would do with a request
  kv         Fast Deploy's snapshot tools
  workspace  the workspace API server and its keys

Run \`sitefile <command> --help\` for a command's options.
`;

/** The variable that names a `sitefile` program to run instead of the platform package's. */
const PROGRAM_VARIABLE = "SITEFILE_BINARY";

/** The platform packages that carry a native program, by `process.platform-process.arch`. */
const NATIVE_PACKAGES: Record<string, { gnu: string; musl: string }> = {
  "linux-x64": { gnu: "sitefile-linux-x64-gnu", musl: "sitefile-linux-x64-musl" },
  "linux-arm64": { gnu: "sitefile-linux-arm64-gnu", musl: "sitefile-linux-arm64-musl" },
};

/** Whether this Node runs on musl libc (its report names no glibc). */
function isMusl(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime === undefined;
}

/** The native program's path, or the message that says why there is none. */
export function nativeProgram(): { program: string } | { error: string } {
  const named = process.env[PROGRAM_VARIABLE];
  if (named !== undefined && named !== "") {
    return fs.existsSync(named) ? { program: named } : { error: `${PROGRAM_VARIABLE}=${named}: no such file` };
  }
  const platform = `${process.platform}-${process.arch}`;
  const packages = NATIVE_PACKAGES[platform];
  if (packages === undefined) {
    return {
      error:
        `this command is the native sitefile program, which is built for Linux on x64 and arm64 (glibc or musl); ` +
        `on ${platform} the package runs its WebAssembly engine, which has the Node API and \`sitefile generate\` but no server. ` +
        `Build the program from the sitefile repository (\`cargo install --path server\`) and name it in ${PROGRAM_VARIABLE}.`,
    };
  }
  const order = isMusl() ? [packages.musl, packages.gnu] : [packages.gnu, packages.musl];
  for (const name of order) {
    let dir: string;
    try {
      dir = path.dirname(require.resolve(`${name}/package.json`));
    } catch {
      continue;
    }
    const program = path.join(dir, "sitefile");
    if (fs.existsSync(program)) return { program };
  }
  return {
    error:
      `the native sitefile program for ${platform} is not installed: its package (${order[0]}) is an optional ` +
      `dependency of sitefile, skipped when optional dependencies are omitted (--omit=optional, --no-optional). ` +
      `Reinstall with them: npm install sitefile`,
  };
}

/** Runs the native program with `args`; resolves with the exit code this process should take. */
function runNative(program: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: "inherit" });
    const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of signals) process.on(signal, forward);
    child.on("error", (error) => {
      process.stderr.write(`sitefile: could not run ${program}: ${error.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      for (const name of signals) process.off(name, forward);
      if (signal !== null) {
        // Die of the same signal, as a shell expects of the program it ran.
        process.kill(process.pid, signal);
        return;
      }
      resolve(code ?? 1);
    });
  });
}

/** Parses the command line and runs the command; resolves with the exit code. */
async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    (command === undefined ? process.stderr : process.stdout).write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === "generate") return runGenerate(rest);
  const native = nativeProgram();
  if ("error" in native) {
    process.stderr.write(`sitefile ${command}: ${native.error}\n`);
    return 1;
  }
  return runNative(native.program, args);
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
